"""Where keys go on the main screen: typing lands in the input, wherever the focus is.

A focused widget keeps its own keys (the panel's ``x`` and ``space``, a tool line's ``enter``) only when
the user moved there on purpose (tab, shift+tab, a click) and is not typing. While the user types, every
printable key is text: it goes to the input and takes the focus there, so the rest of the typing lands
there too, and ``enter`` sends what was typed.
"""

from __future__ import annotations

from textual import events
from textual.app import App
from textual.widgets import TextArea

from .widgets.prompt import PromptInput
from .widgets.side_panel import EntryTitle

NAVIGATION = ("tab", "shift+tab")  # moving the focus on purpose


def route(app: App[object], event: events.Key, prompt: PromptInput) -> bool:
    """Handle a key that reached the app from a widget other than the input. True when it was taken."""
    focused = app.focused
    if isinstance(focused, TextArea):
        return False
    if event.key in NAVIGATION:
        prompt.typing = False
        return False
    if event.is_printable and event.character:
        if not prompt.typing and (event.key in app.active_bindings
                                  or isinstance(focused, EntryTitle) and event.key in EntryTitle.KEYS):
            if isinstance(focused, EntryTitle) and event.key == "x" and "x" not in app.active_bindings:
                focused.action_cancel()  # a finished subagent: the app says why nothing happens
                return True
            return False  # the focused widget's own key, pressed on purpose
        prompt.focus()
        prompt.insert(event.character)
        prompt.typing = True
        return True
    if event.key == "enter" and prompt.typing and prompt.text.strip():
        prompt.focus()
        prompt.submit()  # what was typed, not the focused tool line's enter
        return True
    return False
