"""/rewind in the full-screen app and in line mode."""

from __future__ import annotations

import json

from agentcli.ui.tui.screens.rewind import RewindScreen
from tests.fakes.anthropic_server import last_user_text, text, tool_use
from tests.ui.test_plain import plain  # noqa: F401  (the line-mode fixture)
from tests.ui.test_tui_support import SIZE, answer, shown, until


def edits_readme(server) -> None:
    server.when(lambda b: last_user_text(b) == "hello", text("Hi."))
    server.when(lambda b: "edit the readme" in json.dumps(b["messages"]), tool_use("read_file", {"path": "README.md"}),
                tool_use("write_file", {"path": "README.md", "content": "rewritten\n"}), text("Rewrote it."))


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
        said = said[said.index("Rewrote it."):]
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
