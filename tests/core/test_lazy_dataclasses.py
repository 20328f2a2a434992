"""Dataclass methods compiled at their first call (core/system/lazy_dataclasses.py, which the suite runs with:
tests/__init__.py) behave as those compiled when the class is defined."""

from __future__ import annotations

import dataclasses
import inspect

import pytest


@dataclasses.dataclass(frozen=True, order=True)
class Point:
    """A frozen, ordered dataclass."""

    x: int
    y: int = 0
    tags: list[str] = dataclasses.field(default_factory=list, compare=False)


@dataclasses.dataclass
class Node:
    """A mutable one whose repr meets itself."""

    name: str
    child: Node | None = None


@dataclasses.dataclass
class Undocumented:
    a: int
    b: str = "x"


def test_methods_compile_at_their_first_call_then_are_the_class_own() -> None:
    stand_in = vars(Point)["__init__"]
    assert stand_in.__qualname__ == "Point.__init__"
    first = Point(1)
    compiled = vars(Point)["__init__"]
    assert compiled is not stand_in and compiled.__qualname__ == "Point.__init__"
    assert str(inspect.signature(Point)) == "(x: 'int', y: 'int' = 0, tags: 'list[str]' = <factory>) -> None"
    assert first == Point(1, tags=["t"]) and first < Point(1, 1) and hash(first) == hash(Point(1))
    assert first.tags is not Point(1).tags
    assert repr(first) == "Point(x=1, y=0, tags=[])"
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
        first.x = 2  # type: ignore[misc]
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'x'"):
        Point()  # type: ignore[call-arg]


def test_a_recursive_repr_and_a_class_without_a_docstring_are_as_before() -> None:
    node = Node("a")
    node.child = node
    assert repr(node) == "Node(name='a', child=...)"
    assert Undocumented.__doc__ == "Undocumented(a: 'int', b: 'str' = 'x')"
    assert Undocumented(1) == Undocumented(1, "x") != Undocumented(2)
