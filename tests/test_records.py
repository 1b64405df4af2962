"""acausal.records: declared as a dataclass is, behaving as one where the library relies on
it (construction, defaults, factories, ``__post_init__``, repr, equality, replace), with
nothing compiled at import (issue 14, the cold script)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from dataclasses import field

import pytest

from acausal.records import record, replace

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@record
class Point:
    x: float
    y: float = 0.0
    tags: list[str] = field(default_factory=list)
    cache: dict[str, int] = field(default_factory=dict, repr=False, compare=False)


@record(eq=False)
class Handle:
    name: str


@record
class Checked:
    n: int
    doubled: int = 0

    def __post_init__(self) -> None:
        self.doubled = 2 * self.n


@dataclasses.dataclass
class PointDC:
    x: float
    y: float = 0.0
    tags: list[str] = field(default_factory=list)
    cache: dict[str, int] = field(default_factory=dict, repr=False, compare=False)


def test_construction_as_a_dataclass():
    for args, kwargs in [((1.0,), {}), ((1.0, 2.0), {}), ((), {"x": 1.0, "y": 2.0}),
                         ((1.0,), {"tags": ["a"]})]:
        p, q = Point(*args, **kwargs), PointDC(*args, **kwargs)
        assert (p.x, p.y, p.tags, p.cache) == (q.x, q.y, q.tags, q.cache)
        assert repr(p) == repr(q).replace("PointDC", "Point")
    assert Point(1.0).tags is not Point(1.0).tags  # a fresh list per instance
    assert Checked(4).doubled == 8


@pytest.mark.parametrize("args, kwargs, message", [
    ((), {}, "missing required argument: 'x'"),
    ((1.0, 2.0, [], {}, 5), {}, "takes 4 positional arguments but 5 were given"),
    ((1.0,), {"x": 2.0}, "multiple values for argument 'x'"),
    ((1.0,), {"z": 2.0}, "unexpected keyword argument 'z'"),
])
def test_wrong_arguments_name_the_class_and_field(args, kwargs, message):
    with pytest.raises(TypeError, match=rf"Point\(\) .*{message}"):
        Point(*args, **kwargs)


def test_equality_and_hash():
    assert Point(1.0, tags=["a"]) == Point(1.0, tags=["a"])
    assert Point(1.0) != Point(2.0)
    assert Point(1.0, cache={"a": 1}) == Point(1.0)  # (compare=False)
    assert Point(1.0) != PointDC(1.0)
    with pytest.raises(TypeError):
        hash(Point(1.0))  # (mutable and compared by value, as a dataclass)
    a = Handle("a")
    assert a == a and a != Handle("a") and hash(a) == hash(a)  # identity


def test_replace_runs_init_and_post_init():
    p = Point(1.0, 2.0, ["a"])
    q = replace(p, y=3.0)
    assert (q.x, q.y, q.tags) == (1.0, 3.0, ["a"]) and p.y == 2.0
    assert replace(Checked(2), n=5).doubled == 10
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        replace(p, z=1.0)


def test_import_makes_few_dataclasses():
    """``import acausal`` processes only the dataclasses that must stay ones (public
    result types such as ``SimulationStats``, which users may give to ``dataclasses.asdict``,
    and frozen, hashable values such as ``Unit``): 13 of the 46 it had, each ~1 ms of a
    cold start on the CI machine."""
    code = ("import dataclasses, json\nmade = []\norig = dataclasses._process_class\n"
            "def spy(cls, *a, **k):\n    made.append(cls.__qualname__)\n"
            "    return orig(cls, *a, **k)\n"
            "dataclasses._process_class = spy\nimport acausal\nprint(json.dumps(made))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": ROOT}, check=True, timeout=300)
    made = json.loads(r.stdout.strip().splitlines()[-1])
    assert len(made) <= 13, made


@record
class Point3(Point):
    z: float = 0.0
    more: list[int] = field(default_factory=list)


def test_a_derived_record_has_its_bases_fields_first():
    p = Point3(1.0, 2.0, z=3.0)
    assert (p.x, p.y, p.tags, p.z, p.more) == (1.0, 2.0, [], 3.0, [])
    assert Point3(1.0).tags is not Point3(1.0).tags
    assert repr(Point3(1.0)) == "Point3(x=1.0, y=0.0, tags=[], z=0.0, more=[])"


def test_repr_of_a_record_that_holds_itself():
    p = Point(1.0)
    p.tags.append(p)
    assert repr(p) == "Point(x=1.0, y=0.0, tags=[...])"


@record(frozen=True)
class Frozen:
    name: str
    size: int = 1
    note: str = field(default="", compare=False)


@dataclasses.dataclass(frozen=True)
class FrozenDC:
    name: str
    size: int = 1
    note: str = field(default="", compare=False)


@record(frozen=True, eq=False)
class FrozenHandle:
    name: str


def test_a_frozen_record_behaves_as_a_frozen_dataclass():
    r, d = Frozen("a", 2, note="x"), FrozenDC("a", 2, note="x")
    for obj in (r, d):
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'size'"):
            obj.size = 3  # type: ignore[misc]
        with pytest.raises(dataclasses.FrozenInstanceError):
            del obj.name  # type: ignore[misc]
    assert (r.name, r.size, r.note) == (d.name, d.size, d.note)
    # hashed by the compared fields (``note`` is not), so usable as a key
    assert hash(r) == hash(Frozen("a", 2, note="y")) == hash(("a", 2)) == hash(d)
    assert {r: 1}[Frozen("a", 2)] == 1 and Frozen("a", 2) != Frozen("a", 3)
    h = FrozenHandle("a")  # without eq: by identity, as a dataclass
    assert h != FrozenHandle("a") and hash(h) == object.__hash__(h)


def test_records_are_dataclasses_to_the_dataclasses_module():
    """Users give the public result types (``SimulationStats``, ``StructureReport``) to
    ``dataclasses.asdict``; records carry the field table it reads."""
    p = Point(1.0, tags=["a"], cache={"k": 1})
    q = PointDC(1.0, tags=["a"], cache={"k": 1})
    assert dataclasses.is_dataclass(p) and dataclasses.is_dataclass(Point)
    assert ([(f.name, f.repr, f.compare) for f in dataclasses.fields(p)]
            == [(f.name, f.repr, f.compare) for f in dataclasses.fields(q)])
    assert dataclasses.asdict(p) == dataclasses.asdict(q)
    assert dataclasses.astuple(Point3(1.0, z=2.0)) == (1.0, 0.0, [], {}, 2.0, [])
    moved = dataclasses.replace(p, y=5.0)
    assert type(moved) is Point and (moved.x, moved.y, moved.tags) == (1.0, 5.0, ["a"])
    assert dataclasses.replace(Frozen("a"), size=4) == Frozen("a", 4)
    assert dataclasses.asdict(Checked(3)) == {"n": 3, "doubled": 6}


def test_the_public_result_types_convert_with_asdict():
    import acausal as ac
    from acausal.solvers import IntegratorOptions

    assert dataclasses.asdict(IntegratorOptions(rtol=1e-7))["rtol"] == 1e-7
    kn = ac.units.parse_unit("kN")
    assert dataclasses.asdict(kn) == {"scale": 1000.0, "dim": kn.dim, "offset": 0.0}
    stats = ac.SimulationStats()
    assert dataclasses.asdict(stats)["reselections"] == 0
    assert ac.Electrical == dataclasses.replace(ac.Electrical)
    assert hash(ac.Electrical) == hash(dataclasses.replace(ac.Electrical))
