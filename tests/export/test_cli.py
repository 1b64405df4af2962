"""The command line, run as a user runs it: in a subprocess (``python -m acausal``)."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
DC = f"{ROOT / 'examples' / 'dc_motor.py'}:DCMotorDrive"


def acausal(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "acausal", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_simulate_with_parameters_plot_and_csv(tmp_path):
    out = acausal("simulate", DC, "--t-end", "0.3", "--param", "resistor.R=0.5",
                  "--plot", "out.png", "--csv", "out.csv", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "<Result ok: t = 0..0.3 s" in out.stdout
    # steady state with R = 0.5: w_load = (V - R i)/(k n), i = T/(n k) = 1.25 A
    line = next(ln for ln in out.stdout.splitlines() if ln.strip().startswith("load.w ="))
    w = float(line.split("=")[1])
    assert w == pytest.approx((24.0 - 0.5 * 1.25) / 0.06 / 8.0, rel=1e-3)
    assert (tmp_path / "out.png").stat().st_size > 10_000
    table = np.genfromtxt(tmp_path / "out.csv", delimiter=",", names=True)
    assert table["time"][-1] == 0.3 and len(table) == 501
    assert table["loadw"][-1] == pytest.approx(w, rel=1e-9)  # genfromtxt drops the dot


def test_simulate_with_a_chosen_solver(tmp_path):
    """``--solver`` and ``--max-step`` reach ``simulate``: the same steady state by an
    explicit and an implicit method; an unknown name lists the backends."""
    finals = {}
    for solver in ("dop853", "idas"):
        out = acausal("simulate", DC, "--t-end", "0.3", "--solver", solver, "--max-step",
                      "0.01", "-o", "load.w", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert f"solver {solver} " in out.stdout
        line = next(ln for ln in out.stdout.splitlines() if ln.strip().startswith("load.w ="))
        finals[solver] = float(line.split("=")[1])
    # (both at rtol 1e-6 on a motor at its steady state: w = (V - R i)/(k n), i = 1.25 A)
    assert finals["dop853"] == pytest.approx(finals["idas"], rel=1e-5)
    assert finals["idas"] == pytest.approx((24.0 - 0.6 * 1.25) / 0.06 / 8.0, rel=1e-3)
    out = acausal("simulate", DC, "--t-end", "0.3", "--solver", "rk4", cwd=tmp_path)
    assert out.returncode != 0
    assert "unknown solver 'rk4'; available: auto, cvodes-adams" in out.stderr


def test_info_prints_the_structure_report(tmp_path):
    out = acausal("info", DC, "--graph", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Structure report" in out.stdout and "states (5)" in out.stdout
    assert "Linear graph:" in out.stdout and "resistor.R=0.6" in out.stdout


def test_export_saved_model_and_fmu(tmp_path):
    out = acausal("export", DC, "--save", "dc.acm", "--casadi", "dae.casadi", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    # the saved model simulates in another process without the example on the path
    out = acausal("simulate", "dc.acm", "--t-end", "0.1", "-o", "load.w,inductor.i",
                  cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "load.w = " in out.stdout and "inductor.i = " in out.stdout
    import casadi as cs

    f = cs.Function.load(str(tmp_path / "dae.casadi"))
    assert f.name_in() == ["x", "z", "p", "t"]
    from acausal.codegen import find_compiler

    try:
        find_compiler()
    except Exception:  # noqa: BLE001 - no C compiler here: the FMU part is skipped
        return
    out = acausal("export", DC, "--fmu", "dc.fmu", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "dc.fmu").stat().st_size > 1000


def test_errors_are_one_message_without_traceback(tmp_path):
    out = acausal("simulate", f"{ROOT / 'examples' / 'dc_motor.py'}:Nope", "--t-end", "1",
                  cwd=tmp_path)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "has no 'Nope'; models there: DCMotorDrive" in out.stderr
    out = acausal("simulate", DC, "--t-end", "0.1", "--param", "resistor.R", cwd=tmp_path)
    assert out.returncode == 1 and "write NAME=VALUE" in out.stderr
    out = acausal("simulate", DC, "--t-end", "0.1", "-o", "load.ww", cwd=tmp_path)
    assert out.returncode == 1 and "did you mean" in out.stderr
    out = acausal("simulate", DC, cwd=tmp_path)  # argparse: --t-end is required
    assert out.returncode == 2 and "--t-end" in out.stderr
    # (a figure type matplotlib does not write was its traceback, after the simulation)
    out = acausal("simulate", DC, "--t-end", "0.1", "--plot", "out.xyz", cwd=tmp_path)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "'xyz' is not a figure format" in out.stderr and "png" in out.stderr


def test_entry_point_is_declared():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    module, func = meta["project"]["scripts"]["acausal"].split(":")
    assert callable(getattr(importlib.import_module(module), func))


def test_cache_lists_and_clears_the_compiled_right_hand_sides(tmp_path, monkeypatch):
    """``acausal cache`` says where the compiled right-hand sides are kept, how many and
    how large; ``--clear`` removes them (and only them); with the cache off it says so."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "acausal_rhs_0123.so").write_bytes(b"x" * 3 * 2**20)
    (cache / "notes.txt").write_text("not ours")
    monkeypatch.setenv("ACAUSAL_COMPILE_CACHE", str(cache))
    out = acausal("cache", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert f"{cache}: 1 compiled right-hand side, 3.0 MB" in out.stdout
    out = acausal("cache", "--clear", cwd=tmp_path)
    assert out.returncode == 0 and "1 compiled right-hand side removed" in out.stdout
    assert [p.name for p in cache.iterdir()] == ["notes.txt"]
    monkeypatch.setenv("ACAUSAL_COMPILE_CACHE", "off")
    out = acausal("cache", cwd=tmp_path)
    assert out.returncode == 0 and "is off" in out.stdout
    monkeypatch.setenv("ACAUSAL_COMPILE_CACHE", str(cache / "notes.txt"))  # a file
    out = acausal("cache", cwd=tmp_path)
    assert out.returncode == 1 and "is not a directory" in out.stdout


SCRIPT = '''
import acausal as ac
from components import electrical as el


class Divider(ac.Model):  # no states: 10 V over 1 Ohm and 3 Ohm
    def __init__(self):
        super().__init__()
        self.source = el.ConstantVoltage(V=10.0)
        self.r1 = el.Resistor(R=1.0)
        self.r2 = el.Resistor(R=3.0)
        self.ground = el.Ground()
        self.connect(self.source.p, self.r1.p)
        self.connect(self.r1.n, self.r2.p)
        self.connect(self.r2.n, self.source.n, self.ground.p)


def needs_arg(x):
    return Divider()


def raises():
    raise RuntimeError("boom in the user's function")
'''


def test_output_files_go_into_new_folders_and_bad_paths_fail_before_the_run(tmp_path):
    """--csv, --save-result and export --save into a missing folder were FileNotFoundError
    tracebacks (the simulate ones after the run); every output's folder is made, as
    --casadi and fmu() did. A folder given as the file is refused before any work."""
    (tmp_path / "div.py").write_text(SCRIPT)
    out = acausal("simulate", "div.py:Divider", "--t-end", "1", "-o", "r2.v, r1.i",
                  "--csv", "a/b/t.csv", "--save-result", "c/r.res", "--plot", "d/p.png",
                  cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    # r2.v = 10 V * 3 / (1 + 3), r1.i = 10 V / 4 Ohm: exact in binary
    assert "r2.v = 7.5\n" in out.stdout and "r1.i = 2.5\n" in out.stdout  # (-o with spaces)
    table = np.genfromtxt(tmp_path / "a/b/t.csv", delimiter=",", names=True)
    assert table["r2v"].tolist() == [7.5] * 501
    assert (tmp_path / "c/r.res").is_file() and (tmp_path / "d/p.png").is_file()
    out = acausal("export", "div.py:Divider", "--save", "e/m.acm", cwd=tmp_path)
    assert out.returncode == 0 and (tmp_path / "e/m.acm").is_file(), out.stderr
    for args in (("export", "div.py:Divider", "--casadi", "e"),
                 ("simulate", "div.py:Divider", "--t-end", "1", "--csv", "e")):
        out = acausal(*args, cwd=tmp_path)
        assert out.returncode == 1 and "Traceback" not in out.stderr
        assert "acausal: AcausalError: --" in out.stderr and "e: that is a folder" in out.stderr
        assert "<Result" not in out.stdout  # (refused before the run)


def test_targets_that_cannot_be_loaded_are_one_message(tmp_path):
    """ModuleNotFoundError, 'Empty module name', a TypeError for a function's missing
    argument and the user's own exception were tracebacks."""
    (tmp_path / "div.py").write_text(SCRIPT)
    cases = [
        ("nomodule.sub:MSD", r"there is no module 'nomodule.sub' on the import path"),
        (":MSD", r"target ':MSD': write FILE.py:NAME or module:NAME"),
        ("div.py:needs_arg", r"needs_arg\(x\) needs arguments"),
        ("div.py:raises", r"raises\(\) raised RuntimeError: boom in the user's function "
         r"\(--traceback shows where\)"),
        # a saved model's file that is not there (was the advice on how to write a target)
        ("gone.acm", r"target 'gone.acm': no file gone.acm"),
    ]
    for target, message in cases:
        out = acausal("simulate", target, "--t-end", "1", cwd=tmp_path)
        assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
        assert re.search(message, out.stderr), out.stderr
    out = acausal("simulate", "div.py:raises", "--t-end", "1", "--traceback", cwd=tmp_path)
    assert out.returncode == 1 and "Traceback" in out.stderr and "boom" in out.stderr
    # a model without states plots nothing by default: refused before the run
    out = acausal("simulate", "div.py:Divider", "--t-end", "1", "--plot", "p.png",
                  cwd=tmp_path)
    assert out.returncode == 1 and "the model has no states" in out.stderr
    assert "-o NAME,NAME" in out.stderr and "<Result" not in out.stdout


def test_a_reader_that_stops_early_is_no_error(tmp_path):
    """acausal info ... | head: the pipe closed before the listing ended printed
    'acausal: [Errno 32] Broken pipe' and exited 1."""
    # (a listing longer than the pipe's buffer, 64 kB: the writer meets the closed end)
    (tmp_path / "ladder.py").write_text(
        "import acausal as ac\nfrom components import electrical as el\n"
        "class Ladder(ac.Model):\n"
        "    def __init__(self, n=600):\n"
        "        super().__init__()\n"
        "        self.g = el.Ground()\n"
        "        self.src = el.ConstantVoltage(V=1.0)\n"
        "        self.rs = [el.Resistor(R=1.0) for _ in range(n)]\n"
        "        self.connect(self.src.n, self.g.p)\n"
        "        prev = self.src.p\n"
        "        for r in self.rs:\n"
        "            self.connect(prev, r.p)\n"
        "            prev = r.n\n"
        "        self.connect(prev, self.g.p)\n")
    proc = subprocess.Popen([sys.executable, "-m", "acausal", "info", "ladder.py:Ladder",
                             "--equations"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None and proc.stdout.readline()
    proc.stdout.close()  # (the reader stops after one line)
    err = proc.stderr.read().decode() if proc.stderr is not None else ""
    assert proc.wait(timeout=60) == 0 and "Broken pipe" not in err, err


def test_parameters_with_units_and_a_loaded_models_names(tmp_path):
    """--param "R=... unit" is read as simulate(params=) reads it; a misspelt name on a
    saved model was DetachedModelError (.walk)."""
    (tmp_path / "div.py").write_text(SCRIPT)
    out = acausal("simulate", "div.py:Divider", "--t-end", "1", "-o", "r1.i",
                  "--param", "r2.R=3000 mOhm", "--param", "source.V=10", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "r1.i = 2.5\n" in out.stdout  # 10 V / (1 + 3) Ohm
    out = acausal("simulate", "div.py:Divider", "--t-end", "1", "--param", "r2.R=3 m",
                  cwd=tmp_path)
    assert out.returncode == 1 and "params['r2.R']" in out.stderr
    assert acausal("export", "div.py:Divider", "--save", "m.acm", cwd=tmp_path).returncode == 0
    out = acausal("simulate", "m.acm", "--t-end", "1", "--param", "r2.RR=1", cwd=tmp_path)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "unknown parameter 'r2.RR'; did you mean 'r2.R'" in out.stderr


def test_a_failed_run_says_where_its_values_are(tmp_path):
    """x' = x^2/2 from 1 escapes at t = 2: the run fails, exit 1, its values up to the
    failure printed and written; the message said they were 'in .partial' (the Python
    API's attribute), and listed the integrator's line of each mode's attempt again."""
    (tmp_path / "blow.py").write_text(
        "import acausal as ac\n"
        "class Blow(ac.Component):\n"
        "    x = ac.Variable(start=1.0, fixed=True)\n"
        "    def equations(self):\n"
        "        return [ac.der(self.x) == 0.5 * self.x**2]\n")
    out = acausal("simulate", "blow.py:Blow", "--t-end", "3", "--csv", "b.csv", cwd=tmp_path)
    assert out.returncode == 1 and "the simulation stopped" in out.stderr, out.stderr
    assert ".partial" not in out.stderr and "written to the files" in out.stderr
    assert (tmp_path / "b.csv").stat().st_size > 0
    reported = [ln for ln in out.stderr.splitlines() if ln.startswith("At t =")]
    assert reported and len(reported) == len(set(reported)), out.stderr


def test_warnings_are_one_line_of_the_command(tmp_path):
    """A Zeno stop: the warning is printed as the command's message, not as Python's
    'acausal/simulate.py:253: SolverWarning' with the library's source line, and the
    final line does not repeat it."""
    (tmp_path / "ball.py").write_text(
        "import acausal as ac\n"
        "class Ball(ac.Model):\n"
        "    h = ac.Variable(start=1.0, fixed=True)\n"
        "    v = ac.Variable(start=0.0, fixed=True)\n"
        "    def equations(self):\n"
        "        return [ac.der(self.h) == self.v, ac.der(self.v) == -9.81,\n"
        "                ac.when(self.h < 0, ac.reinit(self.v, -0.8 * ac.pre(self.v)))]\n")
    out = acausal("simulate", "ball.py:Ball", "--t-end", "5", cwd=tmp_path)
    lines = out.stderr.splitlines()
    assert out.returncode == 1 and lines[0].startswith("acausal: SolverWarning: Zeno"), lines
    assert lines[-1] == "acausal: the simulation stopped (see the warning above).", lines
    assert len(lines) == 2 and "simulate.py" not in out.stderr
