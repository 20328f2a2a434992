"""config.Settings builds the engine's one settings value (core/settings.py): each field from the setting of its name."""

from __future__ import annotations

import dataclasses
from typing import Any

from agentcli.config import Settings
from agentcli.core.settings import EngineSettings, ToolSettings


def unlike_default(value: Any, n: int) -> Any:
    """A value of ``value``'s kind that no other field gets (n is the field's place)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return type(value)(1000 + n)
    if isinstance(value, str):
        return f"value-{n}"
    if isinstance(value, list):
        return [f"item-{n}"]
    if isinstance(value, dict):
        return {f"key-{n}": [f"item-{n}"]}
    return (f"flag-{n}",)  # None: a list's place (only_tools)


def test_every_engine_setting_comes_from_the_setting_of_its_name():
    settings = Settings()
    for n, field in enumerate(dataclasses.fields(Settings)):
        setattr(settings, field.name, unlike_default(getattr(settings, field.name), n))
    engine = settings.engine()

    def compare(built: Any) -> None:
        for field in dataclasses.fields(built):
            value = getattr(built, field.name)
            if isinstance(value, ToolSettings):
                compare(value)
                continue
            given = getattr(settings, field.name)
            assert value == (tuple(given) if isinstance(value, tuple) else given), field.name

    compare(engine)
    assert {f.name for f in dataclasses.fields(EngineSettings)} - {"tools"} <= {
        f.name for f in dataclasses.fields(Settings)
    }


def test_the_engine_settings_are_frozen():
    engine = Settings().engine()
    for part, name in ((engine, "model"), (engine.tools, "search_timeout")):
        try:
            setattr(part, name, "changed")
        except dataclasses.FrozenInstanceError:
            continue
        raise AssertionError(f"{type(part).__name__}.{name} could be changed after the session opened")
