"""What the app's own keys do beyond the conversation: ctrl+c, permission modes, the panel's focus,
cancelling a subagent, switching to another session, and what quitting prints; and how a turn's end is told."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import TextArea

from ...core.door import MODES
from .. import slash
from .base import AppBase
from .screens.transcript import TranscriptScreen
from .widgets.tool_call import TaskEntry

if TYPE_CHECKING:
    from ...core.door import SessionSurface
    from .messages import TurnEnded


# Keys that scroll the conversation from the input (and the panel): what each does.
SCROLL_KEYS = {
    "pageup": "page_up",
    "pagedown": "page_down",
    "shift+up": "up",
    "shift+down": "down",
    "ctrl+home": "top",
    "ctrl+end": "bottom",
}


def scroll_conversation(app: AppBase, how: str) -> None:
    """pageup, pagedown, shift+up/down, ctrl+home/end: scroll the conversation, wherever the focus is.

    Scrolling up stops following new output; ctrl+end (or scrolling back to the bottom) follows it again.
    """
    conversation = app.conversation
    if how == "bottom":
        conversation.follow()
    elif how == "top":
        conversation.scroll_home(animate=False)
    else:
        getattr(conversation, f"scroll_{how}")(animate=False)


def cycle_mode(app: AppBase) -> None:
    """shift+tab: the next permission mode. bypassPermissions is in the round only when the session began in it."""
    if app.session is None:  # still opening: the mode is the settings' until then
        return
    session = app.session
    round_ = [m for m in MODES if m != "bypassPermissions" or session.settings.permission_mode == m]
    index = round_.index(session.permission_mode) if session.permission_mode in round_ else -1
    session.set_permission_mode(round_[(index + 1) % len(round_)])
    app.refresh_status()


def focus_panel(app: AppBase) -> bool:
    """Move the focus to the panel's newest running entry (or its newest one); False when there is none."""
    if not app.panel.is_open:
        return False
    app.prompt.typing = False  # moved there on purpose: the entry's keys act
    return app.panel.focus_newest()


def toggle_panel(app: AppBase) -> None:
    """ctrl+t: show the panel; when it shows, move to it; from inside it, hide it and go back to the input."""
    panel = app.panel
    if not panel.is_open:
        panel.open()
    elif panel.focused_id() is not None or not focus_panel(app):
        panel.open(False)
        app.prompt.focus()


async def cleared(app: AppBase) -> None:
    """/clear: finished subagents leave the panel, which hides once empty (/agents and ctrl+o still open
    their transcripts)."""
    in_panel = app.panel.focused_id() is not None
    await app.panel.drop_finished()
    if not app.panel.entries:
        app.panel.open(False)
    if in_panel and app.panel.focused_id() is None:
        app.prompt.focus()


def cancel(app: AppBase, agent_id: str) -> None:
    """x: cancel one subagent. Its entry says "cancelling…" at once (a SubagentCancelling event)."""
    state = app.subagents.get(agent_id)
    if state is not None and state.finished:
        app.notify(f"{agent_id} has already finished ({state.status}): there is nothing to cancel.", severity="warning")
    elif state is not None and state.cancelling:
        app.notify(f"{agent_id} is already cancelling: it is summing up what it found.")
    else:
        app.session.cancel_child(agent_id)


def finished(app: AppBase, agent_id: str, then: str) -> bool:
    """Whether the panel's subagent has finished; if so a warning says so, ending in ``then``."""
    state = app.subagents.get(agent_id)
    if state is None or not state.finished:
        return False
    app.notify(f"{agent_id} has finished ({state.status}): {then}", severity="warning")
    return True


def steer(app: AppBase, agent_id: str) -> None:
    """m: the input gets "/steer ID ", for the user to type the message and send it with enter."""
    if finished(app, agent_id, "ask the main agent to resume it instead."):
        return
    app.prompt.load_text(f"/steer {agent_id} ")
    app.prompt.move_cursor(app.prompt.document.end)
    app.prompt.focus()
    app.prompt.typing = True  # what follows is text for the input, not the panel's keys


def wrap_up(app: AppBase, agent_id: str) -> None:
    """w: ask one subagent to finish now; its entry says "wrapping up…" (a SubagentWrappingUp event)."""
    if finished(app, agent_id, "there is nothing to wrap up."):
        return
    text, failed = slash.wrap_up(app.session, agent_id)
    app.notify(text, severity="warning" if failed else "information")


async def pick_session(app: AppBase) -> None:
    """/resume: the session picker; the chosen session opens once this app has closed (run_tui)."""
    from .screens.sessions import SessionPicker

    if await app.refuse_while_busy():
        return

    def chosen(session_id: str | None) -> None:
        if session_id:
            app.switch_to = session_id
            app.exit(0)

    app.push_screen(SessionPicker(app.session.workspace.root, app.session.id), chosen)


def goodbye(session: SessionSurface | None) -> str:
    """What quitting prints: how to come back to this session, when any of it was saved."""
    return slash.goodbye(session, f"agentcli --resume {session.id}" if session is not None else "")


def open_transcript(app: AppBase, agent_id: str | None) -> None:
    state = app.subagents.get(agent_id or "")
    if state is None:
        app.notify("No subagent has run in this session yet.", severity="warning")
        return
    if isinstance(app.screen, TranscriptScreen):
        if app.screen.agent_id == state.id:
            return
        app.pop_screen()
    screen = TranscriptScreen(state, show_times=not app.testing, now=app.clock, stall_after=app.view.stall_after)
    screen.conversation.view = app.view  # the child's events are folded there before the screen is given them
    app.push_screen(screen)


def open_focused_transcript(app: AppBase) -> None:
    """ctrl+o: the transcript of the focused entry or task line, or else of the latest subagent."""
    focused = app.screen.focused
    task = focused.parent if focused is not None and isinstance(focused.parent, TaskEntry) else None
    chosen = app.panel.focused_id() or (task.agent_id if task else None)
    open_transcript(app, chosen or next(reversed(app.subagents), None))


def ctrl_c(app: AppBase) -> None:
    """Copy the selection; or stop the running turn; or clear the input; or, pressed twice, quit."""
    focused = app.focused
    selected = app.screen.get_selected_text()
    if isinstance(focused, TextArea) and focused.selected_text:
        focused.action_copy()
    elif selected:
        app.copy_to_clipboard(selected)
    elif app.busy:
        app.action_interrupt()
    elif app.prompt.text and app.screen is app.screen_stack[0]:
        app.prompt.clear()
    elif app.turns.arm_quit():
        app.request_quit()  # asks first while subagents still run
    else:
        app.notify("Press ctrl+c again to quit.", timeout=3)
        app.set_timer(3, app.disarm_ctrl_c)


TURN_NOTES = {
    "interrupted": ("Interrupted. The conversation is kept; send a message to go on.", "warning"),
    "nothing": ("There is too little conversation to compact yet.", "info"),
}


async def turn_ended(app: AppBase, message: TurnEnded) -> None:
    """A turn (or /compact) ended: say how, if it did not simply answer, and start what waits."""
    following = app.turns.ended(message.status)  # the queue, with what the turn did not read of the steered
    app.working.stop()
    app.refresh_bindings()
    await app.conversation.end_answer()
    if message.status == "capped":
        await app.conversation.add_notice(
            f"Stopped after {app.session.max_turns} turns; send a message to go on.", "warning"
        )
    elif message.status in ("error", "no_key"):
        await app.conversation.add_notice(message.detail, "error")
    elif message.status in TURN_NOTES:
        await app.conversation.add_notice(*TURN_NOTES[message.status])
    if message.status == "no_key":
        app.no_key = True
    app.refresh_status()
    if following:
        app.start_work(app.session.send(following), "turn")
    else:  # after esc the results wait for the next child, or the next message (Turns.ended)
        app.read_results()
