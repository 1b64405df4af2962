"""The explicit ODE behind a semi-explicit DAE, for the ODE backends (CVODES, Runge-Kutta).

``x' = ode(x, z, p, t), 0 = alg(x, z, p, t)`` is an explicit ODE ``x' = f(x, t)`` when
the DAE has no algebraic variables, or when ``alg`` is linear in ``z`` with a small
block: ``z = -A(x, t)^-1 alg(x, 0, t)`` is then substituted symbolically (a drive train
whose articulated-body inertia meets a motor's inertia gives such a block). Anything else
(a nonlinear algebraic block, a large one) stays with IDAS: :class:`NotAnODE` says why.

Parameters are folded into the expressions as constants, as in the IDAS backend.
"""

from __future__ import annotations

import weakref
from dataclasses import field

import casadi as cs
import numpy as np

from ..dae import SemiExplicitDAE
from ..errors import AcausalError
from ..records import record

__all__ = ["NotAnODE", "ODEForm", "ode_form", "derived_form", "depends_on_time",
           "MAX_ELIMINATED"]

#: largest linear algebraic block eliminated symbolically (a dense symbolic solve grows
#: like n^3, as in the block solution pass)
MAX_ELIMINATED = 24


class NotAnODE(AcausalError):
    """The DAE is not an explicit ODE for the ODE backends (the reason is the message)."""


@record(eq=False)
class ODEForm:
    """``x' = f(x, t)`` with the parameter values folded in, and ``z = g(x, t)``.

    Attributes
    ----------
    f : casadi.Function
        ``(x, t) -> x'``.
    z : casadi.Function
        ``(x, t) -> z`` (the eliminated algebraic variables; zero rows for an ODE).
    x, t, rhs : casadi.SX
        The symbols and the right-hand side expression (for derivatives).
    """

    f: cs.Function
    z: cs.Function
    x: cs.SX
    t: cs.SX
    rhs: cs.SX
    _jvp: cs.Function | None = field(default=None, repr=False)
    _timed: bool | None = field(default=None, repr=False)
    _sparsity: cs.Sparsity | None = field(default=None, repr=False)

    @property
    def n(self) -> int:
        return int(self.x.numel())

    @property
    def timed(self) -> bool:
        """Whether ``f`` depends on time (found once)."""
        if self._timed is None:
            self._timed = bool(cs.depends_on(self.rhs, self.t))
        return self._timed

    @property
    def sparsity(self) -> cs.Sparsity:
        """The sparsity of ``df/dx`` (found once)."""
        if self._sparsity is None:
            self._sparsity = cs.jacobian_sparsity(self.rhs, self.x)
        return self._sparsity

    def jvp(self) -> cs.Function:
        """``(x, t, v) -> (df/dx) v`` (forward mode, no Jacobian formed)."""
        if self._jvp is None:
            v = cs.SX.sym("v", self.n)
            self._jvp = cs.Function("jvp", [self.x, self.t, v],
                                    [cs.jtimes(self.rhs, self.x, v)])
        return self._jvp


def ode_form(dae: SemiExplicitDAE, p: np.ndarray) -> ODEForm:
    """The explicit ODE of ``dae`` at the parameter values ``p``, derived once per DAE and
    parameter values (the automatic choice and the backend of a run share it).

    Raises
    ------
    NotAnODE
        The algebraic part is nonlinear in its unknowns or larger than
        :data:`MAX_ELIMINATED`.
    """
    kept = _FORMS.setdefault(dae, {})
    key = np.asarray(p, dtype=float).tobytes()
    got = kept.get(key)
    if got is None:
        try:
            got = kept[key] = _derive(dae, p)
        except NotAnODE as exc:
            got = kept[key] = str(exc)
    if isinstance(got, str):
        raise NotAnODE(got)
    return got


_FORMS: weakref.WeakKeyDictionary[SemiExplicitDAE, dict[bytes, ODEForm | str]] = (
    weakref.WeakKeyDictionary())


def derived_form(dae: SemiExplicitDAE, p: np.ndarray) -> ODEForm | None:
    """The explicit ODE of ``dae`` at ``p`` if it has been derived already (by the
    automatic choice or an ODE backend), else None (nothing is derived here)."""
    got = _FORMS.get(dae, {}).get(np.asarray(p, dtype=float).tobytes())
    return got if isinstance(got, ODEForm) else None


def depends_on_time(dae: SemiExplicitDAE) -> bool:
    """Whether the equations or the event indicators of ``dae`` depend on time (a
    property of the model, found once: 80 ms at 20 000 states)."""
    got = _TIMED.get(dae)
    if got is None:
        exprs = cs.vertcat(dae.ode, dae.alg)
        if dae.indicators is not None and dae.indicators.numel():
            exprs = cs.vertcat(exprs, dae.indicators)
        got = _TIMED[dae] = bool(cs.depends_on(exprs, dae.t))
    return got


_TIMED: weakref.WeakKeyDictionary[SemiExplicitDAE, bool] = weakref.WeakKeyDictionary()


def _derive(dae: SemiExplicitDAE, p: np.ndarray) -> ODEForm:
    x, z, t = dae.x, dae.z, dae.t
    pv = cs.DM(np.asarray(p, dtype=float)) if dae.p.numel() else None
    ode, alg = dae.ode, dae.alg
    if pv is not None:
        ode = cs.substitute(ode, dae.p, pv)
        alg = cs.substitute(alg, dae.p, pv)
    nz = int(z.numel())
    zexpr = cs.SX(0, 1)
    if nz:
        if nz > MAX_ELIMINATED:
            raise NotAnODE(f"{nz} algebraic variables (more than {MAX_ELIMINATED} are not "
                           "eliminated symbolically)")
        A = cs.jacobian(alg, z)
        if cs.depends_on(A, z):
            raise NotAnODE("the algebraic equations are nonlinear in "
                           + ", ".join(dae.z_names[:4]) + (", ..." if nz > 4 else ""))
        zexpr = -cs.solve(A, cs.substitute(alg, z, cs.SX.zeros(nz)))
        ode = cs.substitute(ode, z, zexpr)
    return ODEForm(cs.Function("ode", [x, t], [ode], ["x", "t"], ["xdot"]),
                   cs.Function("z", [x, t], [zexpr], ["x", "t"], ["z"]), x, t, ode)
