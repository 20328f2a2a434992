"""Leaving ``run_test`` while the engine still sends. Pilot's teardown closes the app without ``exit()``: it closes
the screens, then lets the app's message loop drain its queue, so the handlers of the engine's messages queued by
then (and of those still arriving) mounted and queried widgets of a closing app, and MountError, ScreenStackError
or NoMatches reached the app, which ``run_test`` re-raises as its block ends. A loaded machine is where the app
falls that far behind the engine; here ``held`` keeps the app's message loop busy until the screens are closed,
so the engine's events are still queued then, every time."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from agentcli.core.events import MAIN, ApprovalRequested, Event, SubagentStarted, TextDelta, ToolCallFinished
from agentcli.ui.tui.app import AgentApp
from tests import waiting
from tests.fakes.anthropic_server import FakeAnthropic, reply, text, tool_use, tool_use_block
from tests.ui.test_tui_support import SIZE, is_child, is_main, send, until

LONG = " ".join(f"word{i}" for i in range(2000))
PACED = 0.002  # seconds between the events of a stream the test leaves in the middle: they arrive during the teardown


def held(app: AgentApp) -> Callable[[], bool]:
    """Keep the app's message loop busy, as a busy machine does, until its screens are closed: what the engine
    sends meanwhile waits on the app's queue. Returns whether the hold has begun."""
    begun = threading.Event()

    async def hold() -> None:
        begun.set()
        await waiting.until(lambda: not app.screen_stack, "the app to close its screens")

    app.call_later(hold)
    return begun.is_set


def main_text(server: FakeAnthropic, gate: threading.Event) -> None:
    server.script(text(LONG, gate=gate, chunk_delay=PACED))


def tool_call(server: FakeAnthropic, gate: threading.Event) -> None:
    server.script(tool_use("grep", {"pattern": "def"}, gate=gate), text(LONG, chunk_delay=PACED))


def subagent(server: FakeAnthropic, gate: threading.Event) -> None:
    """A child in the background, streaming, and the main agent streaming beside it."""
    task = tool_use_block("task", {"description": "Find it", "prompt": "Find it.", "run_in_background": True})
    server.when(is_main, reply(task, gate=gate), text(LONG, chunk_delay=PACED))
    server.when(is_child, text(LONG, chunk_delay=PACED))


def approval(server: FakeAnthropic, gate: threading.Event) -> None:
    server.script(tool_use("bash", {"command": "echo one"}, gate=gate), text("Ran it."))


def turn_end(server: FakeAnthropic, gate: threading.Event) -> None:
    server.script(text("Done.", gate=gate))


def streamed(seen: list[Event], agent: str) -> bool:
    return sum(isinstance(e, TextDelta) and e.agent_id == agent for e in seen) >= 20


KINDS: dict[str, tuple[Callable[[FakeAnthropic, threading.Event], None], Callable[[list[Event], AgentApp], bool]]] = {
    "main agent text": (main_text, lambda seen, app: streamed(seen, MAIN)),
    "tool call": (
        tool_call,
        lambda seen, app: any(isinstance(e, ToolCallFinished) for e in seen) and streamed(seen, MAIN),
    ),
    "subagent panel": (
        subagent,
        lambda seen, app: (
            any(isinstance(e, SubagentStarted) for e in seen) and streamed(seen, "sa-1") and streamed(seen, MAIN)
        ),
    ),
    "approval question": (approval, lambda seen, app: any(isinstance(e, ApprovalRequested) for e in seen)),
    "turn end": (
        turn_end,
        lambda seen, app: app.turns.work is not None and app.turns.work.is_finished,
    ),  # TurnEnded posted
}


@pytest.mark.parametrize("kind", KINDS)
async def test_leaving_while_the_engine_sends_reaches_no_handler_of_the_closing_app(server, tui, kind):
    script, sent = KINDS[kind]
    gate = threading.Event()
    script(server, gate)
    app = tui(interactive=True)
    seen: list[Event] = []
    async with app.run_test(size=SIZE) as pilot:
        app.session.subscribe(seen.append)  # what the engine sent, whether or not the app has handled it
        await send(pilot, "Go")
        await until(pilot, lambda: server.requests, "the model to be asked")
        await waiting.until(held(app), "the app's message loop to be held")
        gate.set()
        await waiting.until(lambda: sent(seen, app), f"the engine to send the {kind}")
        assert app.is_running
    # Leaving the block closed the app with the engine's events queued: had a handler raised, run_test would have
    # re-raised it just now.
    assert not app.screen_stack


async def test_ctrl_q_while_the_agents_stream_still_quits_as_before(server, tui):
    """The user's way out is unchanged: exit() ends the message loop on a whole screen, so until then the handlers
    still act (the app is running), and the turn is interrupted as the app unmounts (opening.close)."""
    from agentcli.ui.tui.screens.quit import QuitScreen

    # Both go silent at last (a stream never ends by itself here): the answer is still unfinished when ctrl+q
    # comes, and the child still runs, so the app asks first.
    task = tool_use_block("task", {"description": "Find it", "prompt": "Find it.", "run_in_background": True})
    server.when(is_main, reply(task), text(LONG, chunk_delay=PACED, stall_after_events=400, stall_seconds=600))
    server.when(is_child, text(LONG, chunk_delay=PACED, stall_after_events=60, stall_seconds=600))
    app = tui()
    seen: list[Event] = []
    async with app.run_test(size=SIZE) as pilot:
        app.session.subscribe(seen.append)
        await send(pilot, "Go")
        await until(pilot, lambda: streamed(seen, "sa-1") and streamed(seen, MAIN), "both agents to stream")
        await pilot.press("ctrl+q")
        await until(pilot, lambda: isinstance(app.screen, QuitScreen), "the question (sa-1 still runs)")
        await pilot.press("y")
        await waiting.until(lambda: not app.is_running, "the app to quit")
        assert app.return_value == 0
    assert app.session.main.messages[-1]["role"] == "user"  # the answer cut off: a history that resumes validly
    server.assert_no_rejections()
