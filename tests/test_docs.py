"""Every Python block of the README and docs pages runs (blocks of a page share one
namespace, in order). A block followed by an output block that starts with an exception
name (``KeyError: ...``) is a deliberate error demonstration and must raise exactly that,
with the message the page shows (wrapped as the page wraps it, ``...`` for any text; see
``same_message``: two messages had drifted from their pages unnoticed).
A block followed by an ``output`` block (a fence with the info string ``output``) must print
that text: the words exactly (whitespace aside), the numbers to the precision printed on
the page, a line ``...`` standing for any number of lines; see ``same_output``.

Three pages run with the slow tests. The nodal page integrates a pendulum 2000 fixed steps
and with IDAS at rtol 1e-10 (measured 18 to 39 s on the shared 2-core machine under load,
where each of the step's small LAPACK solves waits for OpenBLAS's threads; some 6 s with
OPENBLAS_NUM_THREADS=1); the export page compiles two FMUs with the C compiler and runs
them in fmpy (8 to 12 s), the command-line page starts Python processes (7 to 9 s): their
paths are tested in the default run by tests/export/. The other 13 pages take 12 to 20 s."""

import contextlib
import io
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
SLOW_PAGES = {"nodal.md", "export.md", "cli.md"}
FENCE = re.compile(r"```(\w*)\n(.*?)```", re.S)
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
TOKEN = re.compile(NUMBER.pattern + r"|[^\s\d.+-]+|[.+-]")


def _tokens(line: str) -> list[str]:
    """A line as numbers and the words and symbols between them (whitespace dropped). A
    run time at the end of an integrator summary (``1 integrator call(s), 0.011 s``) is
    dropped: it is the one figure that changes from run to run."""
    if "integrator call(s)" in line:
        line = re.sub(NUMBER.pattern + r" s$", "", line.rstrip())
    return TOKEN.findall(line)


def _same_number(got: str, shown: str) -> bool:
    """``got`` equals ``shown`` to the precision printed on the page (rounded to its last
    digit, with a tenth of a unit of slack; an integer exactly). A small figure printed in
    scientific notation is an error or a residual, whose last digits depend on the
    platform's arithmetic: within a factor of 3."""
    g, s = float(got), float(shown)
    if g == s:
        return True
    mantissa, _, exponent = shown.lower().lstrip("+-").partition("e")
    decimals = len(mantissa.partition(".")[2])
    if exponent and abs(s) < 1e-4:
        return s != 0 and g / s > 0 and 1 / 3 <= g / s <= 3
    return abs(g - s) <= 0.6 * 10.0 ** (int(exponent or 0) - decimals) + 1e-12 * abs(s)


def _same_line(got: str, shown: str) -> bool:
    a, b = _tokens(got), _tokens(shown)
    return len(a) == len(b) and all(
        _same_number(x, y) if NUMBER.fullmatch(y) and NUMBER.fullmatch(x) else x == y
        for x, y in zip(a, b, strict=True))


def same_output(got: str, shown: str) -> bool:
    """The printed text ``got`` is what the page shows: line by line (blank lines ignored),
    where a line ``...`` of the page stands for any number of printed lines."""
    want = [ln for ln in shown.splitlines() if ln.strip()]
    have = [ln for ln in got.splitlines() if ln.strip()]

    def match(i: int, j: int) -> bool:
        if i == len(want):
            return j == len(have)
        if want[i].strip() == "...":
            return any(match(i + 1, k) for k in range(j, len(have) + 1))
        return j < len(have) and _same_line(have[j], want[i]) and match(i + 1, j + 1)

    return match(0, 0)


def same_message(got: str, shown: str) -> bool:
    """An error's text is the page's, wrapped as the page wraps it (line breaks are
    spaces): word for word with the numbers to the page's precision (``same_output``'s
    rules for one line), where a ``...`` of the page stands for any text."""
    flat = " ".join(shown.split())
    pieces = [p.strip() for p in re.split(r"(?:^|\s)\.\.\.(?=[\s;,)]|$)", flat)]
    text = " ".join(got.split())
    if len(pieces) == 1:
        return _same_line(text, flat)
    at = 0
    for piece in pieces:
        k = text.find(piece, at)
        if k < 0:
            return False
        at = k + len(piece)
    return text.startswith(pieces[0]) and text.endswith(pieces[-1])


def test_same_output_rules():
    assert same_output("a 342.8571428385432\n\nb", "a 342.857\nb")
    assert not same_output("a 342.86", "a 342.857")
    assert same_output("err 1.9e-06 m", "err 1.7e-06 m")
    assert not same_output("err 1.7e-05 m", "err 1.7e-06 m")
    assert same_output("x\ny\nz\nw", "x\n...\nw")
    assert not same_output("x\ny", "x\ny\nz")
    assert same_output("idas: 2 integrator call(s), 0 event(s), 1.555 s",
                       "idas: 2 integrator call(s), 0 event(s), 0.340 s")
    assert not same_output("states (3): a, b", "states (2): a, b")
    assert same_message("E: a b c d", "E: a b\nc d")
    assert same_message("E: x = 1; y = 2; z = 3 end", "E: x = 1; ...; z = 3\nend")
    assert not same_message("E: x = 1; y = 2", "E: x = 1; y = 3")
    assert not same_message("E: a b c", "E: a b")


@pytest.mark.parametrize("page", [pytest.param(p, marks=pytest.mark.slow)
                                  if p.name in SLOW_PAGES else p for p in PAGES],
                         ids=lambda p: p.name)
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
        nxt_lang, nxt = fences[k + 1] if k + 1 < len(fences) else ("", "")
        nxt = nxt.strip()
        expected = re.match(r"^([A-Za-z_.]*Error_?|[A-Za-z_.]*Warning)(?=[:\s]|$)", nxt)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            if expected and expected.group(1).split(".")[-1].rstrip("_").endswith("Error"):
                with pytest.raises(Exception) as info:
                    exec(compile(code, f"{page.name}[{k}]", "exec"), ns)
                assert type(info.value).__name__ == expected.group(1).split(".")[-1]
                shown = f"{expected.group(1)}: {info.value}"
                assert same_message(shown, nxt), (
                    f"{page.name}, code block {k}: it raised\n{shown}\nand the page shows\n{nxt}")
            else:
                exec(compile(code, f"{page.name}[{k}]", "exec"), ns)
        if nxt_lang == "output":
            assert same_output(out.getvalue(), nxt), (
                f"{page.name}, code block {k}: it printed\n{out.getvalue()}\n"
                f"and the page shows\n{nxt}")
        ran += 1
    assert ran >= 1
