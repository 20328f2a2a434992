"""The footer of keys: Textual's, rebuilt only when the keys it would show change."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer as TextualFooter


class Footer(TextualFooter):
    """Textual's Footer rebuilds all its keys (a widget each, styled anew) after every refresh of the screen's
    bindings, though most refreshes (a focus change, a status update, the session opening) leave the same keys in
    the same states: before agentcli's first screen three refreshes came before the first rebuild had run, and each
    scheduled one more. This one skips a refresh that would draw what the last rebuild it scheduled draws."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: tuple[object, ...] | None = None  # what the last rebuild scheduled draws

    def _showing(self) -> tuple[object, ...]:
        """What the keys are drawn from: each active binding, whether it is enabled, and the footer's modes."""
        keys = tuple(
            (key, binding.action, binding.description, binding.show, binding.key_display, enabled, tooltip)
            for key, (_, binding, enabled, tooltip) in self.screen.active_bindings.items()
        )
        return keys, self.compact, self.show_command_palette

    def bindings_changed(self, screen: Screen[Any]) -> None:
        if self.is_attached and screen is self.screen and screen.app.app_focus:  # Textual rebuilds only then
            showing = self._showing()
            if showing == self._shown:
                return
            self._shown = showing
        super().bindings_changed(screen)
