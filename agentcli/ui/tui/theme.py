"""The default look: a warm dark theme. Textual's built-in themes stay selectable (ctrl+p → Theme)."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.theme import Theme

AGENTCLI_THEME = Theme(
    name="agentcli",
    primary="#D97757",  # coral: the user, focus, the panel
    secondary="#7AA2C8",  # steel blue: tools and agent types
    accent="#E0AF68",
    warning="#E5C07B",
    error="#E06C75",
    success="#98C379",
    foreground="#E8E3DC",
    background="#1A1918",
    surface="#23211F",
    panel="#2B2825",
    dark=True,
    variables={
        "block-cursor-background": "#D97757 35%",
        "block-cursor-blurred-background": "#D97757 15%",
        "footer-key-foreground": "#E0AF68",
        "input-selection-background": "#D97757 35%",
    },
)


def start_in(app: App[Any], name: str) -> None:
    """Give ``app`` its first theme (registered) before it runs, as Textual's own start does with its default: the
    class and the CSS variables the theme's watcher would set, without the watcher. Setting ``app.theme`` queued a
    re-parse of every CSS source and a restyle of the screen, which ran before the first frame (about 3 ms of the
    launch) although nothing had been styled in another theme yet. A theme changed later (ctrl+p) goes through
    ``app.theme`` as before."""
    app.set_reactive(App.theme, name)
    dark = app.current_theme.dark
    app.update_classes({f"-theme-{name}": True, "-dark-mode": dark, "-light-mode": not dark}, update=False)
    app._refresh_truecolor_filter(app.ansi_theme)  # a light theme's own mapping of the ANSI colours
    app.stylesheet.set_variables(app.get_css_variables())  # no CSS is parsed yet: nothing to parse again
