"""Every Python block of the README and docs pages runs (blocks of a page share one
namespace, in order). A block followed by an output block that starts with an exception
name (``KeyError: ...``) is a deliberate error demonstration and must raise exactly that."""

import contextlib
import io
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"```(\w*)\n(.*?)```", re.S)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_code_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # plots and files land in a scratch folder
    monkeypatch.setattr(sys, "path", [str(ROOT / "examples"), *sys.path])
    os.environ.setdefault("MPLBACKEND", "Agg")
    fences = FENCE.findall(page.read_text())
    ns: dict = {"__name__": "docs"}
    ran = 0
    for k, (lang, code) in enumerate(fences):
        if lang != "python":
            continue
        nxt = fences[k + 1][1].strip() if k + 1 < len(fences) else ""
        expected = re.match(r"^([A-Za-z_.]*Error_?|[A-Za-z_.]*Warning)(?=[:\s]|$)", nxt)
        with contextlib.redirect_stdout(io.StringIO()):
            if expected and expected.group(1).split(".")[-1].rstrip("_").endswith("Error"):
                with pytest.raises(Exception) as info:
                    exec(compile(code, f"{page.name}[{k}]", "exec"), ns)
                assert type(info.value).__name__ == expected.group(1).split(".")[-1]
            else:
                exec(compile(code, f"{page.name}[{k}]", "exec"), ns)
        ran += 1
    assert ran >= 1
