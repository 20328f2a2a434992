"""Screens keep their styles as default CSS, not in a CSS_PATH file: a screen's own stylesheet is added at its
first push, and Textual then parses the app's stylesheet again and restyles every widget (the first approval
question, the trust window and ctrl+o paid for it)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from textual.screen import Screen

import agentcli.ui.tui.screens as screens


def test_no_screen_brings_a_stylesheet_of_its_own():
    found = []
    for info in pkgutil.iter_modules(screens.__path__):
        module = importlib.import_module(f"{screens.__name__}.{info.name}")
        found += [
            cls
            for _, cls in inspect.getmembers(module, inspect.isclass)
            if issubclass(cls, Screen) and cls.__module__ == module.__name__
        ]
    assert len(found) >= 8  # the approval, trust, no-key, rewind, sessions, transcript… screens
    assert [cls.__name__ for cls in found if cls.__dict__.get("CSS_PATH")] == []
