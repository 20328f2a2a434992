"""A command the OS sandbox stopped asks the user, once, naming what it needs; a yes runs it again with just
that added. Performed for real: a sandboxed command connects to a loopback server of the host, or writes
outside the workspace, and the question is answered in the TUI and in line mode."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest

from agentcli.core.events import ALLOW_ONCE
from agentcli.ui.tui.screens.approval import ApprovalScreen
from tests.core.test_sandbox import connect_script, needs_bwrap
from tests.fakes.anthropic_server import text, tool_result_text, tool_results, tool_use
from tests.ui.test_plain import plain as plain_fixture  # noqa: F401  (the line-mode harness)
from tests.ui.test_tui_support import SIZE, approval_shown, plain, send, until

plain_ui = plain_fixture
pytestmark = needs_bwrap
ALLOWED = {"allow": ["bash"]}  # the commands themselves are allowed: only the sandbox's question is left


@pytest.fixture
def listener():
    """A server on the host's loopback, which the sandbox's own network cannot reach."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    yield sock
    sock.close()


@pytest.fixture
def outside(isolated_home: Path) -> Path:
    """A folder outside the workspace that the sandbox shows read-only (under $HOME)."""
    folder = Path(os.environ["HOME"]) / "outside"
    folder.mkdir()
    return folder


def results(server) -> list[dict[str, Any]]:
    return [result for request in server.requests for result in tool_results(request)]


async def test_line_mode_asks_for_network_access_and_a_yes_runs_it_again_with_it(plain_ui, server, listener):
    server.script(tool_use("bash", {"command": connect_script(listener.getsockname()[1])}), text("Done."))
    ui = plain_ui(sandbox="on", permissions=ALLOWED)
    await ui.idle()
    ui.pipe.send_text("connect\r")
    await ui.until(lambda: "[y]es once" in ui.text, "the sandbox's question")
    question = " ".join(ui.text[ui.text.index("? main agent") :].split())
    assert "the OS sandbox stopped it, and it needs network access" in question
    assert "[s]ession and [a]lways allow sandbox: network access" in question
    with pytest.raises(BlockingIOError):  # the first run reached nothing
        listener.accept()
    ui.pipe.send_text("y")
    await ui.idle()
    [result] = results(server)
    assert not result["is_error"] and "connected" in tool_result_text(result)
    assert "with network access added, as the user allowed" in tool_result_text(result)
    listener.accept()[0].close()  # the second run reached the host's port
    assert ui.text.count("[y]es once") == 1  # asked once
    await ui.quit()


async def test_line_mode_no_leaves_it_failed_and_confined(plain_ui, server, outside):
    server.script(tool_use("bash", {"command": f"echo pwned > {outside}/f"}), text("Done."))
    ui = plain_ui(sandbox="on", permissions=ALLOWED)
    await ui.idle()
    ui.pipe.send_text("write it\r")
    await ui.until(lambda: "[y]es once" in ui.text, "the sandbox's question")
    assert f"it needs write access to {outside}/" in " ".join(ui.text.split())  # wrapped at the width
    ui.pipe.send_text("n")
    await ui.idle()
    [result] = results(server)
    assert result["is_error"] and "the user declined to allow it" in tool_result_text(result)
    assert not (outside / "f").exists()
    await ui.quit()


async def test_the_tui_asks_for_a_write_outside_and_for_the_session_keeps_it(server, tui, outside):
    server.script(
        tool_use("bash", {"command": f"echo one > {outside}/f"}),
        tool_use("bash", {"command": f"echo two > {outside}/g"}),
        text("Done."),
    )
    app = tui(interactive=True, sandbox="on", permissions=ALLOWED)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "write outside")
        await until(pilot, lambda: approval_shown(app), "the sandbox's question")
        await until(pilot, lambda: getattr(app.focused, "id", None) == ALLOW_ONCE, "the modal mounted")
        reason = plain(app.screen.query_one("#approval-reason"))
        assert f"it needs write access to {outside}/" in reason and "nothing else" in reason
        assert not (outside / "f").exists()  # the first run wrote nothing
        await pilot.press("s")
        await until(pilot, lambda: not app.busy, "the end of the turn")
        assert not isinstance(app.screen, ApprovalScreen)  # the second call was not asked about
    assert (outside / "f").read_text() == "one\n" and (outside / "g").read_text() == "two\n"
    first, second = results(server)
    assert not first["is_error"] and not second["is_error"]
    assert "as the user allowed" in tool_result_text(first) and "as the user allowed" not in tool_result_text(second)


async def test_bypass_permissions_asks_nothing_and_the_sandbox_holds(plain_ui, server, listener):
    """A mode lifts questions, not the sandbox: nothing is asked, and the result says how to allow it."""
    server.script(tool_use("bash", {"command": connect_script(listener.getsockname()[1])}), text("Done."))
    ui = plain_ui(sandbox="on", permission_mode="bypassPermissions")
    await ui.submit("connect")
    [result] = results(server)
    said = tool_result_text(result)
    assert result["is_error"] and "bypassPermissions lifts questions, not the sandbox" in said
    assert "sandbox_network = true" in said and "[y]es once" not in ui.text
    with pytest.raises(BlockingIOError):
        listener.accept()
    await ui.quit()
