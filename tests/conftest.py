"""Shared test helpers."""

import os
import sys

import matplotlib

matplotlib.use("Agg")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# the tests are grouped by pipeline stage in sub-folders; the shared reference models
# (models.py, mb_models.py) sit here, and the examples and benchmarks they run by name
for path in (ROOT, HERE, os.path.join(ROOT, "examples"), os.path.join(ROOT, "benchmarks")):
    if path not in sys.path:
        sys.path.insert(0, path)

import pytest  # noqa: E402

# compiled right-hand sides are not kept between runs in the user's cache directory by the
# tests (a test of the cache gives it a directory of its own)
os.environ["ACAUSAL_COMPILE_CACHE"] = "off"

# what SUNDIALS and CasADi print when a solver struggles; the library captures it (dropped
# when it recovers, part of the exception when it does not), so it must never leak
_SOLVER_MARKERS = ("IDAS", "IDACalcIC", "IDA_", "CVODE", "mxstep", "linesearch",
                   "NaN detected", "Inf detected", "casadi/core", "KINSOL")


@pytest.fixture(autouse=True)
def no_solver_output(request):
    """Fail any test during which a solver wrote to stderr or stdout (tests that read the
    output themselves with capsys are left to check it)."""
    if "capsys" in request.fixturenames or "capfd" in request.fixturenames:
        yield
        return
    capfd = request.getfixturevalue("capfd")
    yield
    out, err = capfd.readouterr()
    leaked = [ln for ln in (err + out).splitlines() if any(m in ln for m in _SOLVER_MARKERS)]
    if leaked:
        pytest.fail("solver output reached the user:\n" + "\n".join(leaked[:10]))
