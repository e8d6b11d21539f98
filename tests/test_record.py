"""kvlint.record: the value-class decorator that replaces dataclasses for start-up speed."""

from __future__ import annotations

import copy
import pickle
from typing import Generic, TypeVar

import pytest

from kvlint.deployment import Value
from kvlint.findings import Location
from kvlint.record import FrozenRecordError, field, fields, record, replace

T = TypeVar("T")


@record
class Box:
    name: str
    size: int = 3
    tags: list[str] = field(default_factory=list)
    note: str = field(default="", compare=False)


@record(frozen=True)
class Point(Generic[T]):
    x: T
    y: T

    @property
    def total(self):
        return self.x + self.y


def test_construction_positional_keyword_and_defaults():
    assert (Box("a").name, Box("a").size, Box("a").tags) == ("a", 3, [])
    assert Box("a", 5).size == 5 and Box(name="a", size=7).size == 7
    first, second = Box("a"), Box("a")
    first.tags.append("x")
    assert second.tags == []  # a fresh list each time
    assert fields(Box) == ("name", "size", "tags", "note")


def test_construction_errors_name_the_field():
    with pytest.raises(TypeError, match="missing field 'name'"):
        Box()
    with pytest.raises(TypeError, match="no field 'colour'"):
        Box("a", colour=1)
    with pytest.raises(TypeError, match="'name' twice"):
        Box("a", name="b")
    with pytest.raises(TypeError, match="takes 4 field values but 5"):
        Box("a", 1, [], "", 9)


def test_eq_repr_and_compare_false():
    assert Box("a", note="x") == Box("a", note="y")
    assert Box("a") != Box("b")
    assert Box("a") != ("a", 3, [], "")
    assert repr(Box("a")) == "Box(name='a', size=3, tags=[])"
    with pytest.raises(TypeError):
        hash(Box("a"))  # mutable records are unhashable, as with dataclasses


def test_frozen_records_are_immutable_and_hashable():
    p = Point(1, 2)
    with pytest.raises(FrozenRecordError):
        p.x = 5
    with pytest.raises(AttributeError):
        del p.y
    with pytest.raises(AttributeError):
        p.z = 1  # slots: no stray attributes
    assert {Point(1, 2), Point(1, 2)} == {p} and p.total == 3
    assert Point[int] is not None  # still generic


def test_replace_pickle_and_copy():
    p = Point(1, 2)
    assert replace(p, y=5) == Point(1, 5) and p.y == 2
    with pytest.raises(TypeError, match="no field 'z'"):
        replace(p, z=1)
    for clone in (pickle.loads(pickle.dumps(p)), copy.copy(p), copy.deepcopy(p)):
        assert clone == p and type(clone) is Point
    box = Box("a", 1, ["t"], "n")
    assert pickle.loads(pickle.dumps(box)).note == "n"


def test_kvlint_value_types_are_records():
    where = Location("f.yaml", 3, 4)
    v = Value(5, "stated", where)
    assert v == Value(5, "stated", Location("f.yaml", 3, 4)) and hash(v) == hash(Value(5, "stated", where))
    assert pickle.loads(pickle.dumps(v)) == v


@pytest.mark.parametrize("default", [[], {}, set(), Box("a", 1)])
def test_a_mutable_default_is_refused_at_definition(default):
    with pytest.raises(ValueError, match="mutable default .* use field\\(default_factory"):

        @record
        class Shared:
            xs: object = default

    with pytest.raises(ValueError, match="mutable default"):

        @record
        class SharedByField:
            xs: object = field(default=default)


def test_immutable_defaults_and_factories_are_fine():
    @record
    class Fine:
        t: tuple = ()
        s: frozenset = frozenset()
        p: Point = Point(0, 0)  # frozen records are hashable
        xs: list = field(default_factory=list)

    a, b = Fine(), Fine()
    assert a.xs is not b.xs and a.p is b.p


def test_a_record_subclass_keeps_its_parents_fields():
    @record
    class Parent:
        x: int
        tags: list = field(default_factory=list)
        note: str = field(default="", compare=False)

    @record
    class Child(Parent):
        y: int = 7
        note: str = "child"  # redeclared: keeps its place, takes the new default (and is compared)

    c = Child(1)
    assert fields(Child) == ("x", "tags", "note", "y")
    assert (c.x, c.tags, c.note, c.y) == (1, [], "child", 7)
    assert Child(1, note="a") != Child(1, note="b")
    assert Parent(1, note="a") == Parent(1, note="b")
    assert replace(c, y=8) == Child(1, [], "child", 8)
    assert copy.deepcopy(c) == c and isinstance(c, Parent)
    with pytest.raises(TypeError, match="missing field 'x'"):
        Child()


def test_a_class_built_often_gets_a_compiled_init_that_behaves_the_same():
    from kvlint import record as record_module

    @record
    class Hot:
        name: str
        size: int = 3
        tags: list[str] = field(default_factory=list)

    shared = Hot.__init__
    for _ in range(record_module.HOT):
        Hot("warm")
    assert Hot.__init__ is not shared  # swapped for one written out for these fields
    first, second = Hot("a"), Hot(name="b", size=5)
    first.tags.append("x")
    assert (first.size, second.size, Hot("c").tags, second.tags) == (3, 5, [], [])
    assert Hot("a", 1, ["t"]) == Hot(name="a", size=1, tags=["t"])
    with pytest.raises(TypeError, match="missing field 'name'"):
        Hot()
    with pytest.raises(TypeError, match="no field 'colour'"):
        Hot("a", colour=1)
    with pytest.raises(TypeError, match="'name'"):
        Hot("a", name="b")
    with pytest.raises(TypeError, match="takes 3 field values but 4"):
        Hot("a", 1, [], 9)
    assert copy.copy(Hot("p", 2)) == Hot("p", 2)  # __reduce__ rebuilds through the compiled __init__
