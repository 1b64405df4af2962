"""C code generation: the model's functions compiled to a shared library equal the
in-memory CasADi functions.

The generated C performs the operations of CasADi's virtual machine in the same order, and
is compiled without floating-point contraction (``-ffp-contract=off``: no fused
multiply-adds), so on the same libm the results agree to the last bit in practice. The
check allows 1e-14 relative (``max |compiled - in-memory| <= 1e-14 max |in-memory|`` per
output), a few units in the last place, in case a libm evaluates an elementary function
differently from the one CasADi was built against.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import casadi as cs
import numpy as np
import pytest
from models import RC, pendulum

import acausal as ac
from acausal.codegen import (
    CodegenError,
    CompilerNotFoundError,
    compile_model,
    compile_shared,
    find_compiler,
    generate_c,
    model_functions,
)
from acausal.initialize import initialize

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))

try:
    find_compiler()
    HAVE_CC = True
except CompilerNotFoundError:
    HAVE_CC = False
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler (cc, gcc or clang) found")

REL = 1e-14  # see the module docstring


def models():
    import dc_motor
    import mb_motor_arm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ac.RedundantConstraintWarning)
        arm = ac.build(mb_motor_arm.build_model())
    return {"dc_motor": ac.build(dc_motor.build_model()), "pendulum": ac.build(pendulum(30.0)),
            "motor_arm": arm}


@needs_cc
def test_compiled_functions_equal_in_memory_ones(tmp_path):
    rng = np.random.default_rng(1)
    for name, cm in models().items():
        compiled = compile_model(cm, tmp_path / name, name=f"{name}_gen")
        assert compiled.library.exists() and compiled.timings["compile"] < 60.0
        for f in model_functions(cm):
            g = compiled[f.name()]
            assert (g.n_in(), g.n_out()) == (f.n_in(), f.n_out())
            for _ in range(5):
                # random points of order one: every branch of the expressions is exercised
                # away from the consistent manifold, which the functions do not assume
                args = [rng.standard_normal(f.size_in(i)) for i in range(f.n_in())]
                for k, (a, b) in enumerate(zip(g.call(args), f.call(args), strict=True)):
                    a, b = np.asarray(cs.DM(a)), np.asarray(cs.DM(b))
                    if b.size == 0:
                        continue
                    scale = np.max(np.abs(b))
                    assert np.max(np.abs(a - b)) <= REL * scale, (name, f.name(), k)


@needs_cc
def test_compiled_outputs_subset_and_idas_jacobian(tmp_path):
    cm = ac.build(pendulum(30.0))
    compiled = compile_model(cm, tmp_path, outputs=["x", "y", "F"], name="pend_gen")
    d = cm.dae
    init = initialize(cm, d.p_values)
    y = np.asarray(compiled["outputs"](init.x0, init.z0, d.p_values, 0.0)).ravel()
    assert y[0] ** 2 + y[1] ** 2 == pytest.approx(1.0, rel=1e-12)  # consistent point
    # the IDAS iteration matrix at cj = 0 is the Jacobian of the residual in w = [x; z]
    w = np.concatenate([init.x0, init.z0])
    J = np.asarray(cs.DM(compiled["dae_jacobian"](0.0, w, np.zeros_like(w), d.p_values, 0.0)))
    nx = len(d.x_names)
    assert np.allclose(J[:nx, :nx], -np.asarray(cs.DM(cs.Function(
        "j", [d.x, d.z, d.p, d.t], [cs.jacobian(d.ode, d.x)])(init.x0, init.z0, d.p_values,
                                                               0.0))), rtol=0, atol=1e-14)


def test_generate_c_needs_no_compiler(tmp_path):
    src = generate_c(model_functions(ac.build(RC())), tmp_path, "rc_gen")
    code = src.read_text()
    assert "dae_residual" in code and "casadi_real" in code
    assert (tmp_path / "rc_gen.h").exists()
    # (a name the code generator refuses was CasADi's "Notify the CasADi developers")
    with pytest.raises(CodegenError, match="name 'my lib!' cannot name generated C"):
        generate_c(model_functions(ac.build(RC())), tmp_path, "my lib!")


def test_missing_compiler_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(CompilerNotFoundError, match="no C compiler found.*apt install gcc"):
        compile_model(ac.build(RC()), tmp_path)
    with pytest.raises(CompilerNotFoundError, match="'no-such-cc'"):
        find_compiler("no-such-cc")


@needs_cc
def test_compiler_errors_are_reported(tmp_path):
    bad = tmp_path / "bad.c"
    bad.write_text("int f(void) { return undefined_symbol; }\n")
    with pytest.raises(CodegenError,
                       match=r"(?s)the C compiler failed .*bad\.c.*error: .undefined_symbol."):
        compile_shared([bad], tmp_path / "bad.so")


@needs_cc
def test_compiled_functions_are_a_mapping_of_their_names(tmp_path):
    """sorted(lib) was KeyError 0 (no iteration), lib["dea"] a bare KeyError."""
    cm = ac.build(RC())
    lib = compile_model(cm, tmp_path, name="rc_map", outputs="capacitor.v")  # one name
    assert sorted(lib) == ["dae", "dae_jacobian", "dae_residual", "outputs"]
    assert len(lib) == 4 and "dae" in lib and "dea" not in lib and lib.get("dea") is None
    assert dict(lib.items())["dae"] is lib["dae"]
    with pytest.raises(KeyError, match=r"'dea' is not a function of rc_map\.\w+; it has "
                       r"'dae', 'outputs', 'dae_residual', 'dae_jacobian'; did you mean 'dae'"):
        lib["dea"]
    d = cm.dae
    # outputs = [capacitor.v]: the state itself, exactly
    assert float(lib["outputs"]([2.5], [], d.p_values, 0.0)) == 2.5


def test_model_functions_names_are_checked():
    cm = ac.build(RC())
    with pytest.raises(CodegenError, match=r"outputs: 'capacitor.vv' is not a quantity of RC "
                       r".*did you mean 'capacitor.v'"):
        model_functions(cm, ["capacitor.vv"])
    y = model_functions(cm, ["resistor.R"])[1]  # a parameter, as res["resistor.R"]
    assert float(y([0.0], [], cm.dae.p_values, 0.0)) == cm.parameter_values()[
        cm.dae.p_names.index("resistor.R")]


def test_a_file_in_place_of_the_folder_is_a_codegen_error(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(CodegenError, match=r"cannot write the generated C into .*f: "):
        generate_c(model_functions(ac.build(RC())), tmp_path / "f", "x")


@needs_cc
def test_compiling_again_into_the_same_library_loads_the_new_one(tmp_path):
    """A notebook cell run twice with other outputs: the dynamic loader handed back the
    library already loaded from that path, whose outputs were the first ones."""
    cm = ac.build(RC())
    first = compile_model(cm, tmp_path, outputs=["capacitor.v"], name="rc_again")
    second = compile_model(cm, tmp_path, outputs=["resistor.i"], name="rc_again")
    p = cm.dae.p_values
    x = [4.0]  # capacitor.v = 4 V under a 10 V source through 1 kOhm
    assert float(first["outputs"](x, [], p, 0.0)) == 4.0
    assert float(second["outputs"](x, [], p, 0.0)) == pytest.approx(6e-3, rel=1e-15)
    assert second.library == first.library  # the library file the user asked for


def test_model_functions_take_a_model_or_a_compiled_one():
    """As fmu() does (a model gave 'AttributeError: RC has no attribute dae')."""
    names = [f.name() for f in model_functions(RC())]
    assert names == ["dae", "outputs", "dae_residual", "dae_jacobian"]
    with pytest.raises(CodegenError, match=r"needs a model or the result of ac.build\(model\), "
                                           r"got 'rc'"):
        model_functions("rc")
