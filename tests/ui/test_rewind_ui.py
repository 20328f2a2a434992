"""/rewind in the full-screen app and in line mode."""

from __future__ import annotations

import json

from agentcli.ui.tui.screens.rewind import RewindScreen
from tests.fakes.anthropic_server import last_user_text, text, tool_use
from tests.ui.test_plain import plain  # noqa: F401  (the line-mode fixture)
from tests.ui.test_tui_support import SIZE, answer, shown, until


def edits_readme(server) -> None:
    server.when(lambda b: last_user_text(b) == "hello", text("Hi."))
    server.when(
        lambda b: "edit the readme" in json.dumps(b["messages"]),
        tool_use("read_file", {"path": "README.md"}),
        tool_use("write_file", {"path": "README.md", "content": "rewritten\n"}),
        text("Rewrote it."),
    )


async def test_esc_esc_on_an_empty_input_opens_rewind_and_both_restores_files_and_conversation(server, tui, repo):
    edits_readme(server)
    original = (repo / "README.md").read_text()
    app = tui(permission_mode="acceptEdits")
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "hello")
        await answer(pilot, "edit the readme")
        assert (repo / "README.md").read_text() == "rewritten\n"
        await pilot.press("escape", "escape")
        await until(pilot, lambda: isinstance(app.screen, RewindScreen), "the rewind screen")
        await pilot.press("b")  # the newest prompt is highlighted first: "edit the readme"
        await until(pilot, lambda: not isinstance(app.screen, RewindScreen), "the screen to close")
        await until(pilot, lambda: (repo / "README.md").read_text() == original, "the file restored")
        await until(pilot, lambda: app.prompt.text == "edit the readme", "the prompt back in the input")
        assert "edit the readme" not in str(app.session.main.messages)
        await until(pilot, lambda: "back to just before prompt 2" in shown(app.conversation), "the rewind line")
        assert "hello" in str(app.session.main.messages)


async def test_rewind_says_each_thing_it_did_once(server, tui, repo):
    edits_readme(server)
    app = tui(permission_mode="acceptEdits")
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, "hello")
        await answer(pilot, "edit the readme")
        app.prompt.load_text("/rewind 2")
        await pilot.press("enter")  # the input then holds the prompt that came back, not ""
        await until(pilot, lambda: "back to just before prompt 2" in shown(app.conversation), "the rewind line")
        await pilot.pause()
        said = shown(app.conversation)
        said = said[said.index("Rewrote it.") :]
        assert said.count("README.md") == 1 and said.count("prompt 2") == 2, said  # the files, the conversation


async def test_line_mode_rewind_lists_prompts_and_restores_files(plain, server, repo):  # noqa: F811
    edits_readme(server)
    original = (repo / "README.md").read_text()
    ui = plain(permission_mode="acceptEdits")
    await ui.submit("hello")
    await ui.submit("edit the readme")
    listing = await ui.submit("/rewind")
    assert "  1" in listing and "hello" in listing and "changed: README.md" in listing
    assert "Give the number" in await ui.submit("/rewind soon")
    (repo / "README.md").write_text("my own words\n")
    said = await ui.submit("/rewind 2 files")
    assert "Left alone, changed by hand" in said and "/rewind 2 files overwrite" in said
    assert (repo / "README.md").read_text() == "my own words\n"
    said = await ui.submit("/rewind 2 files overwrite")
    assert said.count("README.md") == 1 and "Restored 1 file to before prompt 2: README.md" in said  # said once
    assert (repo / "README.md").read_text() == original
    assert "edit the readme" in str(ui.app.session.main.messages)  # files only


async def test_a_prompt_with_an_attachment_is_shown_and_given_back_as_typed(server, tui, repo):
    """An @-mention's file goes to the model, never into what shows or restores the prompt: the rewind row,
    the input after `c`, sessions list and `sessions show`."""
    from agentcli.core.storage.store import list_sessions, read_records
    from agentcli.sessions_cli import replay
    from agentcli.ui.transcript_text import main_lines

    server.script(text("It defines index()."), text("Again."))
    typed = "look at @src/app/views.py"
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        await answer(pilot, typed)
        assert "def index():" in json.dumps(server.requests[0]["messages"])  # the model got the file
        await pilot.press("escape", "escape")
        await until(pilot, lambda: isinstance(app.screen, RewindScreen), "the rewind screen")
        [row] = [str(option.prompt) for option in app.screen.query_one("#rewind-prompts").options]
        assert row.strip() == f"1  {typed}"
        await pilot.press("c")
        await until(pilot, lambda: not isinstance(app.screen, RewindScreen), "the screen to close")
        await until(pilot, lambda: app.prompt.text == typed, "the prompt back in the input, as typed")
        await answer(pilot, app.prompt.text)  # sent again as it came back
    [sent] = [m for m in server.requests[-1]["messages"] if m["role"] == "user"]
    assert json.dumps(sent).count("def index():") == 1  # the file once, not twice
    [info] = list_sessions(repo)
    assert info.first_prompt == typed
    shown_lines = list(main_lines(replay(read_records(info.path)[0])[0], live=False))
    assert f"> {typed}" in shown_lines and "> 📎 src/app/views.py (5 lines)" in shown_lines
    assert not [line for line in shown_lines if "def index():" in line or "The user attached" in line]
