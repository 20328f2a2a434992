"""The app starts in its theme without the theme's watcher (ui/tui/theme.py start_in), which had queued a second
parse of all the CSS before the first frame: the first screen must look as that watcher would have made it."""

from __future__ import annotations

from typing import Any

import pytest

from agentcli.ui.tui.widgets.prompt import PromptInput
from agentcli.ui.tui.widgets.status_bar import StatusBar

SIZE = (100, 30)


def look(app: Any) -> tuple[Any, ...]:
    return (
        sorted(name for name in app.classes if name.startswith("-")),
        app.screen.styles.background,
        app.query_one(PromptInput).styles.background,
        app.query_one(StatusBar).styles.color,
        app.query_one("#conversation").styles.background,
        app.stylesheet._variables,  # the CSS variables a screen pushed later is parsed with
    )


@pytest.mark.parametrize("theme", ["agentcli", "textual-light"])
async def test_the_first_screen_looks_as_the_themes_watcher_makes_it(tui, theme):
    app = tui(theme=theme)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        first = look(app)
        assert app.theme == theme
        assert ("-light-mode" in app.classes) is (theme == "textual-light")
        app.theme = "nord" if theme == "agentcli" else "agentcli"
        await pilot.pause()
        assert look(app) != first  # another theme does change these
        app.theme = theme  # back through the watcher, which parses the CSS again and restyles every widget
        await pilot.pause()
        assert look(app) == first
