"""Random small models of library components, as plain data, and a worker that runs them.

The fuzz test (``tests/diagnostics/test_fuzz.py``) draws a *spec*: components of the electrical,
translational, rotational and thermal libraries (and the converters between them), their
parameters (mostly sensible, sometimes zero, negative, NaN or infinite), start values, and
the node each port is connected to. A worker process (``python tests/fuzz_models.py``)
reads specs as JSON lines, builds and simulates each model and answers with the outcome,
so that a crash (a segmentation fault in a solver) or a hang of one case is reported for
that case instead of ending the test run.

Outcomes: ``"ok"`` / ``"failed-run"`` (a result, complete or up to an integration failure,
that satisfies Tellegen's theorem), the name of an ``AcausalError`` subclass, or one of
the findings ``"BUG"`` (another exception), ``"TELLEGEN"`` (a result that violates it),
``"NONFINITE"`` (a run reported as successful with NaN or inf values), ``"IDAS-SINGULAR"``
(CasADi's RuntimeError for a DAE singular with the given parameter values), ``"CRASH"``,
``"HANG"``. A run that failed may end in non-finite values: it says so.
"""

from __future__ import annotations

import json
import math
import os
import sys
import traceback
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

import acausal as ac  # noqa: E402
from components import electrical as el  # noqa: E402
from components import rotational as rot  # noqa: E402
from components import thermal as th  # noqa: E402
from components import translational as tr  # noqa: E402

# kind -> (class, {parameter: sensible range}, {variable: sensible start range})
LIBRARY: dict[str, tuple[type, dict[str, tuple[float, float]], dict[str, tuple[float, float]]]] = {
    "Resistor": (el.Resistor, {"R": (0.1, 100.0)}, {}),
    "Capacitor": (el.Capacitor, {"C": (1e-3, 1.0)}, {"v": (-5.0, 5.0)}),
    "Inductor": (el.Inductor, {"L": (1e-3, 1.0)}, {"i": (-1.0, 1.0)}),
    "ConstantVoltage": (el.ConstantVoltage, {"V": (-10.0, 10.0)}, {}),
    "ConstantCurrent": (el.ConstantCurrent, {"I": (-2.0, 2.0)}, {}),
    "SineVoltage": (el.SineVoltage, {"V": (0.0, 10.0), "f": (0.0, 5.0)}, {}),
    "Diode": (el.Diode, {"Vt": (0.02, 0.05)}, {}),
    "Ground": (el.Ground, {}, {}),
    "VoltageSensor": (el.VoltageSensor, {}, {}),
    "CurrentSensor": (el.CurrentSensor, {}, {}),
    "EMF": (el.EMF, {"k": (-1.0, 1.0)}, {}),
    "HeatingResistor": (el.HeatingResistor, {"R_ref": (0.1, 100.0), "alpha": (0.0, 0.01)},
                        {}),
    "Mass": (tr.Mass, {"m": (0.1, 10.0)}, {"s": (-1.0, 1.0), "v": (-1.0, 1.0)}),
    "TSpring": (tr.Spring, {"c": (1.0, 1e3)}, {}),
    "TDamper": (tr.Damper, {"d": (0.0, 10.0)}, {}),
    "TSpringDamper": (tr.SpringDamper, {"c": (1.0, 1e3), "d": (0.0, 10.0)}, {}),
    "TFixed": (tr.Fixed, {"s0": (-1.0, 1.0)}, {}),
    "Force": (tr.Force, {"f": (-10.0, 10.0)}, {}),
    "Inertia": (rot.Inertia, {"J": (1e-3, 1.0)}, {"phi": (-1.0, 1.0), "w": (-1.0, 1.0)}),
    "RSpring": (rot.Spring, {"c": (1.0, 1e3)}, {}),
    "RDamper": (rot.Damper, {"d": (0.0, 10.0)}, {}),
    "IdealGear": (rot.IdealGear, {"ratio": (-10.0, 10.0)}, {}),
    "RFixed": (rot.Fixed, {}, {}),
    "Torque": (rot.Torque, {"tau": (-10.0, 10.0)}, {}),
    "IdealRollingWheel": (rot.IdealRollingWheel, {"radius": (0.05, 1.0)}, {}),
    "HeatCapacitor": (th.HeatCapacitor, {"C": (1.0, 100.0)}, {"T": (250.0, 400.0)}),
    "ThermalConductor": (th.ThermalConductor, {"G": (0.1, 10.0)}, {}),
    "FixedTemperature": (th.FixedTemperature, {"T": (250.0, 400.0)}, {}),
    "HeatFlow": (th.HeatFlow, {"Q_flow": (-10.0, 10.0)}, {}),
    "TemperatureSensor": (th.TemperatureSensor, {}, {}),
}

#: the component that connects each domain to its datum
REFERENCE = {"electrical": "Ground", "translational": "TFixed", "rotational": "RFixed",
             "thermal": "FixedTemperature"}

#: values that must be rejected or handled wherever they appear (1e30: large, but no
#: solution of these models comes near the overflow of squares, ~1e154, where IDAS does not
#: return: test_fuzz.test_overflowing_solution_does_not_hang)
SPECIAL = [0.0, -1.0, math.nan, math.inf, -math.inf, 1e30]


def port_domains(kind: str) -> dict[str, str]:
    """``{port: domain name}`` of a library component kind."""
    return {name: p.domain.name for name, p in LIBRARY[kind][0]().ports().items()}


class FuzzModel(ac.Model):
    """The model of a spec: components ``c0, c1, ...``; the ports on one node connected."""

    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__()
        nodes: dict[tuple[str, int], list[Any]] = {}
        comps = []
        for k, item in enumerate(spec["components"]):
            cls = LIBRARY[item["kind"]][0]
            comp = cls(**item["params"], **item["starts"])
            comps.append(comp)
            self.add(f"c{k}", comp)
            for port, node in item["nodes"].items():
                p = comp.ports()[port]
                nodes.setdefault((p.domain.name, node), []).append(p)
        for ports in nodes.values():
            if len(ports) > 1:
                self.connect(*ports)


def tellegen_error(cm: Any, res: Any) -> tuple[float, bool]:
    """max over time of |sum over edges of across * through| / sum |across * through|
    (over the output times where every edge quantity is finite), and whether they all are."""
    total = np.zeros_like(res.t)
    scale = np.zeros_like(res.t)
    finite = np.ones(res.t.shape, dtype=bool)
    with np.errstate(invalid="ignore", over="ignore"):
        for e in cm.graph.edges:
            a = res[f"{e.name}.{e.domain.across.name}"]
            b = res[f"{e.name}.{e.domain.through.name}"]
            finite &= np.isfinite(a) & np.isfinite(b)
            p = a * b
            total += p
            scale += np.abs(p)
        ok = finite & (scale > 0)
        rel = np.where(ok, np.abs(total) / np.where(ok, scale, 1.0), 0.0)
    return (float(np.max(rel)) if rel.size else 0.0), bool(np.all(finite))


def run_case(spec: dict[str, Any]) -> dict[str, Any]:
    """Build and simulate a spec; the outcome as a small dict."""
    import warnings

    warnings.simplefilter("ignore")
    try:
        cm = ac.build(FuzzModel(spec))
        res = ac.simulate(cm, spec["t_end"], n_points=21, raise_on_failure=False)
        err, finite = tellegen_error(cm, res)
    except ac.AcausalError as exc:
        return {"outcome": type(exc).__name__, "message": str(exc)[:300]}
    except Exception as exc:  # noqa: BLE001 - the finding
        text = f"{type(exc).__name__}: {exc}"
        kind = "IDAS-SINGULAR" if "sp_jac_dae_.is_singular" in text else "BUG"
        return {"outcome": kind, "message": text[:2000],
                "traceback": traceback.format_exc()[-4000:]}
    if not err <= 1e-9:  # also NaN
        return {"outcome": "TELLEGEN", "message": f"relative error {err:.3g}",
                "status": res.status}
    if not finite and res.status == "ok":  # a failed run may end in inf (and says so)
        return {"outcome": "NONFINITE", "message": "a successful run with NaN or inf values"}
    return {"outcome": "ok" if res.status == "ok" else "failed-run",
            "message": res.message[:200]}


MARK = "@@FUZZ "


def main() -> None:  # pragma: no cover - runs in the worker process
    for line in sys.stdin:
        if not line.strip():
            continue
        out = run_case(json.loads(line))
        sys.stdout.write(MARK + json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
