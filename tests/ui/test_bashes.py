"""/bashes in both front ends, and SIGTERM in line mode: background shells are listed, stopped, never left."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from pathlib import Path

from agentcli.ui.tui.widgets.entries import NoticeEntry
from tests import waiting
from tests.fakes.anthropic_server import text, tool_use
from tests.ui.test_plain import plain  # noqa: F401  (the line-mode harness fixture)
from tests.ui.test_tui_support import SIZE, answer, send, tui, until  # noqa: F401
from tests.ui.test_tui_support import plain as shown_text


def running(argv: list[str]) -> bool:
    wanted = "\0".join(argv).encode() + b"\0"
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if Path(f"/proc/{name}/cmdline").read_bytes() == wanted:
                    return True
            except OSError:
                pass
    return False


async def test_line_mode_bashes_lists_and_kills(plain, server):  # noqa: F811
    server.script(tool_use("bash", {"command": "sleep 7801", "run_in_background": True}), text("Started it."))
    ui = plain(permission_mode="bypassPermissions")
    assert "No background shells in this session" in await ui.submit("/bashes")
    await ui.submit("start the server")
    await waiting.until(lambda: running(["sleep", "7801"]), "the background sleep starting")
    listing = await ui.submit("/bashes")
    assert "bash-1" in listing and "running" in listing and "sleep 7801" in listing
    assert "Stopped bash-1" in await ui.submit("/bashes kill bash-1")
    await waiting.until(lambda: not running(["sleep", "7801"]), "the background sleep ending")
    assert "killed" in await ui.submit("/bashes")
    assert "No background shell 'bash-7'" in await ui.submit("/bashes kill bash-7")


async def test_line_mode_sigterm_during_bash_stops_it_and_exits_143(plain, server):  # noqa: F811
    server.script(tool_use("bash", {"command": "sleep 7802"}), text("never reached"))
    ui = plain(permission_mode="bypassPermissions")
    await ui.idle()
    ui.pipe.send_text("wait a while\r")
    await waiting.until(lambda: running(["sleep", "7802"]), "bash starting sleep 7802")
    assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL, "line mode does not handle SIGTERM"
    # To the main thread, where the loop's handler is: sent to the process, any thread of this pytest worker could
    # take it, in the middle of whatever it runs (once, hypothesis's gc callback: an "unraisable exception").
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGTERM)  # the main thread has started: not 0
    assert await asyncio.wait_for(ui.task, 30) == 143
    assert not running(["sleep", "7802"])
    *results, note = ui.app.session.main.messages[-1]["content"]
    last = results[-1]
    assert last["type"] == "tool_result" and last["is_error"] and last["content"].startswith("Interrupted")
    assert note["type"] == "text" and "The user interrupted your turn here" in note["text"]  # agentcli's note


async def test_tui_bashes_lists_and_kills(server, tui):  # noqa: F811
    server.script(tool_use("bash", {"command": "sleep 7803", "run_in_background": True}), text("Started it."))
    app = tui(permission_mode="bypassPermissions")
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "start the server")
        await send(pilot, "/bashes")
        await until(
            pilot, lambda: "bash-1" in shown_text(list(app.conversation.query(NoticeEntry))[-1]), "the /bashes list"
        )
        assert "sleep 7803" in shown_text(list(app.conversation.query(NoticeEntry))[-1])
        await send(pilot, "/bashes kill bash-1")
        await until(
            pilot,
            lambda: "Stopped bash-1" in shown_text(list(app.conversation.query(NoticeEntry))[-1]),
            "bash-1 being stopped",
        )
    assert not running(["sleep", "7803"])
