"""Names read alone on a long grid as numpy calls over the grid (acausal.grid_program):
CasADi's values, every instruction of CasADi that has a numpy equivalent, the route chosen
by the estimates."""

import pickle

import casadi as cs
import numpy as np
import pytest

from acausal import grid_outputs
from acausal.grid_program import _BINARY, _UNARY, GridProgram

# special values (signed zeros, infinities, NaN, tiny and huge) and ordinary ones
_VALUES = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -3.7, 1e300, -1e-300, np.inf,
                    -np.inf, np.nan, 0.3, 7.0, 0.999, -0.25])


def _ulps(a, b):
    """Distance in units in the last place (0 for two NaNs or two equal values, signed
    zeros equal; inf where one is NaN or the values are infinities of different size)."""
    a, b = (np.ravel(v) for v in np.broadcast_arrays(a, b))
    both_nan = np.isnan(a) & np.isnan(b)
    equal = (a == b) | both_nan
    out = np.full(a.shape, np.inf)
    finite = np.isfinite(a) & np.isfinite(b)
    ia = a.view(np.int64).astype(object)
    ib = b.view(np.int64).astype(object)
    for i in np.flatnonzero(finite & ~equal):  # (same sign: integer distance of the bits)
        if np.signbit(a[i]) == np.signbit(b[i]):
            out[i] = abs(int(ia[i]) - int(ib[i]))
    out[equal] = 0
    return out


def test_every_instruction_is_casadis_to_a_few_units_in_the_last_place():
    """Each CasADi operation the programs know, on special and ordinary values of both
    operands, gives CasADi's value: exactly for the arithmetic ones, comparisons, logic and
    branches; within 4 units in the last place for the transcendental ones (numpy may take
    its own vectorised implementations, whose documented error is at most 4 ulp, where
    CasADi calls the C library); NaN where CasADi gives NaN."""
    x, y = cs.SX.sym("x"), cs.SX.sym("y")
    X, Y = (v.ravel() for v in np.meshgrid(_VALUES, _VALUES))
    exprs = [-x, cs.exp(x), cs.log(x), cs.sqrt(x), x * x, 2 * x, cs.sin(x), cs.cos(x),
             cs.tan(x), cs.asin(x), cs.acos(x), cs.atan(x), cs.floor(x), cs.ceil(x),
             cs.fabs(x), cs.sign(x), 1 / x, cs.sinh(x), cs.cosh(x), cs.tanh(x), cs.asinh(x),
             cs.acosh(x), cs.atanh(x), cs.log1p(x), cs.expm1(x), cs.logic_not(x), x + y,
             x - y, x * y, x / y, x ** y, x ** 3, x ** 3.5, cs.fmod(x, y), cs.copysign(x, y),
             cs.fmin(x, y), cs.fmax(x, y), cs.atan2(x, y), cs.hypot(x, y), x < y, x <= y,
             x == y, x != y, cs.logic_and(x, y), cs.logic_or(x, y), cs.if_else(x, y, 0),
             cs.if_else(x > 0, y, -y), cs.vertcat(x, 2.5, y)]
    exact = {cs.OP_NEG, cs.OP_SQRT, cs.OP_SQ, cs.OP_TWICE, cs.OP_FLOOR, cs.OP_CEIL,
             cs.OP_FABS, cs.OP_SIGN, cs.OP_INV, cs.OP_NOT, cs.OP_ADD, cs.OP_SUB, cs.OP_MUL,
             cs.OP_DIV, cs.OP_FMOD, cs.OP_COPYSIGN, cs.OP_LT, cs.OP_LE, cs.OP_EQ, cs.OP_NE,
             cs.OP_AND, cs.OP_OR, cs.OP_IF_ELSE_ZERO, cs.OP_ASSIGN, cs.OP_FMIN, cs.OP_FMAX}
    seen = set()
    for e in exprs:
        f = cs.Function("f", [cs.vertcat(x, y)], [e])
        ops = {f.instruction_id(k) for k in range(f.n_instructions())} - {
            cs.OP_INPUT, cs.OP_OUTPUT, cs.OP_CONST}
        seen |= ops
        program = GridProgram.of(f)
        assert program is not None, e
        want = np.asarray(f(np.vstack([X, Y]))).reshape(-1, len(X))
        got = program.evaluate([np.vstack([X, Y])], len(X))
        assert got.shape == want.shape
        assert (np.isnan(got) == np.isnan(want)).all(), e
        worst = _ulps(got, want).max()
        assert worst <= (0 if ops <= exact else 4), (e, worst)
    assert seen >= (set(_UNARY) | set(_BINARY)) - {cs.OP_ASSIGN}  # (every one tried)


def test_an_instruction_numpy_does_not_have_leaves_the_name_to_casadi():
    x = cs.SX.sym("x")
    assert GridProgram.of(cs.Function("f", [x], [cs.erf(x) + 1])) is None
    program = GridProgram.of(cs.Function("f", [x], [x + 1]))
    again = pickle.loads(pickle.dumps(program))  # (a program pickles)
    np.testing.assert_array_equal(again.evaluate([np.array([[1.0, 2.0]])], 2), [[2.0, 3.0]])


def test_a_long_grid_reads_names_as_numpy_calls_with_casadis_values():
    """On a long grid every output of a multibody model that is not read off the states is
    read as numpy calls (a few thousand instructions at most here), and agrees with
    CasADi's function of it to rounding: an elementary function may differ by 4 ulp, and
    these outputs are sums and products of a few hundred of them (the largest difference
    seen was 0 on this machine; 1e-13 of the output's size bounds what ulps of the
    operations give). The estimate of a read is then the program's."""
    from mb_models import SphericalDoublePendulum

    import acausal as ac

    cm = ac.build(SphericalDoublePendulum())
    res = ac.simulate(cm, 0.5, n_points=2001)
    dae, lazy = cm.dae, res._data_or_fn
    (_, X, Z, T, p), = lazy._join()
    read = 0
    for k in range(len(dae.out_names)):
        got = dae.output_column(k, X, Z, p, T)
        if dae.output_column_is_read_off(k):
            continue
        f = dae.output_column_function(k)
        want = np.asarray(f(X, Z, p.reshape(-1, 1), T.reshape(1, -1))).T
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13 * (1 + np.abs(want).max()),
                                   err_msg=dae.out_names[k])
        n = dae.output_column_instructions(k)
        if n:
            assert dae.output_column_has_program(k), dae.out_names[k]
            assert grid_outputs.read_seconds(dae, k, len(T)) == pytest.approx(
                grid_outputs.NAME_SECONDS + n * (grid_outputs.PROGRAM_SECONDS_PER_INSTRUCTION
                                                 + len(T) * grid_outputs.PROGRAM_SECONDS_PER_VALUE))
            read += 1
    assert read > 40  # (89 of the 146 outputs: positions, velocities, forces of bodies)
    from acausal.persist import dumps, loads

    again = loads(dumps(cm))  # (a model that kept its programs is saved and loaded,
    assert "_column_programs" not in again.dae.__dict__  # without them: made again)
    k = next(k for k in range(len(dae.out_names)) if dae.output_column_has_program(k))
    np.testing.assert_array_equal(again.dae.output_column(k, X, Z, p, T),
                                  dae.output_column(k, X, Z, p, T))


def test_the_route_is_the_cheaper_by_the_estimates():
    """A small function is read as numpy calls on any grid; a large one by CasADi on a
    short grid (reading its program costs more than CasADi's points) and as numpy calls on
    a long one."""
    assert grid_outputs.program_pays(14, 101) and grid_outputs.program_pays(14, 20001)
    assert not grid_outputs.program_pays(5000, 101)
    assert grid_outputs.program_pays(5000, 20001)
