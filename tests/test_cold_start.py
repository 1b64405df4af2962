"""A cold script stays cheap: ``import acausal`` and a small model's build and simulation
import none of the heavy packages that CasADi and numpy do not load themselves (issue 14:
scipy alone costs 0.3 to 0.6 s on a cold start, more than the whole RC script;
``benchmarks/bench_scale.py --cold`` measures the time). Each check runs in a fresh
interpreter and reads its ``sys.modules``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from bench_scale import RC_ACAUSAL

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEAVY = ("scipy", "networkx", "sympy", "matplotlib", "pandas", "numpy.random",
         "numpy.ma")  # numpy.ma: ~10 ms, loaded by np.unique (acausal.csr.unique instead)

# the cold RC script of the benchmark (benchmarks/ is on the path, tests/conftest.py), with
# the closed form v(t) = V (1 - exp(-t / RC)) checked at t = 5 RC
RC = RC_ACAUSAL + """
assert abs(res["capacitor.v"][-1] - 10.0 * (1.0 - 2.718281828459045 ** -5.0)) < 1e-4
"""


def _loaded_after(code: str) -> list[str]:
    """The heavy packages in ``sys.modules`` after running ``code`` in a fresh process."""
    probe = (code + "\nimport json, sys\nprint(json.dumps(sorted(m for m in sys.modules if "
             f"any(m == h or m.startswith(h + '.') for h in {HEAVY!r}))))\n")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": ROOT}, check=False, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


MECHANICAL = f"""
import sys
sys.path.insert(0, {os.path.join(ROOT, "tests")!r})
import acausal as ac
from models import DCMotor, MassSpringDamper
for model in (DCMotor(), MassSpringDamper()):  # state selection, outputs affine in states
    res = ac.simulate(model, 0.1, n_points=1001)
    outputs = [res[name] for name in res.names()]
"""


# a model large enough for every graph routine's array version (ARRAY_GRAPH_MIN), below
# scipy's (SCIPY_GRAPH_MIN), with a dummy-derivative block of 2 000 candidates (the sparse
# pick): its build imports no scipy (0.25 s of a 10 000-mass chain's first build); nor
# does its first simulation, whose automatic choice takes the 8 largest eigenvalues of
# 2 000 (acausal.solvers.arnoldi), or reading its outputs
LARGE_BUILD = f"""
import sys
sys.path.insert(0, {os.path.join(ROOT, "benchmarks")!r})
import acausal as ac
from acausal.structure import matching
from _models import MassSpringChain
cm = ac.build(MassSpringChain(1000))
assert len(cm.flat.variables) + len(cm.flat.equations) >= matching.ARRAY_GRAPH_MIN
res = ac.simulate(cm, 0.05, n_points=11)
assert res.stats.solver in ("dop853", "cvodes-adams"), res.stats.solver
outputs = [res[name] for name in res.names()]
"""

TREE_BUILD = f"""
import sys
sys.path.insert(0, {os.path.join(ROOT, "benchmarks")!r})
import acausal as ac
from _models import LinkChain
cm = ac.build(LinkChain(20))
assert len(cm.dae.x_names) == 40  # (an angle and a rate per joint)
res = ac.simulate(cm, 0.01, n_points=3)
assert res.stats.solver == "dop853", res.stats.solver
"""


@pytest.mark.parametrize("what, code, allowed", [
    ("import acausal", "import acausal", ()),
    ("RC build and simulate", RC, ()),
    # the dummy-derivative selection pivots with scipy's QR at a generic (random) point
    # (scipy loads numpy.ma itself)
    ("DC motor and mass-spring-damper", MECHANICAL, ("scipy", "numpy.random", "numpy.ma")),
    ("a 1 000-mass chain's build and simulation", LARGE_BUILD, ()),
    # a tree mechanism: no loop constraints whose rank scipy's QR tests
    ("a 20-link pendulum chain's build and simulation", TREE_BUILD, ())])
def test_cold_script_imports_no_heavy_package(what, code, allowed):
    floor = set(_loaded_after("import casadi, numpy"))  # what the hand-written script loads
    extra = [m for m in _loaded_after(code) if m not in floor
             and not any(m == a or m.startswith(a + ".") for a in allowed)]
    top = sorted({m if m.startswith("numpy.") else m.split(".")[0] for m in extra})
    assert not extra, f"{what} imported {top}: import them where they are used"


def test_rarely_used_modules_load_on_first_use():
    """The exports, optimal control and saved models load when first named (PEP 562)."""
    code = ("import sys, acausal as ac\n"
            "lazy = ('acausal.export', 'acausal.ocp', 'acausal.persist')\n"
            "before = [m for m in lazy if m in sys.modules]\n"
            "names = (ac.export.__name__, ac.ocp.__name__, ac.load.__module__,\n"
            "         ac.DetachedModelError.__module__)\n"
            "print(before, names, callable(ac.sweep))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": ROOT}, check=True, timeout=300)
    assert r.stdout.split() == ["[]", "('acausal.export',", "'acausal.ocp',",
                                "'acausal.persist',", "'acausal.persist')", "True"]


def test_event_loop_loads_with_the_first_model_that_has_events():
    """The RC circuit has no relations or when clauses: its run does not load the event
    loop (:mod:`acausal.hybrid`, ~3 ms of dataclasses); nor, with one state, the
    eigenvalue iteration of the solver choice (:mod:`acausal.solvers.arnoldi`)."""
    code = RC + ("import sys\nprint('acausal.hybrid' in sys.modules, "
                 "'acausal.solvers.arnoldi' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": ROOT}, check=True, timeout=300)
    assert r.stdout.split()[-2:] == ["False", "False"]
