"""Arguments that take a list of names read one string as one name, everywhere
(:func:`acausal.names.name_list`): ``"mass.s"`` was split into its characters by
``res.to_pandas``, ``res.to_csv``, ``linearize``, ``fmu`` and ``sweep``."""

from __future__ import annotations

import numpy as np
import pytest
from models import RC

import acausal as ac


@pytest.fixture(scope="module")
def res():
    return ac.simulate(ac.build(RC()), 1.0, n_points=11)


def test_tables_take_one_name_all_or_none(res, tmp_path):
    df = res.to_pandas("capacitor.v")
    assert list(df.columns) == ["capacitor.v"]
    np.testing.assert_array_equal(df["capacitor.v"].to_numpy(), res["capacitor.v"])
    assert len(res.to_pandas().columns) == len(res._names)  # None: every quantity
    empty = res.to_pandas([])  # an empty list: no columns (it was every column)
    assert empty.shape == (11, 0) and empty.index.tolist() == res.t.tolist()
    res.to_csv(str(tmp_path / "one.csv"), "capacitor.v")
    assert (tmp_path / "one.csv").read_text().splitlines()[0] == "time,capacitor.v"
    res.to_csv(str(tmp_path / "none.csv"), [])
    assert (tmp_path / "none.csv").read_text().splitlines()[0] == "time"
    with pytest.raises(ac.ArgumentError, match=r"names must be dotted names .*got 3"):
        res.to_pandas(["capacitor.v", 3])
    with pytest.raises(KeyError, match=r"'capacitor.vv' is not a variable of the model; did "
                       "you mean 'capacitor.v'"):
        res.to_pandas("capacitor.vv")


def test_fmu_outputs_take_one_name(tmp_path):
    from acausal.codegen import CompilerNotFoundError
    from acausal.fmi import FMUExportError, export

    cm = ac.build(RC())
    with pytest.raises(FMUExportError, match=r"unknown output\(s\) of RC: 'capacitor.vv' "
                       r"\(did you mean 'capacitor.v'"):
        export(cm, tmp_path / "rc.fmu", outputs=["capacitor.vv"])
    try:
        fmu = export(cm, tmp_path / "rc.fmu", outputs="capacitor.v")
    except CompilerNotFoundError:
        pytest.skip("no C compiler")
    assert [v.name for v in fmu.variables if v.causality == "output"] == ["capacitor.v"]
