"""The default look: a warm dark theme. Textual's built-in themes stay selectable (ctrl+p → Theme)."""

from __future__ import annotations

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
