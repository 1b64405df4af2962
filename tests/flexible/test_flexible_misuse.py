"""Misuse of the finite-element preprocessor and of FlexibleBody found in a user trial:
each is refused with an error that names the argument and says what is expected (or, for
a single load, accepted), instead of a silently different model or a raw numpy/Python
error."""

from __future__ import annotations

import numpy as np
import pytest

import acausal as ac
from components.flexible import (
    BeamMesh,
    FEError,
    FlexibleBody,
    FlexibleBodyData,
    Material,
    PointLoad,
    Section,
    ShellMesh,
    craig_bampton,
)

STEEL = Material.steel()
SEC = Section.rectangle(0.02, 0.04)


def _one_element(reduction: str, modes: int, **kw):
    return FlexibleBodyData.from_mesh(BeamMesh.line((0, 0, 0), (1, 0, 0), 1), STEEL, SEC,
                                      reference="clamped", reference_nodes="start",
                                      reduction=reduction, modes=modes, cache=False, **kw)


# ------------------------------------------------------------------ mesh counts
@pytest.mark.parametrize("n", [2.5, 0, -2, "4", True, float("nan")])
def test_a_beam_mesh_needs_a_whole_number_of_elements(n) -> None:
    """2.5 elements used to build 2 (int() truncated it)."""
    with pytest.raises(FEError, match=r"n_elements must be a whole number >= 1 .*got "):
        BeamMesh.line((0, 0, 0), (1, 0, 0), n)


def test_whole_counts_given_as_floats_or_numpy_integers_are_taken() -> None:
    assert BeamMesh.line((0, 0, 0), (1, 0, 0), 4.0).n_elements == 4
    assert BeamMesh.line((0, 0, 0), (1, 0, 0), np.int64(3)).n_elements == 3
    assert repr(BeamMesh.line((0, 0, 0), (1, 0, 0), 1)).startswith(
        "BeamMesh(2 nodes, 1 element,")


@pytest.mark.parametrize("nx,ny,bad", [(2.5, 2, "nx"), (2, 1.5, "ny"), (0, 2, "nx")])
def test_a_plate_mesh_needs_whole_numbers_of_cells(nx, ny, bad) -> None:
    with pytest.raises(FEError, match=f"{bad} must be a whole number >= 1"):
        ShellMesh.rectangle(1.0, 1.0, nx, ny)


# ------------------------------------------------------------------ Craig-Bampton
def test_craig_bampton_without_interior_dofs_says_what_to_do() -> None:
    """A one-element cantilever attached at its free end has no interior DOF: there is
    no fixed-interface mode, and asking for some was a raw numpy ValueError ('zero-size
    array to reduction operation maximum'). The error says so and offers modes=0."""
    with pytest.raises(FEError, match=r"modes=4: every DOF .*BeamMesh\(2 nodes, 1 element"
                       r".* no interior DOF.*give modes=0"):
        _one_element("craig_bampton", 4, attachment_nodes=["end"])
    with pytest.raises(FEError, match="only 0 interior DOFs"):  # the library function too
        body = _one_element("nodal", 0)
        craig_bampton(body.model.K, body.model.M, body.model.dofs([1]), 2,
                      fixed_dofs=body.model.dofs([0]))


def test_craig_bampton_with_modes_zero_on_one_element_is_exact() -> None:
    """What the error offers: the static constraint modes of the end node span every DOF
    the clamp leaves, so the reduction is exact, as the modal one (the same Ritz space:
    equal frequencies to the eigen-solver's roundoff, 1e-9)."""
    cb = _one_element("craig_bampton", 0, attachment_nodes=["end"])
    modal = _one_element("modal", 6)
    assert cb.n_coordinates == 6
    np.testing.assert_allclose(np.sort(cb.frequencies), modal.frequencies, rtol=1e-9)


def test_craig_bampton_with_more_modes_than_interior_dofs_is_named() -> None:
    """Two elements, clamped at the start and attached at the end: the middle node's six
    DOFs are the interior, so at most six fixed-interface modes."""
    mesh = BeamMesh.line((0, 0, 0), (1, 0, 0), 2)
    kw = dict(reference="clamped", reference_nodes="start", reduction="craig_bampton",
              attachment_nodes=["end"], cache=False)
    assert FlexibleBodyData.from_mesh(mesh, STEEL, SEC, modes=6, **kw).n_coordinates == 12
    with pytest.raises(FEError, match="modes=7: .* only 6 interior DOFs .*give modes <= 6"):
        FlexibleBodyData.from_mesh(mesh, STEEL, SEC, modes=7, **kw)


# ------------------------------------------------------------------ FlexibleBody options
@pytest.fixture(scope="module")
def data():
    return FlexibleBodyData.from_mesh(BeamMesh.line((0, 0, 0), (1, 0, 0), 4), STEEL,
                                      Section.rectangle(0.01, 0.02), modes=2,
                                      reference_nodes="start")


def test_a_single_load_is_taken_as_a_list_of_one(data) -> None:
    """loads=PointLoad(...) was a raw TypeError ('PointLoad' object is not iterable)."""
    one = FlexibleBody(data=data, loads=PointLoad("end", force=[0, 1, 0]))
    lst = FlexibleBody(data=data, loads=[PointLoad("end", force=[0, 1, 0])])
    assert len(one._loads) == len(lst._loads) == 1
    np.testing.assert_array_equal(one._loads[0].f, lst._loads[0].f)


@pytest.mark.parametrize("loads,match", [(5.0, r"loads=5.0; give a load"),
                                         ("end", r"loads='end'; give a load"),
                                         ([(0, 1, 0)], r"loads\[0\] = \(0, 1, 0\) is not a load")])
def test_what_is_not_a_load_is_named(data, loads, match) -> None:
    with pytest.raises(ac.ModelDefinitionError, match=match):
        FlexibleBody(data=data, loads=loads)


@pytest.mark.parametrize("name", ["stiffening", "output_resultants"])
@pytest.mark.parametrize("value", ["yes", "no", 1, 0.0])
def test_switches_take_true_or_false_only(data, name, value) -> None:
    """stiffening='yes' was taken (and 'no' would have switched it on, being truthy)."""
    with pytest.raises(ac.ModelDefinitionError, match=f"{name}={value!r}; give True or False"):
        FlexibleBody(data=data, **{name: value})
    for ok in (True, False, np.bool_(True), None):
        FlexibleBody(data=data, **{name: ok})


def test_the_preprocessor_stiffening_switch_takes_true_or_false_only() -> None:
    with pytest.raises(FEError, match="stiffening='yes'; give True"):
        _one_element("modal", 2, stiffening="yes")
