"""Where keys go on the main screen: typing lands in the input, wherever the focus is.

A focused widget keeps its own keys (the panel's ``x`` and ``space``, a tool line's ``enter``) only when
the user moved there on purpose (tab, shift+tab, a click) and is not typing. While the user types, every
printable key is text: it goes to the input and takes the focus there, so the rest of the typing lands
there too, and ``enter`` sends what was typed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.app import App
from textual.widgets import TextArea

from .widgets.prompt import PromptInput
from .widgets.side_panel import EntryTitle

if TYPE_CHECKING:
    from .app import AgentApp

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


def clicked_or_pasted(app: "AgentApp", event: events.Event) -> bool:
    """On the main screen a click moves the focus on purpose, and a paste goes into the input, like typed
    text; True when the paste was taken here."""
    if not isinstance(event, (events.MouseDown, events.Paste)) or app.screen is not app.screen_stack[0]:
        return False
    prompt = app.prompt
    prompt.typing = False
    if isinstance(event, events.Paste) and not event.is_forwarded and not isinstance(app.focused, TextArea):
        prompt.focus()
        prompt.insert(event.text)
        prompt.typing = True
        return True
    return False
