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


def test_a_class_without_a_docstring_compiles_its_methods_when_its_docstring_is_first_read() -> None:
    """dataclasses writes such a class's docstring from its compiled __init__: written when first read, so that
    defining the class compiles nothing (Textual's RuleSet, Styles... before the TUI's first screen)."""

    @dataclasses.dataclass(frozen=True)
    class Bare:
        a: int
        b: str = "x"

    stand_in = vars(Bare)["__init__"]
    assert "compile" in vars(stand_in)  # a stand-in: not compiled yet
    assert Bare.__doc__ == "Bare(a: 'int', b: 'str' = 'x')"
    assert vars(Bare)["__doc__"] == Bare.__doc__ and vars(Bare)["__init__"] is not stand_in
    assert inspect.getdoc(Bare(1)) == Bare.__doc__ and Bare(1) == Bare(1, "x")


def test_compile_waiting_compiles_the_methods_not_yet_called_as_their_first_call_would(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentcli.core.system import lazy_dataclasses

    monkeypatch.setattr(lazy_dataclasses, "_waiting", [])  # this test's class alone: the others keep theirs waiting

    @dataclasses.dataclass(frozen=True)
    class Later:
        """Defined here, none of its methods called yet."""

        a: int
        b: str = "x"

    stand_ins = {name: vars(Later)[name] for name in ("__init__", "__eq__", "__setattr__")}
    assert lazy_dataclasses.compile_waiting() >= len(stand_ins)
    for name, stand_in in stand_ins.items():
        compiled = vars(Later)[name]
        assert compiled is not stand_in and compiled.__qualname__.endswith(f"<locals>.Later.{name}")
    assert Later(1) == Later(1, "x") != Later(2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Later(1).a = 2  # type: ignore[misc]
    assert lazy_dataclasses.compile_waiting() == 0  # nothing is compiled twice
