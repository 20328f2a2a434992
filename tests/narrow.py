"""Narrowing for tests: an SDK hands back unions (a content block, a message of a stream), and a test that knows which
kind it expects says so with `of(Kind, value)`, which fails the test, naming what came, when it is another kind."""

from __future__ import annotations

import re
from typing import TypeVar

T = TypeVar("T")


def of(kind: type[T], value: object) -> T:
    """value, checked to be a kind (so mypy knows it is one, and the test fails at once when it is not)."""
    assert isinstance(value, kind), f"expected a {kind.__name__}, got {value!r}"
    return value


def found(pattern: re.Pattern[str] | str, text: str) -> re.Match[str]:
    """pattern's first match in text (re.search), which the test needs: it fails, showing the text, when there is none."""
    match = re.search(pattern, text)
    assert match is not None, f"{pattern!r} not in {text!r}"
    return match
