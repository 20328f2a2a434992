"""What the modals that answer an engine's question share (approval.py, elicitation.py): the question is a
future the engine waits on; the screen's answer resolves it, and the engine may withdraw it meanwhile (its
call was cancelled, the turn interrupted), when the screen closes by itself."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

from textual.app import App
from textual.screen import ModalScreen

Answer = TypeVar("Answer")


def push(app: App[object], screen: ModalScreen[Answer], future: asyncio.Future[Any] | None, unanswered: Answer) -> None:
    """Show ``screen`` unless the question was withdrawn before; its answer (``unanswered`` when it closed
    without one) resolves ``future``."""
    if future is None or future.done():
        return

    def answered(answer: Answer | None) -> None:
        if not future.done():
            future.set_result(unanswered if answer is None else answer)

    app.push_screen(screen, answered)


def close_when_withdrawn(screen: ModalScreen[Answer], future: asyncio.Future[Any] | None, answer: Answer) -> None:
    """From ``on_mount``: once ``future`` is resolved elsewhere, the screen (still on top) dismisses itself."""
    if future is None:
        return

    def withdrawn() -> None:
        if screen.is_current:
            screen.dismiss(answer)

    future.add_done_callback(lambda _: screen.app.call_later(withdrawn))
