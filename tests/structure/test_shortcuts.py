"""The build's shortcuts against the general path they skip: each must give the very DAE
(the same CasADi expressions, compared by the serialised function of the whole DAE) that
the general path gives, and must actually be taken on the model (else the test would
compare a path with itself)."""

import casadi as cs
import numpy as np
from models import ForcedChain

import acausal as ac


def _dae_text(cm):
    d = cm.dae
    outs = cs.vertcat(*[cs.vec(e) for e in d.out_expr])  # (one output: CasADi warns past 10 000)
    f = cs.Function("f", [d.t, d.x, d.z, d.p], [d.ode, d.alg, outs])
    return f.serialize(), list(d.x_names), list(d.z_names)


class Looped(ac.Component):
    """``w == x`` and ``x == 2 w + c``: the alias pass keeps one of ``x``, ``w`` and puts
    it in the other equation, where ``x`` (the lead of ``x == ...``) is then on both
    sides (its coefficient -1, not 1); ``x = w = -c``, and ``s' = x``."""

    c = ac.Parameter(1.0)
    x = ac.Variable(start=0.0)
    w = ac.Variable(start=0.0)
    s = ac.Variable(start=0.0)

    def equations(self):
        return [self.w == self.x, self.x == 2 * self.w + self.c, ac.der(self.s) == self.x]


class LoopedGroup(ac.Model):
    def __init__(self, n=50):
        super().__init__()
        self.parts = [Looped(c=1.0 + k) for k in range(n)]


def test_unit_coefficients_read_from_templates_give_the_differentiated_dae(monkeypatch):
    """The block solution takes the coefficient of ``x`` in ``x == rhs`` as 1 without
    differentiating (``solve._unit_signs``, decided once per class; also that of ``a`` in
    ``m * a == f``, ``m``, and of a derivative in a row index reduction made from such a
    row, the same): the DAE is the one
    every coefficient differentiated gives, on a chain (most rows take the shortcut) and
    on a group whose rows the alias pass rewrote with the lead on both sides (those must
    not take it; ``der(s) == x`` still does)."""
    from acausal.structure import solve

    taken, scaled, derived = [], [], []
    signs_of = solve._unit_signs

    def spy(eqs, unknowns, *args):
        signs = signs_of(eqs, unknowns, *args)
        taken.append(int(np.count_nonzero(signs)))
        scaled.append(int(np.count_nonzero(signs == solve._SCALED)))
        variables = args[1] if len(args) > 1 else None
        rows = solve._lead_rows(eqs, unknowns, variables)[3]
        derived.append(int(np.count_nonzero(signs[rows])))
        return signs

    def none(eqs, *args):
        return np.zeros(len(eqs), dtype=np.int8)

    for make in (lambda: ForcedChain(60), LoopedGroup):
        taken.clear(), scaled.clear(), derived.clear()
        monkeypatch.setattr(solve, "_unit_signs", spy)
        fast = ac.build(make())
        used = sum(taken)
        monkeypatch.setattr(solve, "_unit_signs", none)
        plain = ac.build(make())
        assert _dae_text(fast) == _dae_text(plain)
        # the shortcut is taken (most of the chain's equations are x == rhs; der(s) == x)
        assert used >= 40
        if make is not LoopedGroup:
            # and its two other kinds: m * a == f (the coefficient is the mass) and the
            # rows index reduction made from a group's row (der(v) == a: its lead's)
            assert sum(scaled) >= 50 and sum(derived) >= 50
        if make is LoopedGroup:
            res = ac.simulate(fast, 1.0, n_points=3)
            # x = -c exactly; s(1) = -c integrated (rtol 1e-6 default: 1e-6 relative)
            for k in (0, 7, 49):
                assert res[f"parts[{k}].x"][-1] == -(1.0 + k)
                assert abs(res[f"parts[{k}].s"][-1] + (1.0 + k)) < 1e-5 * (1.0 + k)


def test_alias_forms_tried_in_the_order_of_a_sample_find_the_same_rows(monkeypatch):
    """On many rows of two unknowns the alias pass tries the four forms (``a - b``,
    ``b - a``, ``-(a + b)``, ``a + b``) in the order of their hits on a sample: the DAE
    is the one of the fixed order."""
    from acausal.structure import alias

    calls = []
    by_sample = alias._by_sample

    def spy(*args):
        calls.append(1)
        return by_sample(*args)

    monkeypatch.setattr(alias, "_by_sample", spy)
    sampled = ac.build(ForcedChain(600))
    assert calls  # (600 masses: more rows of two unknowns than the sample's threshold)
    monkeypatch.setattr(alias, "_by_sample", lambda *args: alias._FORMS)
    fixed = ac.build(ForcedChain(600))
    assert _dae_text(sampled) == _dae_text(fixed)


def test_a_copied_system_keeps_its_name_index_when_the_copy_adds_a_derivative():
    """``EquationSystem.copy`` shares the name index until one of the two adds a
    derivative variable: the other must not see the new name."""
    cm = ac.build(ForcedChain(3))
    sys = cm.system
    before = dict(sys.name_index)
    j = next(k for k, d in enumerate(sys.var_der) if d < 0 and sys.var_int[k] < 0)
    other = sys.copy()
    k = other.add_derivative_variable(j)
    name = other.variables[k].name
    assert other.name_index[name] == k
    assert name not in sys.name_index and sys.name_index == before
    # and the other way round: the original adds one, the copy does not see it
    again = sys.copy()
    k2 = sys.add_derivative_variable(j)
    assert sys.name_index[sys.variables[k2].name] == k2
    assert sys.variables[k2].name not in again.name_index
