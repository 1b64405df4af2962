"""Optimal control and estimation on compiled models: direct collocation with CasADi ``Opti``.

:class:`Collocation` turns a compiled model into the constraints of a direct collocation
transcription, so that the user writes only the objective and the bounds::

    ocp = ac.ocp.Collocation(cm, N=40, degree=3, controls=["source.V"])
    V, w = ocp.control("source.V"), ocp.state("inertia.w")
    ocp.opti.subject_to(ocp.opti.bounded(-12, V, 12))
    ocp.opti.subject_to([ocp.state("inertia.phi")[-1] == 1.0, w[-1] == 0])
    ocp.opti.minimize(ocp.integral(ocp.collocated("resistor.i") ** 2))
    sol = ocp.solve()

The transcription
-----------------
The horizon ``[t0, t0 + T]`` (``T`` a number, or a decision variable with ``t_final=None``)
is cut into ``N`` equal intervals. On each interval the states are a polynomial of degree
``d`` through the mesh value at the interval start and ``d`` values at the Radau (default)
or Legendre collocation points; the DAE ``x' = f(x, z, p, t)``, ``0 = g(x, z, p, t)`` holds
at each collocation point, with the algebraic variables ``z`` as decision variables
there; the polynomial's end value is the next mesh value (continuity). Radau IIA is
stiffly accurate, of order ``2d - 1`` at the mesh points, and suits index-1 DAEs.

Controls are model parameters (any ``Parameter`` of the model, e.g. a source's value)
made decision variables: **piecewise constant** (one value per interval, ``control_kind=
"constant"``, the default) or **polynomial** (one value per collocation point,
``"polynomial"``: the control is a free function of the same order as the states; the
optimum of a smooth problem is then reproduced to the collocation order). Other
parameters to estimate are ``free_params`` (one value over the horizon).

Exposed: ``opti`` (the :class:`casadi.Opti`), ``x`` (states at the mesh, ``nx x (N+1)``),
``z`` (algebraic variables at the collocation points), ``u`` (controls), ``p`` (free
parameters), ``t_final`` (``T``), and name-based views: :meth:`state`, :meth:`control`,
:meth:`parameter`, :meth:`collocated` (any output of the model at the collocation points)
and :meth:`integral` (Gauss–Radau quadrature of a collocated expression).

References
----------
Biegler, L. T. (2010), *Nonlinear Programming*, SIAM, ch. 10 (direct transcription);
Andersson, J. et al. (2019), CasADi, Math. Prog. Comp. 11, 1–36.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import casadi as cs
import numpy as np

from .checks import _bound, _number, _other_parameters, check_current, check_smooth
from .compiler import CompiledModel
from .differentiable import _check_names
from .errors import AcausalError, ArgumentError
from .initialize import initialize
from .names import did_you_mean, name_list

__all__ = ["Collocation", "CollocationSolution", "collocation_coefficients",
           "quadrature_weights"]


def collocation_coefficients(degree: int, scheme: str = "radau"
                             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``tau, C, D, B`` of the collocation polynomial on ``[0, 1]``.

    ``tau`` are the ``degree + 1`` points (0 first); ``C[r, j]`` the derivative at
    ``tau[j]`` of the ``r``-th Lagrange basis polynomial; ``D[r]`` its value at 1;
    ``B[j]`` its integral over ``[0, 1]`` (the quadrature of the polynomial through the
    ``degree + 1`` points; ``B[0]`` is 0 except for Radau of degree 1, where it is 1/2:
    a quadrature of values at the collocation points alone takes
    :func:`quadrature_weights`).
    """
    if scheme not in ("radau", "legendre"):
        raise AcausalError(f"scheme must be 'radau' or 'legendre', got {scheme!r}")
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)):
        raise ArgumentError(f"the collocation degree must be an integer from 1 to 9, got "
                            f"{degree!r}")
    if not 1 <= degree <= 9:  # (CasADi's collocation points go up to 9)
        raise AcausalError(f"the collocation degree must be 1 to 9, got {degree}; for more "
                           "accuracy take more intervals N")
    tau = np.append(0.0, cs.collocation_points(degree, scheme))
    n = degree + 1
    C = np.zeros((n, n))
    D = np.zeros(n)
    B = np.zeros(n)
    for r in range(n):
        others = np.delete(tau, r)
        poly = np.poly1d(np.poly(others)) / np.prod(tau[r] - others)
        D[r] = poly(1.0)
        dp = np.polyder(poly)
        C[r] = [dp(t) for t in tau]
        B[r] = np.polyint(poly)(1.0)
    return tau, C, D, B


def quadrature_weights(degree: int, scheme: str = "radau") -> np.ndarray:
    """Weights ``w[j]`` of ``int_0^1 v dt ~ sum_j w[j] v(tau[j + 1])`` from the ``degree``
    collocation points alone (``tau`` of :func:`collocation_coefficients`, without 0).

    They are the integrals of the Lagrange basis through those points: the Gauss rule
    (exact to degree ``2d - 1``) for Legendre, the right Radau rule (exact to degree
    ``2d - 2``) for Radau; they sum to 1. (``B[1:]`` of :func:`collocation_coefficients`
    equals them except for Radau of degree 1, whose basis through 0 and 1 gives the
    collocation point 1 the weight 1/2.)
    """
    tau = collocation_coefficients(degree, scheme)[0][1:]
    w = np.zeros(tau.size)
    for r in range(tau.size):
        others = np.delete(tau, r)
        poly = np.poly1d(np.poly(others)) / np.prod(tau[r] - others)
        w[r] = np.polyint(poly)(1.0)
    return w


def _not_parameters(cm: CompiledModel, kind: str, names: Sequence[str]) -> None:
    """Say why a name of ``controls``/``free_params`` that is no numeric parameter of the
    compiled model cannot be one (a variable, a function of time, a structural value), not
    only that it is unknown."""
    d = cm.dae
    known = set(d.p_names)
    bad = [n for n in names if n not in known]
    if not bad:
        return
    other = _other_parameters(cm.model, _bound(cm))
    for n in bad:
        why = other.get(n)
        if why == "signal":
            raise AcausalError(
                f"{kind}: {n!r} is given as a function of time, which is part of the "
                "equations; create the component with a number for it (its value is then "
                "the initial guess) and build again")
        if why == "structural":
            raise AcausalError(
                f"{kind}: {n!r} is a structural parameter (its value shapes the equations "
                "when the model is built); only numeric parameters can be optimised")
        if why == "follows":
            raise AcausalError(
                f"{kind}: {n!r} is calculated from other parameters of its component; give "
                "it a value when creating the component and build again")
        if n in d.out_index:
            raise AcausalError(
                f"{kind}: {n!r} is a variable of the model, not a parameter; {kind} are "
                "parameters (such as a source's value, 'source.V'); constrain a variable "
                f"with ocp.opti.subject_to(ocp.collocated({n!r}) ...)")


@dataclass
class CollocationSolution:
    """The numbers of a solved :class:`Collocation` problem.

    Attributes
    ----------
    t : ndarray
        Mesh times (``N + 1``) [s].
    t_collocation : ndarray
        Collocation times (``N d``) [s].
    t_final : float
        Horizon length ``T`` [s].
    objective : float
        Optimal objective value.
    stats : dict
        The NLP solver's statistics (``return_status``, ``iter_count``, ...).
    """

    t: np.ndarray
    t_collocation: np.ndarray
    t_final: float
    objective: float
    stats: dict[str, Any]
    _sol: Any = field(repr=False, default=None)
    _ocp: Any = field(repr=False, default=None)

    def value(self, expr: Any) -> Any:
        """Value of any expression of the problem at the solution."""
        v = self._sol.value(expr)
        return float(v) if np.isscalar(v) else np.asarray(v)  # type: ignore[arg-type]

    def state(self, name: str) -> np.ndarray:
        """A state at the mesh times."""
        return np.atleast_1d(self.value(self._ocp.state(name)))

    def control(self, name: str) -> np.ndarray:
        """A control: one value per interval (constant) or per collocation point."""
        return np.atleast_1d(self.value(self._ocp.control(name)))

    def parameter(self, name: str) -> float:
        """A free parameter's optimal value."""
        return float(self.value(self._ocp.parameter(name)))

    def collocated(self, name: str) -> np.ndarray:
        """Any output of the model at the collocation times."""
        return np.atleast_1d(self.value(self._ocp.collocated(name)))


class Collocation:
    """Direct collocation of a compiled model (see the module documentation).

    Parameters
    ----------
    cm : CompiledModel
        The model; its DAE ``cm.dae`` is transcribed (one state choice: models that need
        dynamic state selection along the trajectory are not supported).
    N : int
        Number of mesh intervals.
    degree : int
        Collocation polynomial degree ``d`` (3: order 5 at the mesh points with Radau).
    controls : sequence of str
        Parameters made controls (dotted names, e.g. ``"source.V"``).
    control_kind : {"constant", "polynomial"}
        Piecewise-constant controls or values at every collocation point.
    t_final : float or None
        Horizon length [s]; None makes it a decision variable (``t_final``, for minimum
        time; bound it with ``opti.subject_to``).
    t_start : float
        Initial time [s].
    free_params : sequence of str
        Parameters to optimise, constant over the horizon (estimation, design).
    params : dict, optional
        Values of the other parameters (default: the model's).
    scheme : {"radau", "legendre"}
        Collocation points.
    """

    def __init__(self, cm: CompiledModel, N: int, degree: int = 3, *,
                 controls: Sequence[str] = (), control_kind: str = "constant",
                 t_final: float | None = 1.0, t_start: float = 0.0,
                 free_params: Sequence[str] = (), params: dict[str, float] | None = None,
                 scheme: str = "radau") -> None:
        if control_kind not in ("constant", "polynomial"):
            raise AcausalError("control_kind must be 'constant' or 'polynomial'")
        if isinstance(N, bool) or not isinstance(N, (int, np.integer)) or N < 1:
            raise AcausalError(f"N (the number of mesh intervals) must be an integer >= 1, "
                               f"got {N!r}")
        if t_final is not None and not (isinstance(t_final, (int, float, np.integer,
                                                             np.floating))
                                        and not isinstance(t_final, bool)
                                        and np.isfinite(t_final) and t_final > 0):
            raise AcausalError(f"t_final (the horizon) must be a number > 0 s, or None to "
                               f"make it a decision variable; got {t_final!r}")
        t0 = _number(t_start, "t_start")  # (finite: NaN made every constraint NaN)
        assert t0 is not None
        collocation_coefficients(degree, scheme)  # (the degree checked before its use)
        if cm.selection.dynamic:
            raise AcausalError("direct collocation uses one state choice; this model needs "
                               "dynamic state selection (cm.report)")
        # (an NLP of one smooth DAE: with its relations frozen at their build values a
        # limiter held its bound whatever its input, and IPOPT reported that optimum)
        check_smooth(cm, "direct collocation", "Replace the switching components by smooth "
                     "ones (a smooth saturation, a bound on the control: opti.subject_to)")
        check_current(cm, "Collocation", params)
        d = cm.dae
        self.cm, self.N, self.degree, self.scheme = cm, int(N), int(degree), scheme
        self.control_kind = control_kind
        self.control_names = name_list(controls, "controls")
        self.param_names = name_list(free_params, "free_params")
        _not_parameters(cm, "controls", self.control_names)
        _not_parameters(cm, "free_params", self.param_names)
        ic = _check_names("control(s)", self.control_names, d.p_names)
        ip = _check_names("parameter(s)", self.param_names, d.p_names)
        if set(ic) & set(ip):
            raise AcausalError("a parameter cannot be both a control and a free parameter")
        self.tau, self.C, self.D, self.B = collocation_coefficients(degree, scheme)
        self.W = quadrature_weights(degree, scheme)
        nx, nz, nu, npf = int(d.x.numel()), int(d.z.numel()), len(ic), len(ip)
        nd = self.N * self.degree
        opti = self.opti = cs.Opti()
        self.t_start = t0
        self.t_final: Any = opti.variable() if t_final is None else float(t_final)
        self.free_time = t_final is None
        self.x = opti.variable(nx, self.N + 1)
        self.xc = opti.variable(nx, nd)  # states at the collocation points
        self.z = opti.variable(nz, nd)
        self.u = opti.variable(nu, self.N if control_kind == "constant" else nd)
        self.p = opti.variable(npf)
        self._p_base = cm.parameter_values(params)
        self._ic, self._ip = ic, ip
        self.h = self.t_final / self.N
        # collocation times: t0 + h (k + tau_j), j = 1..d
        frac = (np.repeat(np.arange(self.N), degree) + np.tile(self.tau[1:], self.N))
        self._frac = frac
        self.tc = self.t_start + self.h * cs.DM(frac).T  # 1 x nd
        # parameters at every collocation point
        U = self.u if control_kind == "polynomial" else cs.kron(self.u, cs.DM.ones(1, degree))
        P: Any = cs.repmat(cs.DM(self._p_base), 1, nd)
        if nu or npf:
            rows = ic + ip
            E = cs.DM(len(self._p_base), len(rows))
            for j, k in enumerate(rows):
                E[k, j] = 1.0
            keep = np.ones(len(self._p_base))
            keep[rows] = 0.0
            P = cs.diag(cs.DM(keep)) @ P + E @ cs.vertcat(U, cs.repmat(self.p, 1, nd))
        self.P = P
        f = d.default_function.map(nd)
        ode, alg = f(self.xc, self.z, P, self.tc)
        # collocation equations, vectorised over the intervals
        for k in range(self.N):
            cols = slice(k * degree, (k + 1) * degree)
            Xk = cs.horzcat(self.x[:, k], self.xc[:, cols])  # nx x (d+1)
            xdot = Xk @ cs.DM(self.C[:, 1:])  # derivatives at the collocation points
            opti.subject_to(xdot == self.h * ode[:, cols])
            opti.subject_to(self.x[:, k + 1] == Xk @ cs.DM(self.D))
        if nz:
            opti.subject_to(cs.vec(alg) == 0)
        # initial guesses: the model's consistent initial point everywhere
        try:
            init = initialize(cm, self._p_base, self.t_start)
            opti.set_initial(self.x, cs.repmat(cs.DM(init.x0), 1, self.N + 1))
            opti.set_initial(self.xc, cs.repmat(cs.DM(init.x0), 1, nd))
            if nz:
                opti.set_initial(self.z, cs.repmat(cs.DM(init.z0), 1, nd))
        except AcausalError:
            pass
        if nu:
            opti.set_initial(self.u, cs.repmat(cs.DM(self._p_base[ic]), 1, self.u.shape[1]))
        if npf:
            opti.set_initial(self.p, self._p_base[ip])
        if self.free_time:
            opti.set_initial(self.t_final, 1.0)

    # ----- name-based views -----
    def state(self, name: str) -> cs.MX:
        """A state at the ``N + 1`` mesh times (a row of :attr:`x`)."""
        names = self.cm.dae.x_names
        if name not in names:
            raise AcausalError(f"{name!r} is not a state of the model; states: {names} "
                               "(other variables: ocp.collocated(name))")
        return self.x[names.index(name), :]

    def control(self, name: str) -> cs.MX:
        """A control: ``N`` values (constant) or ``N d`` values (polynomial)."""
        if name not in self.control_names:
            raise AcausalError(f"{name!r} is not a control; controls: {self.control_names}")
        return self.u[self.control_names.index(name), :]

    def parameter(self, name: str) -> cs.MX:
        """A free parameter (decision variable)."""
        if name not in self.param_names:
            raise AcausalError(f"{name!r} is not a free parameter: {self.param_names}")
        return self.p[self.param_names.index(name)]

    def collocated(self, name: str) -> cs.MX:
        """Any quantity of the model at the ``N d`` collocation points (a row): an output
        by dotted path, a control or a parameter."""
        d = self.cm.dae
        if name in d.p_names:
            return self.P[d.p_names.index(name), :]
        k = d.out_index.get(name)
        if k is None:
            raise AcausalError(f"{name!r} is not a quantity of the model (an output or a "
                               "parameter)"
                               + did_you_mean(name, list(d.out_names) + list(d.p_names)))
        f = cs.Function("out", [d.x, d.z, d.p, d.t], [cs.vec(d.out_expr[k])])
        return f.map(self.N * self.degree)(self.xc, self.z, self.P, self.tc)

    def integral(self, values: cs.MX) -> cs.MX:
        """``int_{t0}^{t0+T} v dt`` of a collocated row ``v`` (the quadrature of the
        collocation points, :func:`quadrature_weights`: exact for polynomials of degree
        ``2d - 2`` with Radau, ``2d - 1`` with Legendre)."""
        # (the weights were B[1:] of the basis through 0 and the collocation points, which
        # sum to 1/2 for Radau of degree 1: every integral came out halved)
        w = cs.DM(np.tile(self.W, self.N))
        if not hasattr(values, "shape") or len(values.shape) != 2 \
                or values.shape[1] != self.N * self.degree:
            raise AcausalError("integral() takes a row at the collocation points "
                               "(ocp.collocated(name) or an expression of such rows), got "
                               f"{values!r:.60}")
        return self.h * cs.mtimes(values, w)

    def start_at_initial_values(self, params: dict[str, float] | None = None) -> None:
        """Constrain ``x(t0)`` to the model's consistent initial values (its fixed
        start values, at the default or given parameters)."""
        init = initialize(self.cm, self.cm.parameter_values(params), self.t_start)
        self.opti.subject_to(self.x[:, 0] == cs.DM(init.x0))

    def guess(self, res: Any) -> None:
        """Initial guess of states and algebraic variables from a simulation result
        (interpolated at the mesh and collocation times); with a free final time, also of
        the horizon: the result's, from ``t_start`` to its end."""
        d = self.cm.dae
        T = float(res.t[-1]) - self.t_start if self.free_time else float(self.t_final)
        if not T > 0:
            raise ArgumentError(
                f"guess: the result ends at t = {float(res.t[-1]):g} s, not after the "
                f"problem's start t_start = {self.t_start:g} s; give a result that covers "
                "the horizon")
        tm = self.t_start + np.arange(self.N + 1) / self.N * T
        tc = self.t_start + self._frac / self.N * T
        X = np.array([np.interp(tm, res.t, res[n]) for n in d.x_names])
        Xc = np.array([np.interp(tc, res.t, res[n]) for n in d.x_names])
        self.opti.set_initial(self.x, X)
        self.opti.set_initial(self.xc, Xc)
        if d.z.numel():
            self.opti.set_initial(self.z, np.array([np.interp(tc, res.t, res[n])
                                                    for n in d.z_names]))
        if self.free_time:
            self.opti.set_initial(self.t_final, T)

    # ----- solving -----
    def solve(self, solver: str = "ipopt", options: dict[str, Any] | None = None,
              verbose: bool = False) -> CollocationSolution:
        """Solve the NLP (IPOPT by default) and return the :class:`CollocationSolution`.

        Raises :class:`AcausalError` with IPOPT's status when it does not converge (the
        last iterate is in ``err.debug``: ``err.debug.value(ocp.x)``).
        """
        opts: dict[str, Any] = {"ipopt.tol": 1e-10, "ipopt.max_iter": 3000}
        if not verbose:
            opts.update({"ipopt.print_level": 0, "print_time": False, "ipopt.sb": "yes"})
        opts.update(options or {})
        self.opti.solver(solver, opts)
        try:
            sol = self.opti.solve()
        except RuntimeError as exc:
            stats = self.opti.stats()
            err = AcausalError(f"the optimal control problem did not converge: "
                               f"{stats.get('return_status', exc)}")
            err.debug = self.opti.debug  # type: ignore[attr-defined]
            raise err from None
        T = float(sol.value(self.t_final)) if self.free_time else float(self.t_final)
        t = self.t_start + np.arange(self.N + 1) / self.N * T
        tc = self.t_start + self._frac / self.N * T
        return CollocationSolution(t, tc, T, float(sol.value(self.opti.f)), sol.stats(),
                                   sol, self)
