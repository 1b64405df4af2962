"""Signal blocks (MSL ``Modelica.Blocks`` conventions): math, continuous, nonlinear, sources.

Blocks are causal: they read signal inputs (``RealInput``) and compute signal outputs
(``RealOutput``). Inside ``equations()`` a signal port *is* its value, so a gain is
``self.y == self.k * self.u``. Results address a signal by its port: ``res["gain.y"]``.

The partial bases follow MSL ``Modelica.Blocks.Interfaces``: ``SO`` (one output ``y``),
``SISO`` (``u`` -> ``y``), ``SI2SO`` (``u1``, ``u2`` -> ``y``), ``MISO`` (vector ``u`` of
``nin`` signals -> ``y``), ``MIMO`` (``u`` of ``nin`` -> ``y`` of ``nout``), and
``SignalSource`` (``SO`` with ``offset`` and ``startTime``).

Parameters that fix sizes or vectors (``nin``, ``k`` of a sum, the coefficients of a transfer
function, a table) are *structural*: they are plain Python values used when the model is
built, and changing them needs a new build. Scalar parameters (gains, time constants,
limits, amplitudes) are symbols that ``simulate(params=...)`` can change without rebuilding.
Parameters that are signal values (an offset, a height, a limit) carry no unit: a block does
not know the unit of its signals (as in the MSL).

Dynamic blocks have a structural ``initType`` (MSL ``Modelica.Blocks.Types.Init``), one of
:class:`Init`; the default here is ``Init.InitialState`` (the states start at their
``*_start`` values).
"""

from __future__ import annotations

from typing import Any

import casadi as cs
import numpy as np

import acausal as ac
from acausal import Parameter, RealInput, RealOutput, Variable, der
from acausal.errors import ModelDefinitionError

__all__ = [
    "Init",
    # interfaces
    "SO",
    "SISO",
    "SI2SO",
    "MISO",
    "MIMO",
    "SignalSource",
    # math
    "Gain",
    "MatrixGain",
    "Add",
    "Feedback",
    "Product",
    "Sum",
    "MultiSum",
    "Abs",
    "Sqrt",
    "Sin",
    "Cos",
    "Exp",
    "Log",
    "Atan2",
    "Division",
    "Min",
    "Max",
    # routing
    "Multiplex",
    "DeMultiplex",
    # continuous
    "Integrator",
    "Derivative",
    "FirstOrder",
    "SecondOrder",
    "TransferFunction",
    "PI",
    "PID",
    "LimPID",
    # nonlinear
    "Limiter",
    "DeadZone",
    "SlewRateLimiter",
    # logical and switching
    "GreaterThreshold",
    "LessThreshold",
    "Greater",
    "Less",
    "And",
    "Or",
    "Not",
    "Switch",
    "Hysteresis",
    "OnOffController",
    # sources
    "Constant",
    "Step",
    "Ramp",
    "Sine",
    "Pulse",
    "TimeTable",
]


class Init:
    """How a dynamic block initialises its states (MSL ``Modelica.Blocks.Types.Init``).

    ``NoInit``: no condition (the start values only complete the initial problem, as
    Modelica tools do); ``SteadyState``: the state derivatives are zero;
    ``InitialState``: the states start at the block's ``*_start`` values;
    ``InitialOutput``: the output starts at ``y_start`` (the remaining states, if any,
    in steady state).
    """

    NoInit = "NoInit"
    SteadyState = "SteadyState"
    InitialState = "InitialState"
    InitialOutput = "InitialOutput"
    ALL = (NoInit, SteadyState, InitialState, InitialOutput)


def _ordered(p: Any, lo: str, hi: str) -> str | None:
    """What is wrong with the limits ``lo <= hi`` of a block (``p``: its values), or
    None; the lower limit may follow the upper one (``-hi`` while not given)."""
    a, b = getattr(p, lo), getattr(p, hi)
    if a <= b:
        return None
    return (f"{lo} = {a} is above {hi} = {b}: the lower limit must not exceed the upper "
            "one" + (f" ({lo} is -{hi} while not given: give {lo}, or a {hi} >= 0)"
                     if a == -b else ""))


def _init_type(doc: str = "how the states are initialised (Init.*)") -> Parameter:
    return Parameter(Init.InitialState, structural=True, doc=doc)


def _check_init(block: ac.Component, allowed: tuple[str, ...] = Init.ALL) -> str:
    value = block.initType
    if value not in allowed:
        raise ModelDefinitionError(
            f"{block._describe()}: initType={value!r} is not one of "
            + ", ".join(f"Init.{a}" for a in allowed)
        )
    return str(value)


class _FirstValues(ac.Component):
    """A block whose structural parameters give the first values of its discrete
    variables (``y_start`` of a sampled block, ``pre_y_start`` of a hysteresis)."""

    # parameter -> the discrete variables whose first value it is (kept in step when the
    # parameter is set after the block was created: it was read once, in __init__, and a
    # later `block.y_start = 5.0` was silently ignored)
    _FIRST_VALUES: dict[str, tuple[str, ...]] = {}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for name in self._FIRST_VALUES:
            self._set_first_values(name)

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name in self._FIRST_VALUES:
            self._set_first_values(name)

    def _set_first_values(self, name: str) -> None:
        value = getattr(self, name)
        try:
            first = float(value)
        except (TypeError, ValueError):
            raise ModelDefinitionError(
                f"{self._describe()}: {name} must be a number, got {value!r}") from None
        for var in self._FIRST_VALUES[name]:
            self.__dict__["_vars"][var].start = first


# --------------------------------------------------------------------------------------
# Interfaces (partial blocks)
# --------------------------------------------------------------------------------------


class SO(ac.Component):
    """Partial block with one output ``y``."""

    y = RealOutput("output signal")


class SISO(SO):
    """Partial block with one input ``u`` and one output ``y``."""

    u = RealInput("input signal")


class SI2SO(SO):
    """Partial block with two inputs ``u1``, ``u2`` and one output ``y``."""

    u1 = RealInput("first input signal")
    u2 = RealInput("second input signal")


class SignalSource(SO):
    """Partial source ``y = offset + (signal starting at startTime)``.

    Parameters
    ----------
    offset : output before startTime and added after it [unit of y]
    startTime : time at which the signal starts [s]
    """

    offset = Parameter(0.0, doc="offset of the output signal")
    startTime = Parameter(0.0, unit="s", doc="start time of the signal")


_SIZED: dict[tuple[type, tuple[Any, ...]], type] = {}


class _Sized(ac.Component):
    """Base of blocks whose port or state sizes follow structural parameters.

    Declarations stay in class bodies: ``Sum(nin=3)`` is an instance of a cached subclass
    of ``Sum`` (same name) whose ``u`` is declared ``RealInput(size=3)``.
    """

    _sizes: tuple[Any, ...] = ()

    @classmethod
    def _sized_declarations(cls, kwargs: dict[str, Any]) -> tuple[tuple[Any, ...],
                                                                  dict[str, Any]]:
        raise NotImplementedError

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        base = cls.__dict__.get("_unsized", cls)
        sizes, decls = base._sized_declarations(kwargs)
        if base is not cls and sizes == cls._sizes:
            return super().__new__(cls)
        sub = _SIZED.get((base, sizes))
        if sub is None:
            ns = {"__module__": base.__module__, "__qualname__": base.__qualname__,
                  "__doc__": base.__doc__, "_unsized": base, "_sizes": sizes, **decls}
            sub = type(base.__name__, (base,), ns)
            _SIZED[(base, sizes)] = sub
        return super().__new__(sub)


def _positive_int(cls: type, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ModelDefinitionError(
            f"{cls.__name__}: {name} must be a positive integer (a number of signals), "
            f"got {value!r}"
        )
    return int(value)


def _vector(block: ac.Component, name: str, value: Any, size: int | None = None,
            default: float | None = None, per: str = "input") -> np.ndarray:
    """A structural parameter as a float vector (checked: finite, one entry ``per`` input
    or state, ``size`` of them)."""
    if value is None and default is not None and size is not None:
        return np.full(size, default)
    try:
        arr = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelDefinitionError(
            f"{block._describe()}: {name} must be a sequence of numbers, got {value!r}"
        ) from None
    if not np.all(np.isfinite(arr)):
        raise ModelDefinitionError(f"{block._describe()}: {name} = {value!r} is not finite")
    if size is not None and arr.size != size:
        raise ModelDefinitionError(
            f"{block._describe()}: {name} has {arr.size} entries but the block has {size} "
            f"{per}s; give one entry per {per}"
        )
    return arr


class MISO(_Sized, SO):
    """Partial block with a vector input ``u`` of ``nin`` signals and one output ``y``.

    Parameters
    ----------
    nin : number of inputs [1] (structural)
    """

    nin = Parameter(2, structural=True, unit="1", doc="number of inputs")

    @classmethod
    def _sized_declarations(cls, kwargs: dict[str, Any]) -> tuple[tuple[Any, ...],
                                                                  dict[str, Any]]:
        n = _positive_int(cls, "nin", kwargs.get("nin", cls.nin.default))
        return (n,), {"u": RealInput(f"vector of {n} input signals", size=n)}


class MIMO(_Sized):
    """Partial block with a vector input ``u`` of ``nin`` and a vector output ``y`` of
    ``nout`` signals.

    Parameters
    ----------
    nin, nout : number of inputs and outputs [1] (structural)
    """

    nin = Parameter(1, structural=True, unit="1", doc="number of inputs")
    nout = Parameter(1, structural=True, unit="1", doc="number of outputs")

    @classmethod
    def _io_sizes(cls, kwargs: dict[str, Any]) -> tuple[int, int]:
        return (_positive_int(cls, "nin", kwargs.get("nin", cls.nin.default)),
                _positive_int(cls, "nout", kwargs.get("nout", cls.nout.default)))

    @classmethod
    def _sized_declarations(cls, kwargs: dict[str, Any]) -> tuple[tuple[Any, ...],
                                                                  dict[str, Any]]:
        nin, nout = cls._io_sizes(kwargs)
        return (nin, nout), {"u": RealInput(f"vector of {nin} input signals", size=nin),
                             "y": RealOutput(f"vector of {nout} output signals", size=nout)}


# --------------------------------------------------------------------------------------
# Math
# --------------------------------------------------------------------------------------


class Gain(SISO):
    """Output the input times a gain: ``y = k u``.

    Parameters
    ----------
    k : gain [1]
    """

    k = Parameter(1.0, unit="1", doc="gain")

    def equations(self):
        return [self.y == self.k * self.u]


class MatrixGain(MIMO):
    """Output the product of a gain matrix with the input vector: ``y = K u``.

    Parameters
    ----------
    K : gain matrix, ``nout`` x ``nin`` (structural; its shape sets the port sizes)
    """

    K = Parameter([[1.0]], structural=True, unit="1", doc="gain matrix nout x nin")

    @classmethod
    def _io_sizes(cls, kwargs: dict[str, Any]) -> tuple[int, int]:
        K = cls._matrix(kwargs.get("K", cls.K.default))
        return int(K.shape[1]), int(K.shape[0])

    @staticmethod
    def _matrix(value: Any) -> np.ndarray:
        """``K`` as a 2-D array of finite numbers (a list of equal rows, or one row)."""
        try:
            K = np.atleast_2d(np.asarray(value, dtype=float))
        except (TypeError, ValueError):  # (ragged rows, text)
            K = np.empty((0, 0))
        if K.ndim != 2 or K.size == 0 or not np.all(np.isfinite(K)):
            raise ModelDefinitionError(
                "MatrixGain: K must be a non-empty matrix (nout rows of nin numbers) of "
                f"finite numbers, got {value!r}")
        return K

    def __init__(self, **kwargs: Any) -> None:
        K = self._matrix(kwargs.get("K", type(self).K.default))
        kwargs.setdefault("nin", K.shape[1])
        kwargs.setdefault("nout", K.shape[0])
        super().__init__(**kwargs)

    def equations(self):
        K = np.atleast_2d(np.asarray(self.K, dtype=float))
        if K.shape != (self.nout, self.nin):
            raise ModelDefinitionError(
                f"{self._describe()}: K has shape {K.shape} but the ports are sized for "
                f"{(self.nout, self.nin)}; give K when the block is created"
            )
        return [self.y == cs.mtimes(cs.DM(K), self.u)]


class Add(SI2SO):
    """Weighted sum of two inputs: ``y = k1 u1 + k2 u2``.

    Parameters
    ----------
    k1, k2 : gains of the inputs [1]
    """

    k1 = Parameter(1.0, unit="1", doc="gain of u1")
    k2 = Parameter(1.0, unit="1", doc="gain of u2")

    def equations(self):
        return [self.y == self.k1 * self.u1 + self.k2 * self.u2]


class Feedback(SI2SO):
    """Difference of the reference and the feedback signal: ``y = u1 - u2``."""

    def equations(self):
        return [self.y == self.u1 - self.u2]


class Product(SI2SO):
    """Product of two inputs: ``y = u1 u2``."""

    def equations(self):
        return [self.y == self.u1 * self.u2]


class Sum(MISO):
    """Weighted sum of a vector input: ``y = sum_i k_i u_i`` (MSL ``Math.Sum``).

    Parameters
    ----------
    nin : number of inputs [1] (structural; default ``len(k)`` if ``k`` is given, else 2)
    k : gains, one per input [1] (structural; default all ones)
    """

    k = Parameter(None, structural=True, unit="1", doc="gains of the inputs (default ones)")

    @classmethod
    def _sized_declarations(cls, kwargs: dict[str, Any]) -> tuple[tuple[Any, ...],
                                                                  dict[str, Any]]:
        if "nin" not in kwargs and kwargs.get("k") is not None:
            kwargs = {**kwargs, "nin": cls._count(kwargs["k"])}
        return super()._sized_declarations(kwargs)

    def __init__(self, **kwargs: Any) -> None:
        if "nin" not in kwargs and kwargs.get("k") is not None:
            kwargs["nin"] = self._count(kwargs["k"])
        super().__init__(**kwargs)

    @classmethod
    def _count(cls, k: Any) -> int:
        """The number of gains ``k`` (its entries are checked at the build)."""
        try:
            return int(np.size(np.asarray(k, dtype=float)))
        except (TypeError, ValueError):
            raise ModelDefinitionError(
                f"{cls.__name__}: k must be a sequence of numbers, one gain per input, "
                f"got {k!r}") from None

    def equations(self):
        k = _vector(self, "k", self.k, self.nin, default=1.0)
        return [self.y == cs.dot(cs.DM(k), self.u)]


class MultiSum(Sum):
    """Same as :class:`Sum` (the name of MSL ``Math.MultiSum``): ``y = sum_i k_i u_i``."""


class Abs(SISO):
    """Absolute value ``y = |u|``."""

    def equations(self):
        return [self.y == cs.fabs(self.u)]


class Sqrt(SISO):
    """Square root ``y = sqrt(u)`` (``u`` must stay >= 0)."""

    def equations(self):
        return [self.y == cs.sqrt(self.u)]


class Sin(SISO):
    """``y = sin(u)`` (u in rad)."""

    def equations(self):
        return [self.y == cs.sin(self.u)]


class Cos(SISO):
    """``y = cos(u)`` (u in rad)."""

    def equations(self):
        return [self.y == cs.cos(self.u)]


class Exp(SISO):
    """``y = exp(u)``."""

    def equations(self):
        return [self.y == cs.exp(self.u)]


class Log(SISO):
    """Natural logarithm ``y = log(u)`` (``u`` must stay > 0)."""

    def equations(self):
        return [self.y == cs.log(self.u)]


class Atan2(SI2SO):
    """``y = atan2(u1, u2)``: the angle of the point ``(u2, u1)`` [rad], in (-pi, pi]."""

    def equations(self):
        return [self.y == cs.atan2(self.u1, self.u2)]


class Division(SI2SO):
    """Quotient ``y = u1 / u2`` (``u2`` must not reach 0)."""

    def equations(self):
        return [self.y == self.u1 / self.u2]


class Min(SI2SO):
    """The smaller input ``y = min(u1, u2)`` (the switch between them is an event)."""

    def equations(self):
        return [self.y == cs.fmin(self.u1, self.u2)]


class Max(SI2SO):
    """The larger input ``y = max(u1, u2)`` (the switch between them is an event)."""

    def equations(self):
        return [self.y == cs.fmax(self.u1, self.u2)]


# --------------------------------------------------------------------------------------
# Routing
# --------------------------------------------------------------------------------------


class Multiplex(_Sized, SO):
    """Combine ``n`` scalar inputs ``u1 .. un`` into the vector output ``y``.

    Parameters
    ----------
    n : number of inputs [1] (structural)
    """

    n = Parameter(2, structural=True, unit="1", doc="number of scalar inputs")

    @classmethod
    def _sized_declarations(cls, kwargs: dict[str, Any]) -> tuple[tuple[Any, ...],
                                                                  dict[str, Any]]:
        n = _positive_int(cls, "n", kwargs.get("n", cls.n.default))
        decls: dict[str, Any] = {f"u{k + 1}": RealInput(f"input {k + 1}") for k in range(n)}
        decls["y"] = RealOutput(f"vector of the {n} inputs", size=n)
        return (n,), decls

    def equations(self):
        return [self.y == cs.vertcat(*[getattr(self, f"u{k + 1}") for k in range(self.n)])]


class DeMultiplex(_Sized, ac.Component):
    """Split the vector input ``u`` of ``n`` signals into scalar outputs ``y1 .. yn``.

    Parameters
    ----------
    n : number of outputs [1] (structural)
    """

    n = Parameter(2, structural=True, unit="1", doc="number of scalar outputs")

    @classmethod
    def _sized_declarations(cls, kwargs: dict[str, Any]) -> tuple[tuple[Any, ...],
                                                                  dict[str, Any]]:
        n = _positive_int(cls, "n", kwargs.get("n", cls.n.default))
        decls: dict[str, Any] = {f"y{k + 1}": RealOutput(f"output {k + 1}") for k in range(n)}
        decls["u"] = RealInput(f"vector of {n} signals", size=n)
        return (n,), decls

    def equations(self):
        return [getattr(self, f"y{k + 1}") == self.u[k] for k in range(self.n)]


# --------------------------------------------------------------------------------------
# Continuous
# --------------------------------------------------------------------------------------


class Integrator(SISO):
    """Integrator ``dy/dt = k u`` (without reset).

    Parameters
    ----------
    k : integrator gain [1/s]
    y_start : initial output [unit of y]
    initType : Init.InitialState (y = y_start, default), SteadyState (u = 0 at the
        start), InitialOutput (same as InitialState) or NoInit (structural)
    """

    k = Parameter(1.0, unit="1/s", doc="integrator gain")
    y_start = Parameter(0.0, doc="initial output")
    initType = _init_type()

    def equations(self):
        return [der(self.y) == self.k * self.u]

    def initial_equations(self):
        init = _check_init(self)
        if init in (Init.InitialState, Init.InitialOutput):
            return [self.y == self.y_start]
        if init == Init.SteadyState:
            return [der(self.y) == 0]
        return []


class Derivative(SISO):
    """Approximate derivative ``y = k s/(T s + 1) u`` (MSL ``Continuous.Derivative``).

    ``dx/dt = (u - x)/T``, ``y = (k/T) (u - x)``: the derivative of ``u`` filtered by a
    first-order lag of time constant ``T``.

    Parameters
    ----------
    k : gain [1]
    T : filter time constant [s], > 0 (smaller: closer to the ideal derivative, stiffer)
    x_start : initial state [unit of u]
    y_start : initial output, used with Init.InitialOutput [unit of y]
    initType : Init.InitialState (x = x_start, default), SteadyState, InitialOutput,
        NoInit (structural)

    Variables
    ---------
    x : filter state [unit of u]
    """

    k = Parameter(1.0, unit="1", doc="gain")
    T = Parameter(0.01, unit="s", doc="time constant of the filter", min=0.0, min_inclusive=False)
    x_start = Parameter(0.0, doc="initial state")
    y_start = Parameter(0.0, doc="initial output (Init.InitialOutput)")
    initType = _init_type()
    x = Variable(doc="state of the block (low-pass filtered input)")

    def equations(self):
        return [der(self.x) == (self.u - self.x) / self.T,
                self.y == self.k / self.T * (self.u - self.x)]

    def initial_equations(self):
        init = _check_init(self)
        if init == Init.InitialState:
            return [self.x == self.x_start]
        if init == Init.SteadyState:
            return [der(self.x) == 0]
        if init == Init.InitialOutput:
            return [self.y == self.y_start]
        return []


class FirstOrder(SISO):
    """First-order lag ``y = k/(T s + 1) u``: ``T dy/dt = k u - y``.

    Parameters
    ----------
    k : gain [1]
    T : time constant [s], > 0
    y_start : initial output [unit of y]
    initType : Init.InitialState (y = y_start, default), SteadyState, InitialOutput (same
        as InitialState), NoInit (structural)
    """

    k = Parameter(1.0, unit="1", doc="gain")
    T = Parameter(1.0, unit="s", doc="time constant", min=0.0, min_inclusive=False)
    y_start = Parameter(0.0, doc="initial output")
    initType = _init_type()

    def equations(self):
        return [self.T * der(self.y) == self.k * self.u - self.y]

    def initial_equations(self):
        init = _check_init(self)
        if init in (Init.InitialState, Init.InitialOutput):
            return [self.y == self.y_start]
        if init == Init.SteadyState:
            return [der(self.y) == 0]
        return []


class SecondOrder(SISO):
    """Second-order system ``y = k w^2/(s^2 + 2 D w s + w^2) u``.

    ``dy/dt = yd``, ``dyd/dt = w (w (k u - y) - 2 D yd)``.

    Parameters
    ----------
    k : gain [1]
    w : angular frequency [rad/s], > 0
    D : damping ratio [1], >= 0
    y_start, yd_start : initial output and its derivative [unit of y, unit of y / s]
    initType : Init.InitialState (default) or InitialOutput (both: y = y_start,
        yd = yd_start), SteadyState, NoInit (structural)

    Variables
    ---------
    yd : derivative of y [unit of y / s]
    """

    k = Parameter(1.0, unit="1", doc="gain")
    w = Parameter(1.0, unit="rad/s", doc="angular frequency", min=0.0, min_inclusive=False)
    D = Parameter(1.0, unit="1", doc="damping ratio", min=0.0)
    y_start = Parameter(0.0, doc="initial output")
    yd_start = Parameter(0.0, doc="initial derivative of the output")
    initType = _init_type()
    yd = Variable(doc="derivative of y", state_priority=1)

    def equations(self):
        return [der(self.y) == self.yd,
                der(self.yd) == self.w * (self.w * (self.k * self.u - self.y)
                                          - 2 * self.D * self.yd)]

    def initial_equations(self):
        init = _check_init(self)
        if init in (Init.InitialState, Init.InitialOutput):
            return [self.y == self.y_start, self.yd == self.yd_start]
        if init == Init.SteadyState:
            return [der(self.y) == 0, der(self.yd) == 0]
        return []


class TransferFunction(SISO, _Sized):
    """Linear transfer function ``y = (b[0] s^m + ... + b[m])/(a[0] s^n + ... + a[n]) u``.

    Controllable canonical form (as MSL ``Continuous.TransferFunction``), with the states
    scaled by ``a_end = a[n]`` (or 1 if ``a[n]`` is negligible) so that they have the size
    of the input::

        d = b~[0]/a[0]          (b~ = b padded with leading zeros to the length of a)
        a[0] dx[0]/dt = a_end u - a[1:] . x
        dx[k]/dt = x[k-1],      k = 1 .. n-1
        y = (b~[1:] - d a[1:]) . x / a_end + d u

    The transfer function must be proper (``len(b) <= len(a)``, ``a[0] != 0``); ``build``
    raises :class:`~acausal.ModelDefinitionError` naming the block otherwise.

    Parameters
    ----------
    b : numerator coefficients, highest power of s first (structural)
    a : denominator coefficients, highest power of s first (structural)
    x_start : initial (scaled) states, default zeros (structural)
    y_start : initial output, used with Init.InitialOutput [unit of y]
    initType : Init.InitialState (x = x_start, default), SteadyState, InitialOutput
        (y = y_start, the other states steady), NoInit (structural)

    Variables
    ---------
    x : scaled states of the controllable canonical form (size ``len(a) - 1``)
    """

    b = Parameter([1.0], structural=True, doc="numerator coefficients (highest power first)")
    a = Parameter([1.0, 1.0], structural=True,
                  doc="denominator coefficients (highest power first)")
    x_start = Parameter(None, structural=True, doc="initial scaled states (default zeros)")
    y_start = Parameter(0.0, doc="initial output (Init.InitialOutput)")
    initType = _init_type()

    @classmethod
    def _sized_declarations(cls, kwargs: dict[str, Any]) -> tuple[tuple[Any, ...],
                                                                  dict[str, Any]]:
        a = kwargs.get("a", cls.a.default)
        try:
            nx = len(a) - 1
        except TypeError:
            raise ModelDefinitionError(
                f"TransferFunction: a must be a sequence of coefficients, got {a!r}"
            ) from None
        nx = max(nx, 0)
        decls = {"x": Variable(doc="scaled states of the controllable canonical form",
                               size=nx)} if nx > 0 else {}
        return (nx,), decls

    def _coefficients(self) -> tuple[np.ndarray, np.ndarray, int]:
        a = _vector(self, "a", self.a)
        b = _vector(self, "b", self.b)
        nx = type(self)._sizes[0]
        if a.size == 0 or a[0] == 0.0:
            raise ModelDefinitionError(
                f"{self._describe()}: the leading denominator coefficient a[0] must be "
                f"nonzero (a = {a.tolist()}); drop leading zeros of a"
            )
        if b.size == 0:
            raise ModelDefinitionError(f"{self._describe()}: the numerator b is empty")
        if b.size > a.size:
            raise ModelDefinitionError(
                f"{self._describe()}: the transfer function is not proper: the numerator "
                f"b = {b.tolist()} has degree {b.size - 1} > {a.size - 1}, the degree of the "
                f"denominator a = {a.tolist()}; an improper transfer function differentiates "
                "its input (use Derivative, or add poles to a)"
            )
        if a.size - 1 != nx:
            raise ModelDefinitionError(
                f"{self._describe()}: a was changed after the block was created; create a "
                "new TransferFunction with the new coefficients"
            )
        return a, np.concatenate([np.zeros(a.size - b.size), b]), nx

    def equations(self):
        a, bb, nx = self._coefficients()
        d = bb[0] / a[0]
        if nx == 0:
            return [self.y == d * self.u]
        a_end = a[-1] if abs(a[-1]) > 100 * np.finfo(float).eps * np.linalg.norm(a) else 1.0
        x = self.x
        eqs = [a[0] * der(x[0]) == a_end * self.u - cs.dot(cs.DM(a[1:]), x)]
        eqs += [der(x[k]) == x[k - 1] for k in range(1, nx)]
        eqs.append(self.y == cs.dot(cs.DM(bb[1:] - d * a[1:]), x) / a_end + d * self.u)
        return eqs

    def initial_equations(self):
        init = _check_init(self)
        a, _, nx = self._coefficients()
        if nx == 0 or init == Init.NoInit:
            return []
        if init == Init.InitialState:
            x0 = _vector(self, "x_start", self.x_start, nx, default=0.0, per="state")
            return [self.x[k] == x0[k] for k in range(nx)]
        if init == Init.SteadyState:
            return [der(self.x[k]) == 0 for k in range(nx)]
        return [self.y == self.y_start] + [der(self.x[k]) == 0 for k in range(1, nx)]


class PI(SISO):
    """Proportional-integral controller ``y = k (1 + 1/(T s)) u`` (MSL ``Continuous.PI``).

    ``dx/dt = u/T``, ``y = k (x + u)``. No output limits: see :class:`LimPID`.

    Parameters
    ----------
    k : gain [1]
    T : integrator time constant [s], > 0
    x_start : initial integrator state [unit of u]
    y_start : initial output, used with Init.InitialOutput [unit of y]
    initType : Init.InitialState (x = x_start, default), SteadyState, InitialOutput,
        NoInit (structural)

    Variables
    ---------
    x : integrator state [unit of u]
    """

    k = Parameter(1.0, unit="1", doc="gain")
    T = Parameter(1.0, unit="s", doc="time constant of the integrator",
                  min=0.0, min_inclusive=False)
    x_start = Parameter(0.0, doc="initial integrator state")
    y_start = Parameter(0.0, doc="initial output (Init.InitialOutput)")
    initType = _init_type()
    x = Variable(doc="state of the integrator")

    def equations(self):
        return [der(self.x) == self.u / self.T, self.y == self.k * (self.x + self.u)]

    def initial_equations(self):
        init = _check_init(self)
        if init == Init.InitialState:
            return [self.x == self.x_start]
        if init == Init.SteadyState:
            return [der(self.x) == 0]
        if init == Init.InitialOutput:
            return [self.y == self.y_start]
        return []


class PID(SISO):
    """PID controller ``y = k (1 + 1/(Ti s) + Td s/(Td/Nd s + 1)) u`` (MSL
    ``Continuous.PID``, no limits: see :class:`LimPID`).

    ``dxi/dt = u/Ti``; ``Tf = max(Td/Nd, 1e-14)``, ``dxd/dt = (u - xd)/Tf``,
    ``D = (Td/Tf) (u - xd)``; ``y = k (u + xi + D)``.

    Parameters
    ----------
    k : gain [1]
    Ti : integral time constant [s], > 0
    Td : derivative time constant [s], >= 0
    Nd : the higher, the more ideal the derivative block [1], > 0
    xi_start, xd_start : initial states of the integrator and the derivative filter
    y_start : initial output, used with Init.InitialOutput
    initType : Init.InitialState (default), SteadyState, InitialOutput, NoInit (structural)

    Variables
    ---------
    xi : integrator state; xd : derivative filter state; D : derivative part
    """

    k = Parameter(1.0, unit="1", doc="gain")
    Ti = Parameter(0.5, unit="s", doc="integral time constant", min=0.0, min_inclusive=False)
    Td = Parameter(0.1, unit="s", doc="derivative time constant", min=0.0)
    Nd = Parameter(10.0, unit="1", doc="the higher, the more ideal the derivative block",
                   min=0.0, min_inclusive=False)
    xi_start = Parameter(0.0, doc="initial integrator state")
    xd_start = Parameter(0.0, doc="initial state of the derivative filter")
    y_start = Parameter(0.0, doc="initial output (Init.InitialOutput)")
    initType = _init_type()
    xi = Variable(doc="state of the integrator")
    xd = Variable(doc="state of the derivative filter")
    D = Variable(doc="derivative part (before the gain k)")

    def equations(self):
        Tf = cs.fmax(self.Td / self.Nd, 1e-14)
        return [der(self.xi) == self.u / self.Ti,
                der(self.xd) == (self.u - self.xd) / Tf,
                self.D == self.Td / Tf * (self.u - self.xd),
                self.y == self.k * (self.u + self.xi + self.D)]

    def initial_equations(self):
        init = _check_init(self)
        if init == Init.InitialState:
            return [self.xi == self.xi_start, self.xd == self.xd_start]
        if init == Init.SteadyState:
            return [der(self.xi) == 0, der(self.xd) == 0]
        if init == Init.InitialOutput:
            return [self.y == self.y_start, der(self.xd) == 0]
        return []


class LimPID(ac.Component):
    """P, PI, PD or PID controller with output limits and anti-windup (MSL
    ``Continuous.LimPID``).

    Set-point weighting, a filtered derivative, and back-calculation anti-windup: while
    the output saturates, the difference between the limited and the unlimited output is
    fed back into the integrator with the gain ``1/(k Ni)``, so the integrator stops
    winding up. With ``e = u_s - u_m``::

        P  = wp u_s - u_m
        Tf = max(Td/Nd, 1e-14),  dxd/dt = (wd u_s - u_m - xd)/Tf,  D = (Td/Tf)(wd u_s - u_m - xd)
        dxi/dt = (e + (y - y_unlimited)/(k Ni)) / Ti
        y_unlimited = k (P + xi + D)
        y = min(max(y_unlimited, yMin), yMax)

    ``controllerType`` ``"P"`` drops the integral and derivative parts (``xi = xd = 0``),
    ``"PI"`` the derivative part, ``"PD"`` the integral part.

    Ports
    -----
    u_s : set point (reference); u_m : measurement; y : limited control output

    Parameters
    ----------
    controllerType : "P", "PI", "PD" or "PID" (structural)
    k : gain [1], > 0
    Ti : integral time constant [s], > 0
    Td : derivative time constant [s], >= 0
    yMax : upper output limit
    yMin : lower output limit (default ``-yMax``, following yMax while not given)
    wp : set-point weight of the proportional part [1], >= 0
    wd : set-point weight of the derivative part [1], >= 0
    Ni : ``Ni Ti`` is the time constant of the anti-windup compensation [1], > 0
    Nd : the higher, the more ideal the derivative block [1], > 0
    xi_start, xd_start : initial states of the integrator and the derivative filter
    y_start : initial output before the limiter, ``y_unlimited``, used with
        Init.InitialOutput (MSL ``gainPID.y = y_start``; the output ``y`` starts there when
        it lies within the limits)
    initType : Init.InitialState (default), SteadyState, InitialOutput (with an
        integrator: "PI" or "PID"), NoInit (structural)

    Variables
    ---------
    controlError : u_s - u_m; xi : integrator state; xd : derivative filter state;
    y_unlimited : controller output before the limiter

    References
    ----------
    K. J. Astroem, T. Haegglund, *PID Controllers: Theory, Design, and Tuning*, 2nd ed.,
    ISA, 1995, section 3.5 (integrator windup, back-calculation).
    """

    u_s = RealInput("set point (reference signal)")
    u_m = RealInput("measurement (feedback signal)")
    y = RealOutput("limited controller output")
    controllerType = Parameter("PID", structural=True, doc='"P", "PI", "PD" or "PID"')
    k = Parameter(1.0, unit="1", doc="gain of the controller", min=0.0, min_inclusive=False)
    Ti = Parameter(0.5, unit="s", doc="integral time constant", min=0.0, min_inclusive=False)
    Td = Parameter(0.1, unit="s", doc="derivative time constant", min=0.0)
    yMax = Parameter(1.0, doc="upper limit of the output")
    yMin = Parameter(doc="lower limit of the output (default -yMax)",
                     follows=lambda p: -p.yMax)
    wp = Parameter(1.0, unit="1", doc="set-point weight of the proportional part", min=0.0)
    wd = Parameter(0.0, unit="1", doc="set-point weight of the derivative part", min=0.0)
    Ni = Parameter(0.9, unit="1", doc="Ni*Ti is the time constant of anti-windup",
                   min=0.0, min_inclusive=False)
    Nd = Parameter(10.0, unit="1", doc="the higher, the more ideal the derivative block",
                   min=0.0, min_inclusive=False)
    xi_start = Parameter(0.0, doc="initial integrator state")
    xd_start = Parameter(0.0, doc="initial state of the derivative filter")
    y_start = Parameter(0.0, doc="initial output (Init.InitialOutput)")
    initType = _init_type()
    controlError = Variable(doc="control error u_s - u_m")
    xi = Variable(doc="state of the integrator")
    xd = Variable(doc="state of the derivative filter")
    y_unlimited = Variable(doc="controller output before the limiter")

    _TYPES = ("P", "PI", "PD", "PID")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if self.controllerType not in self._TYPES:
            raise ModelDefinitionError(
                f"{self._describe()}: controllerType={self.controllerType!r} is not one of "
                + ", ".join(repr(t) for t in self._TYPES)
            )

    def check_parameters(self, p):
        return _ordered(p, "yMin", "yMax")

    @property
    def _with_I(self) -> bool:
        return self.controllerType in ("PI", "PID")

    @property
    def _with_D(self) -> bool:
        return self.controllerType in ("PD", "PID")

    def equations(self):
        e_d = self.wd * self.u_s - self.u_m
        eqs = [self.controlError == self.u_s - self.u_m]
        if self._with_D:
            Tf = cs.fmax(self.Td / self.Nd, 1e-14)
            eqs.append(der(self.xd) == (e_d - self.xd) / Tf)
            D = self.Td / Tf * (e_d - self.xd)
        else:
            eqs.append(self.xd == 0)
            D = 0
        eqs.append(self.y_unlimited == self.k * (self.wp * self.u_s - self.u_m + self.xi + D))
        eqs.append(self.y == cs.fmin(cs.fmax(self.y_unlimited, self.yMin), self.yMax))
        if self._with_I:
            track = (self.y - self.y_unlimited) / (self.k * self.Ni)
            eqs.append(der(self.xi) == (self.controlError + track) / self.Ti)
        else:
            eqs.append(self.xi == 0)
        return eqs

    def initial_equations(self):
        init = _check_init(self)
        states = ([(self.xi, self.xi_start)] if self._with_I else []) + (
            [(self.xd, self.xd_start)] if self._with_D else [])
        if init == Init.InitialState:
            return [x == x0 for x, x0 in states]
        if init == Init.SteadyState:
            return [der(x) == 0 for x, _ in states]
        if init == Init.InitialOutput:
            if not self._with_I:
                # (y_start was silently ignored: nothing can make the output start there)
                raise ModelDefinitionError(
                    f"{self._describe()}: initType=Init.InitialOutput sets the integrator "
                    f"so that the output starts at y_start, and controllerType="
                    f"{self.controllerType!r} has no integrator; take 'PI' or 'PID', or "
                    "another initType")
            # the unlimited output, as MSL's gainPID.y = y_start: it is smooth in xi (the
            # limited one is flat while the start guess saturates it, and Newton stalled
            # there: y_start = 1.5 within +-2 was 'no consistent initial values')
            return [self.y_unlimited == self.y_start] + (
                [der(self.xd) == 0] if self._with_D else [])
        return []


# --------------------------------------------------------------------------------------
# Nonlinear
# --------------------------------------------------------------------------------------


class Limiter(SISO):
    """Limit the signal between ``uMin`` and ``uMax``: ``y = min(max(u, uMin), uMax)``.

    Parameters
    ----------
    uMax : upper limit
    uMin : lower limit (default ``-uMax``)
    """

    uMax = Parameter(1.0, doc="upper limit of the input signal")
    uMin = Parameter(doc="lower limit of the input signal (default -uMax)",
                     follows=lambda p: -p.uMax)

    def check_parameters(self, p):
        return _ordered(p, "uMin", "uMax")

    def equations(self):
        return [self.y == cs.fmin(cs.fmax(self.u, self.uMin), self.uMax)]


class DeadZone(SISO):
    """Zero output inside ``[uMin, uMax]``, the excess outside::

        y = u - uMax   if u > uMax
        y = u - uMin   if u < uMin
        y = 0          otherwise

    Parameters
    ----------
    uMax : upper limit of the dead zone
    uMin : lower limit of the dead zone (default ``-uMax``)
    """

    uMax = Parameter(1.0, doc="upper limit of the dead zone")
    uMin = Parameter(doc="lower limit of the dead zone (default -uMax)",
                     follows=lambda p: -p.uMax)

    def check_parameters(self, p):
        return _ordered(p, "uMin", "uMax")

    def equations(self):
        u = self.u
        return [self.y == cs.if_else(u > self.uMax, u - self.uMax,
                                     cs.if_else(u < self.uMin, u - self.uMin, 0.0))]


class SlewRateLimiter(SISO):
    """Limit the rate of change of a signal (MSL ``Nonlinear.SlewRateLimiter``): ``y``
    follows ``u`` with time constant ``Td`` and a rate between ``Falling`` and ``Rising``::

        der(y) = min(max((u - y) / Td, Falling), Rising)

    A step of the input gives a ramp at the rate limit until ``y`` is within
    ``Rising Td`` (or ``Falling Td``) of it, then an exponential approach. The switches
    between the three regimes are events (MSL writes them without).

    Parameters
    ----------
    Rising : largest rate [unit of u/s], > 0
    Falling : smallest rate [unit of u/s], < 0 (default ``-Rising``)
    Td : time constant of the approach [s], > 0; small against the time scale of ``u``
    y_start : initial output
    initType : Init.InitialState (y = y_start, default, as for every block here; MSL's
        default is SteadyState), SteadyState (y = u), InitialOutput (same as
        InitialState), NoInit (structural)
    """

    Rising = Parameter(1.0, doc="largest rate of change of y [unit of u/s]",
                       min=0.0, min_inclusive=False)
    Falling = Parameter(doc="smallest rate of change of y (default -Rising)",
                        follows=lambda p: -p.Rising)
    Td = Parameter(1e-3, unit="s", doc="time constant of the approach",
                   min=0.0, min_inclusive=False)
    y_start = Parameter(0.0, doc="initial output")
    initType = _init_type()

    def check_parameters(self, p):
        if p.Falling >= 0:  # (-Rising while not given: Rising > 0 already checked)
            return f"Falling = {p.Falling} must be < 0"
        return None

    def equations(self):
        rate = cs.fmin(cs.fmax((self.u - self.y) / self.Td, self.Falling), self.Rising)
        return [der(self.y) == rate]

    def initial_equations(self):
        init = _check_init(self)
        if init in (Init.InitialState, Init.InitialOutput):
            return [self.y == self.y_start]
        if init == Init.SteadyState:
            return [self.y == self.u]
        return []


# --------------------------------------------------------------------------------------
# Logical and switching (MSL Modelica.Blocks.Logical). The library has no Boolean
# connector: a logical signal is a real one that is 1 (true) or 0 (false), and a logical
# input counts as true above 0.5. Every switch is an event.
# --------------------------------------------------------------------------------------


def _truth(condition: Any) -> Any:
    return cs.if_else(condition, 1.0, 0.0)


class GreaterThreshold(SISO):
    """``y = 1`` where ``u > threshold``, else 0.

    Parameters
    ----------
    threshold : the comparison value
    """

    threshold = Parameter(0.0, doc="comparison value")

    def equations(self):
        return [self.y == _truth(self.u > self.threshold)]


class LessThreshold(SISO):
    """``y = 1`` where ``u < threshold``, else 0.

    Parameters
    ----------
    threshold : the comparison value
    """

    threshold = Parameter(0.0, doc="comparison value")

    def equations(self):
        return [self.y == _truth(self.u < self.threshold)]


class Greater(SI2SO):
    """``y = 1`` where ``u1 > u2``, else 0."""

    def equations(self):
        return [self.y == _truth(self.u1 > self.u2)]


class Less(SI2SO):
    """``y = 1`` where ``u1 < u2``, else 0."""

    def equations(self):
        return [self.y == _truth(self.u1 < self.u2)]


class And(SI2SO):
    """``y = 1`` where both logical inputs are true (> 0.5), else 0."""

    def equations(self):
        return [self.y == _truth(cs.logic_and(self.u1 > 0.5, self.u2 > 0.5))]


class Or(SI2SO):
    """``y = 1`` where either logical input is true (> 0.5), else 0."""

    def equations(self):
        return [self.y == _truth(cs.logic_or(self.u1 > 0.5, self.u2 > 0.5))]


class Not(SISO):
    """``y = 1`` where the logical input is false (<= 0.5), else 0."""

    def equations(self):
        return [self.y == _truth(self.u <= 0.5)]


class Switch(SO):
    """``y = u1`` while the logical input ``u2`` is true (> 0.5), else ``y = u3`` (MSL
    ``Logical.Switch``)."""

    u1 = RealInput("value while u2 is true")
    u2 = RealInput("logical input: true above 0.5")
    u3 = RealInput("value while u2 is false")

    def equations(self):
        return [self.y == cs.if_else(self.u2 > 0.5, self.u1, self.u3)]


class _Relay(_FirstValues):
    """A relay: its output ``y_held`` (discrete, 0 or 1) starts at ``pre_y_start``."""

    pre_y_start = Parameter(0.0, structural=True, doc="y at the start inside the band")
    y_held = Variable(start=0.0, discrete=True, doc="the output")
    _FIRST_VALUES = {"pre_y_start": ("y_held",)}

    def _set_first_values(self, name: str) -> None:
        super()._set_first_values(name)
        if self.__dict__["_vars"]["y_held"].start not in (0.0, 1.0):
            # (another value would hold a logical output that is neither true nor false)
            raise ModelDefinitionError(f"{self._describe()}: pre_y_start must be 0 or 1 "
                                       f"(false or true), got {self.pre_y_start!r}")

    def relay(self, on: Any, off: Any) -> list[Any]:
        """The output becomes 1 when ``on`` becomes true and 0 when ``off`` does; both are
        read at the start too (inside the band it holds ``pre_y_start``)."""
        return [self.y == self.y_held,
                ac.when(on, ac.assign(self.y_held, 1.0), initial=True),
                ac.when(off, ac.assign(self.y_held, 0.0), initial=True)]


class Hysteresis(_Relay, SISO):
    """Relay with hysteresis (MSL ``Logical.Hysteresis``): ``y`` becomes 1 when ``u``
    rises above ``uHigh`` and 0 when it falls below ``uLow``, and holds in between.

    At the start ``y`` is 1 if ``u > uHigh``, 0 if ``u < uLow``, and ``pre_y_start``
    otherwise.

    Parameters
    ----------
    uLow : the input below which y becomes 0
    uHigh : the input above which y becomes 1, > uLow
    pre_y_start : y at the start while ``uLow <= u <= uHigh`` (0 or 1; structural)

    Variables
    ---------
    y_held : the output (discrete)
    """

    uLow = Parameter(0.0, doc="y becomes 0 when u falls below uLow")
    uHigh = Parameter(1.0, doc="y becomes 1 when u rises above uHigh")

    def check_parameters(self, p):
        if p.uLow >= p.uHigh:
            return f"uLow = {p.uLow} must be below uHigh = {p.uHigh}"
        return None

    def equations(self):
        return self.relay(on=self.u > self.uHigh, off=self.u < self.uLow)


class OnOffController(_Relay, SO):
    """On-off controller (MSL ``Logical.OnOffController``): ``y`` becomes 1 when ``u``
    falls below ``reference - bandwidth/2`` and 0 when it reaches
    ``reference + bandwidth/2``, and holds in between: a thermostat. As MSL's
    ``y = pre(y) and u < reference + bandwidth/2 or u < reference - bandwidth/2``, the
    upper edge itself switches off, the lower edge does not switch on.

    At the start ``y`` is 1 below the band, 0 on or above its upper edge, and
    ``pre_y_start`` inside it.

    Parameters
    ----------
    bandwidth : width of the band around the reference, > 0
    pre_y_start : y at the start inside the band (0 or 1; structural)

    Variables
    ---------
    y_held : the output (discrete)
    """

    reference = RealInput("reference signal")
    u = RealInput("measured signal")
    bandwidth = Parameter(0.1, doc="width of the band around the reference",
                          min=0.0, min_inclusive=False)

    def equations(self):
        half = self.bandwidth / 2
        # (>=: MSL's y stays on only while u < reference + bandwidth/2)
        return self.relay(on=self.u < self.reference - half,
                          off=self.u >= self.reference + half)


# --------------------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------------------


class Constant(SO):
    """Constant output ``y = k``.

    Parameters
    ----------
    k : value of the output
    """

    k = Parameter(1.0, doc="constant output value")

    def equations(self):
        return [self.y == self.k]


class Step(SignalSource):
    """Step: ``y = offset`` before ``startTime``, ``offset + height`` from it on.

    Parameters
    ----------
    height : height of the step
    offset : output before the step
    startTime : time of the step [s] (a time event)
    """

    height = Parameter(1.0, doc="height of the step")

    def equations(self):
        return [self.y == self.offset
                + cs.if_else(self.time >= self.startTime, self.height, 0.0)]


class Ramp(SignalSource):
    """Ramp from ``offset`` to ``offset + height`` between ``startTime`` and
    ``startTime + duration``, constant before and after (both corners are time events).

    Parameters
    ----------
    height : height of the ramp
    duration : duration of the ramp [s], >= 0 (0 gives a step)
    offset : output before the ramp
    startTime : start of the ramp [s]
    """

    height = Parameter(1.0, doc="height of the ramp")
    duration = Parameter(2.0, unit="s", doc="duration of the ramp", min=0.0)

    def equations(self):
        t, t0 = self.time, self.startTime
        rising = cs.if_else(t >= t0, (t - t0) * self.height / self.duration, 0.0)
        return [self.y == self.offset
                + cs.if_else(t >= t0 + self.duration, self.height, rising)]


class Sine(SignalSource):
    """Sine wave ``y = offset + amplitude sin(2 pi f (t - startTime) + phase)`` from
    ``startTime`` on, ``y = offset`` before.

    Parameters
    ----------
    amplitude : amplitude
    f : frequency [Hz], >= 0
    phase : phase at startTime [rad]
    offset : offset
    startTime : start time [s]
    """

    amplitude = Parameter(1.0, doc="amplitude of the sine wave")
    f = Parameter(1.0, unit="Hz", doc="frequency", min=0.0)
    phase = Parameter(0.0, unit="rad", doc="phase at startTime")

    def equations(self):
        t = self.time
        wave = self.amplitude * cs.sin(2 * cs.pi * self.f * (t - self.startTime) + self.phase)
        return [self.y == self.offset + cs.if_else(t >= self.startTime, wave, 0.0)]


class Pulse(SignalSource):
    """Rectangular pulses: ``y = offset + amplitude`` during the first ``width`` percent of
    each ``period`` from ``startTime`` on, ``y = offset`` otherwise, for ``nperiod``
    periods (``nperiod < 0``: forever).

    With a finite ``nperiod`` the output is a sum of ``2 nperiod`` steps
    ``t >= startTime + j period`` and ``t >= startTime + (j + width/100) period``, so every
    edge is a time event and the integration restarts exactly there. An unbounded train
    (``nperiod = -1``) is written ``floor(x) - floor(x - width/100)`` with
    ``x = (t - startTime)/period``, which is 1 exactly in the first ``width`` percent of
    each period; the core finds every integer crossing of ``floor`` of an affine function
    of time inside the simulated interval, so these edges are exact time events too.

    Parameters
    ----------
    amplitude : amplitude of the pulse
    width : width of the pulse in percent of the period [%], 0 < width < 100
    period : time of one period [s], > 0
    nperiod : number of periods, < 0 for an unbounded train (structural)
    offset : output outside the pulses
    startTime : time of the first rising edge [s]
    """

    amplitude = Parameter(1.0, doc="amplitude of the pulse")
    width = Parameter(50.0, unit="%", doc="width of the pulse in % of the period",
                      min=0.0, min_inclusive=False, max=100.0)
    period = Parameter(1.0, unit="s", doc="time of one period", min=0.0, min_inclusive=False)
    nperiod = Parameter(-1, structural=True, unit="1",
                        doc="number of periods (< 0: unbounded)")

    def equations(self):
        t, t0, P = self.time, self.startTime, self.period
        w = self.width / 100.0
        n = self.nperiod
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise ModelDefinitionError(
                f"{self._describe()}: nperiod must be an integer, got {n!r}"
            )
        if n >= 0:
            high = cs.SX(0.0)
            for j in range(int(n)):
                high = high + (t >= t0 + j * P) - (t >= t0 + (j + w) * P)
        else:
            x = (t - t0) / P
            high = cs.if_else(t >= t0, cs.floor(x) - cs.floor(x - w), 0.0)
        return [self.y == self.offset + self.amplitude * high]


class TimeTable(SignalSource):
    """Piecewise-linear interpolation in a table of ``(t, y)`` rows.

    ``y = offset + interp(t - startTime)``: linear between the rows, **constant
    extrapolation** before the first and after the last row (the first and last values
    are held). Two rows with the same time make a jump (the later row holds from that
    time on). Every row time is a time event: the integration restarts at each corner.

    Parameters
    ----------
    table : rows ``(t_i, y_i)`` with non-decreasing ``t_i`` [s, unit of y] (structural;
        at most two rows per time)
    offset : added to the interpolated value
    startTime : shift of the table's time axis [s]
    """

    table = Parameter([[0.0, 0.0], [1.0, 1.0]], structural=True,
                      doc="rows (t, y), t non-decreasing")

    def _rows(self) -> tuple[np.ndarray, np.ndarray]:
        try:
            tab = np.asarray(self.table, dtype=float)
        except (TypeError, ValueError):
            tab = np.empty((0, 0))
        if tab.ndim != 2 or tab.shape[1] != 2 or tab.shape[0] < 1:
            raise ModelDefinitionError(
                f"{self._describe()}: table must be a list of (t, y) rows, got "
                f"{self.table!r}"
            )
        ts, ys = tab[:, 0], tab[:, 1]
        if not np.all(np.isfinite(tab)):
            raise ModelDefinitionError(f"{self._describe()}: table has non-finite entries")
        dt = np.diff(ts)
        if np.any(dt < 0):
            k = int(np.argmax(dt < 0))
            raise ModelDefinitionError(
                f"{self._describe()}: table times must be non-decreasing; row {k + 1} "
                f"(t = {ts[k + 1]}) comes after t = {ts[k]}"
            )
        if np.any((dt[:-1] == 0) & (dt[1:] == 0)):
            raise ModelDefinitionError(
                f"{self._describe()}: more than two table rows share a time"
            )
        return ts, ys

    def equations(self):
        ts, ys = self._rows()
        tau = self.time - self.startTime
        # piecewise: y_0 before t_0; on [t_i, t_i+1) the segment i; y_last from t_last on.
        # if_else chains select exactly one piece, so each value is the segment's own formula
        value = cs.SX(ys[-1])
        for i in range(len(ts) - 2, -1, -1):
            if ts[i + 1] == ts[i]:
                continue  # a jump: the empty interval [t_i, t_i+1) has no segment
            slope = (ys[i + 1] - ys[i]) / (ts[i + 1] - ts[i])
            value = cs.if_else(tau < ts[i + 1], ys[i] + slope * (tau - ts[i]), value)
        value = cs.if_else(tau < ts[0], ys[0], value)
        return [self.y == self.offset + value]


# --------------------------------------------------------------------------------------
# Discrete (sampled) blocks, MSL Modelica.Blocks.Discrete: a clock ac.sample(startTime,
# samplePeriod) ticks at time events; between ticks the outputs are held (discrete
# variables, constant between events).
# --------------------------------------------------------------------------------------

__all__ += ["DiscreteBlock", "ZeroOrderHold", "UnitDelay", "DiscretePI"]


class DiscreteBlock(_FirstValues, SISO):
    """Partial sampled block: a clock that ticks at ``startTime + k samplePeriod``
    (``k = 0, 1, ...``; time events, so the ticks are exact whatever the output grid).

    At a tick the block reads its input and updates its discrete state and output; the
    output is held until the next tick (``ac.when(ac.sample(...), ac.assign(...))``).
    A tick at the start time of the run is taken at initialisation (as Modelica's
    ``sample``, true at ``k = 0``); ``y_start`` is the output before the first tick.

    Parameters
    ----------
    samplePeriod : time between ticks [s], > 0 (structural: it defines the clock)
    startTime : first tick [s] (structural)
    y_start : output before the first tick (structural)

    Variables
    ---------
    y_held : the held output (discrete) [unit of y]
    """

    samplePeriod = Parameter(0.1, structural=True, unit="s", doc="sample period",
                             min=0.0, min_inclusive=False)
    startTime = Parameter(0.0, structural=True, unit="s", doc="time of the first tick")
    y_start = Parameter(0.0, structural=True, doc="output before the first tick")
    y_held = Variable(start=0.0, discrete=True, doc="held output")

    _FIRST_VALUES: dict[str, tuple[str, ...]] = {"y_start": ("y_held",)}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        period = self.samplePeriod
        if isinstance(period, bool) or not isinstance(period, (int, float)) or period <= 0:
            raise ModelDefinitionError(
                f"{self._describe()}: samplePeriod must be a number > 0 s, got {period!r}")

    def clock(self) -> ac.Sample:
        """The block's clock."""
        return ac.sample(float(self.startTime), float(self.samplePeriod))

    def equations(self):
        return [self.y == self.y_held]


class ZeroOrderHold(DiscreteBlock):
    """Sample and hold (MSL ``Discrete.ZeroOrderHold`` and ``Discrete.Sampler``): at each
    tick ``t_k``, ``y = u(t_k)``, held until the next tick.

    Parameters
    ----------
    samplePeriod, startTime, y_start : see :class:`DiscreteBlock`
    """

    def equations(self):
        return [ac.when(self.clock(), ac.assign(self.y_held, self.u))]


class UnitDelay(DiscreteBlock):
    """Delay by one sample period (MSL ``Discrete.UnitDelay``, ``y = u / z``): at tick
    ``t_k``, ``y = u(t_(k-1))`` (the input read at the previous tick; ``y_start`` at the
    first tick).

    Parameters
    ----------
    samplePeriod, startTime, y_start : see :class:`DiscreteBlock`

    Variables
    ---------
    x : the input read at the last tick (discrete) [unit of u]
    """

    x = Variable(start=0.0, discrete=True, doc="input read at the last tick")
    _FIRST_VALUES = {"y_start": ("y_held", "x")}

    def equations(self):
        return [ac.when(self.clock(), ac.assign(self.y_held, ac.pre(self.x)),
                        ac.assign(self.x, self.u))]


class DiscretePI(DiscreteBlock):
    """Sampled PI controller (backward-Euler discretisation of :class:`PI`, velocity form
    without windup protection): at tick ``t_k``, with ``T_s = samplePeriod``::

        x_k = x_(k-1) + (T_s / T) u(t_k),     y = k (x_k + u(t_k))

    held until the next tick; ``x_0 = x_start``.

    Parameters
    ----------
    k : gain [1]
    T : integral time constant [s], > 0
    x_start : integrator state before the first tick [unit of u] (structural)
    samplePeriod, startTime, y_start : see :class:`DiscreteBlock`

    Variables
    ---------
    x : integrator state (discrete) [unit of u]
    """

    k = Parameter(1.0, unit="1", doc="gain")
    T = Parameter(1.0, unit="s", doc="time constant of the integrator",
                  min=0.0, min_inclusive=False)
    x_start = Parameter(0.0, structural=True, doc="integrator state before the first tick")
    x = Variable(start=0.0, discrete=True, doc="integrator state")
    _FIRST_VALUES = {"y_start": ("y_held",), "x_start": ("x",)}

    def equations(self):
        x_new = ac.pre(self.x) + self.samplePeriod / self.T * self.u
        return [ac.when(self.clock(), ac.assign(self.x, x_new),
                        ac.assign(self.y_held, self.k * (x_new + self.u)))]
