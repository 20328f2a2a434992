"""Where keys go on the main screen: typing lands in the input, wherever the focus is.

A focused widget keeps its own keys (the panel's ``x`` and ``space``, a tool line's ``enter``) only when
the user moved there on purpose (tab, shift+tab, a click) and is not typing. While the user types, every
printable key is text: it goes to the input and takes the focus there, so the rest of the typing lands
there too, and ``enter`` sends what was typed.

Each key is decided as it reaches the app, in the order typed, before Textual hands it to the focused
widget. Decided later, once it had bubbled back up from the widget, a key typed on the panel found the
focus already moved to the input by the key before it, and was lost (a letter, or the enter): the
focus moves at once here, and a widget's own key acts at once, before the next key can move the focus.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import events
from textual.app import App
from textual.widgets import TextArea

from .widgets.prompt import PromptInput
from .widgets.side_panel import EntryTitle

NAVIGATION = ("tab", "shift+tab")  # moving the focus on purpose
# Keys that edit or send what is being typed: while typing, they follow the text into the input.
EDITING = ("enter", "backspace", "delete", "left", "right", "home", "end", "ctrl+j", "shift+enter", "ctrl+s")


async def arrived(app: App[Any], event: events.Key, prompt: PromptInput) -> bool:
    """Decide a key that reached the app, not yet handed to a widget. True when it was taken here;
    False lets Textual hand it to the focused widget (the input, when it is text)."""
    focused = app.focused
    if isinstance(focused, TextArea):
        return False
    if event.key in NAVIGATION:
        prompt.typing = False
        return False
    if for_the_input(app, event, focused, prompt):
        app.screen.set_focus(prompt)  # now, not after a refresh: the keys typed after this one go there too
        return False
    if isinstance(focused, EntryTitle) and event.key == "x" and "x" not in app.active_bindings:
        focused.action_cancel()  # a finished subagent: the app says why nothing happens
        return True
    # The focused widget's own key, pressed on purpose: its binding acts now, while it still has the focus.
    # (App._check_bindings is what Textual, pinned exactly, runs for the key once the widget is done with it.)
    return await app._check_bindings(event.key, priority=True) or await app._check_bindings(event.key)


def for_the_input(app: App[Any], event: events.Key, focused: object, prompt: PromptInput) -> bool:
    """Whether a key typed with the focus off the input is text (or edits text) for the input."""
    if event.is_printable and event.character:
        if not prompt.typing and (
            event.key in app.active_bindings or isinstance(focused, EntryTitle) and event.key in EntryTitle.KEYS
        ):
            return False  # the focused widget's own key, pressed on purpose
        prompt.typing = True
        return True
    return prompt.typing and event.key in EDITING


def clicked_or_pasted(app: App[Any], event: events.Event, input_: Callable[[], PromptInput]) -> bool:
    """On the main screen a click moves the focus on purpose, and a paste goes into the input (found by
    ``input_`` only then), like typed text; True when the paste was taken here."""
    if not isinstance(event, (events.MouseDown, events.Paste)) or app.screen is not app.screen_stack[0]:
        return False
    prompt = input_()
    prompt.typing = False
    if isinstance(event, events.Paste) and not event.is_forwarded and not isinstance(app.focused, TextArea):
        app.screen.set_focus(prompt)
        prompt.insert(event.text)
        prompt.typing = True
        return True
    return False
