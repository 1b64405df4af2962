"""Shared test helpers."""

import os
import sys

import matplotlib

matplotlib.use("Agg")

HERE = os.path.dirname(__file__)
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import pytest  # noqa: E402

# what SUNDIALS and CasADi print when a solver struggles; the library captures it (dropped
# when it recovers, part of the exception when it does not), so it must never leak
_SOLVER_MARKERS = ("IDAS", "IDACalcIC", "IDA_", "CVODE", "mxstep", "linesearch",
                   "NaN detected", "Inf detected", "casadi/core", "KINSOL")


@pytest.fixture(autouse=True)
def no_solver_output(capfd):
    """Fail any test during which a solver wrote to stderr or stdout."""
    yield
    out, err = capfd.readouterr()
    leaked = [ln for ln in (err + out).splitlines() if any(m in ln for m in _SOLVER_MARKERS)]
    if leaked:
        pytest.fail("solver output reached the user:\n" + "\n".join(leaked[:10]))
