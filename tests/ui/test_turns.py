"""The turn controller (ui/turns.py) on its own, without a front end: what it does with a message sent while a turn
runs, with an interrupt, with ctrl+c, and with a finished child's results. The mailbox is the engine's own
(core/engine/steering.py), the work a real asyncio task."""

from __future__ import annotations

import asyncio

from agentcli.core.engine.steering import Steers
from agentcli.ui.turns import Turns


def controller(
    steer_on_enter: bool = False,
) -> tuple[Turns[asyncio.Future[None]], Steers, list[tuple[list[str], list[str]]]]:
    drawn: list[tuple[list[str], list[str]]] = []
    turns: Turns[asyncio.Future[None]] = Turns(steer_on_enter)
    turns.changed = lambda: drawn.append((list(turns.queued), list(turns.steered)))
    turns.mailbox = mailbox = Steers()
    return turns, mailbox, drawn


async def running(turns: Turns[asyncio.Future[None]]) -> asyncio.Future[None]:
    work: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    turns.started(work)
    return work


async def test_messages_sent_while_busy_wait_and_go_together_as_the_next_prompt():
    turns, mailbox, drawn = controller()
    await running(turns)
    turns.while_busy("second", other_way=False)  # enter: queued
    turns.while_busy("third", other_way=False)
    assert turns.busy and turns.queued == ["second", "third"] and not mailbox.waiting
    assert drawn[-1] == (["second", "third"], [])
    assert turns.ended("done") == "second\n\nthird"
    assert not turns.busy and turns.queued == [] and drawn[-1] == ([], [])


async def test_an_interrupt_cancels_the_turn_and_gives_back_what_it_did_not_read():
    turns, mailbox, _ = controller()
    work = await running(turns)
    turns.while_busy("steered in", other_way=True)  # ctrl+s: into the running turn
    turns.while_busy("queued after", other_way=False)
    turns.interrupt()
    assert work.cancelled()
    assert turns.take_back() == "steered in\n\nqueued after"  # for the input, in the order typed
    assert not mailbox.waiting and turns.queued == [] and turns.steered == []
    assert turns.ended("interrupted") == ""  # nothing goes by itself after esc


async def test_after_an_interrupt_the_queue_waits_for_the_user():
    turns, _, _ = controller()
    await running(turns)
    turns.while_busy("later", other_way=False)
    assert turns.ended("interrupted") == "" and turns.queued == ["later"]
    assert turns.ended("no_key") == "" and turns.queued == ["later"]


async def test_a_steered_message_reaches_the_running_turn_and_a_command_is_queued():
    turns, mailbox, drawn = controller()
    await running(turns)
    turns.while_busy("look at lib/ instead", other_way=True)
    turns.while_busy("/cost", other_way=True)  # a command is expanded only as a prompt: it waits
    assert "look at lib/ instead" in mailbox.take_notes()[0]["text"]  # what the loop hands the model next
    assert turns.steered == ["look at lib/ instead"] and turns.queued == ["/cost"]
    turns.read(1)  # SteerDelivered: the agent read it
    assert turns.steered == [] and drawn[-1] == (["/cost"], [])
    assert turns.ended("done") == "/cost"


async def test_the_steering_key_on_an_empty_input_steers_the_queue_in():
    turns, mailbox, _ = controller()
    await running(turns)
    turns.while_busy("one", other_way=False)
    turns.while_busy("two", other_way=False)
    turns.while_busy("", other_way=True)
    assert [text for _, text in mailbox.waiting] == ["one", "two"] and turns.queued == []
    assert turns.steered == ["one", "two"]
    turns.while_busy("", other_way=False)  # enter on an empty input: nothing
    assert turns.queued == [] and len(mailbox.waiting) == 2


async def test_with_steer_on_enter_enter_steers_and_the_other_key_queues():
    turns, mailbox, _ = controller(steer_on_enter=True)
    await running(turns)
    assert turns.steers(other_way=False) and not turns.steers(other_way=True)
    turns.while_busy("now", other_way=False)
    turns.while_busy("afterwards", other_way=True)
    assert [text for _, text in mailbox.waiting] == ["now"] and turns.queued == ["afterwards"]


async def test_a_steer_the_turn_ended_before_reading_is_the_next_prompt_first():
    turns, mailbox, _ = controller()
    await running(turns)
    turns.while_busy("unread", other_way=True)
    turns.while_busy("queued", other_way=False)
    assert turns.ended("done") == "unread\n\nqueued"
    assert not mailbox.waiting and turns.steered == []


def test_ctrl_c_twice_quits_and_the_window_closes():
    turns, _, _ = controller()
    assert turns.arm_quit() is False  # the first: armed, the front end says "press again"
    assert turns.arm_quit() is True  # the second: quit
    turns.disarm()  # the window closed (a timer, or a key typed)
    assert turns.arm_quit() is False


async def test_results_are_read_once_idle_and_after_an_interrupt_wait_for_the_next_child():
    turns, _, _ = controller()
    await running(turns)
    turns.child_finished()
    assert not turns.read_results_now(True)  # busy: the running turn goes first
    turns.ended("done")
    assert not turns.read_results_now(False)  # nothing waits
    assert turns.read_results_now(True) and not turns.read_results_now(True)  # once
    await running(turns)
    turns.child_finished()
    turns.ended("interrupted")
    assert not turns.read_results_now(True)  # esc: not by itself
    turns.child_finished()
    assert turns.read_results_now(True)
