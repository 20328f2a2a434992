"""@-mentions in the TUI and in line mode: '@' then part of a name offers the file (or the agent type, or the
subagent), and sending attaches it: the stand-in server's request shows the attachment."""

from __future__ import annotations

from agentcli.core.content import text_of
from agentcli.ui.tui.widgets.prompt import Completions, PromptBar, PromptInput
from tests.fakes.anthropic_server import text, tool_use
from tests.ui.test_plain import plain  # noqa: F401  (the fixture)
from tests.ui.test_tui_support import SIZE, answer, shown, until


def last_user_text(server) -> str:
    content = server.requests[-1]["messages"][-1]["content"]
    return text_of(content) if isinstance(content, list) else content


async def test_tui_at_offers_the_file_and_sending_attaches_it(server, tui):
    server.script(text("It defines index()."))
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        area, menu = app.query_one(PromptInput), app.query_one(Completions)
        area.focus()
        await pilot.press("w", "h", "a", "t", "space", "i", "s", "space", "@", "v", "i", "e", "w")
        await until(pilot, lambda: menu.showing and menu.items, "file completions")
        assert menu.items[0].label == "src/app/views.py"
        assert app.query_one(PromptBar).files is not None  # listed by a worker, not on the key's handler
        await pilot.press("tab")
        assert area.text == "what is @src/app/views.py "
        await pilot.press("enter")
        await until(pilot, lambda: len(server.requests) == 1 and not app.busy, "the answer")
        body = shown(app.conversation)  # the conversation names the attachment; the model gets the file
        assert "📎 src/app/views.py (5 lines)" in body and "def index():" not in body
    said = last_user_text(server)
    assert said.startswith("what is @src/app/views.py")
    assert (
        "The user attached src/app/views.py with @src/app/views.py (5 lines, numbered as read_file numbers them):"
        in said
        and "def index():" in said
    )


async def test_tui_at_offers_agent_types_and_subagents(server, tui):
    server.script(
        tool_use(
            "task", {"description": "Find auth", "prompt": "Find where auth is handled", "subagent_type": "explore"}
        ),
        tool_use("grep", {"pattern": "handle_auth"}),
        text("In src/app/auth.py:9."),
        text("Done."),
        text("It grepped."),
    )
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        area, menu = app.query_one(PromptInput), app.query_one(Completions)
        await answer(pilot, "find auth")
        area.focus()
        await pilot.press("@", "e", "x", "p")
        await until(pilot, lambda: menu.showing and menu.items, "agent completions")
        assert (menu.items[0].label, menu.items[0].replacement) == ("explore", "@explore ")
        area.clear()
        await pilot.press("@", "s", "a")
        await until(pilot, lambda: menu.showing and any(c.label == "sa-1" for c in menu.items), "sa-1 offered")
        assert "done" in next(c.hint for c in menu.items if c.label == "sa-1")
        await pilot.press("tab")
        for key in "what did it do":
            await pilot.press("space" if key == " " else key)
        await pilot.press("enter")
        await until(pilot, lambda: len(server.requests) == 5 and not app.busy, "the answer")
    said = last_user_text(server)
    assert said.startswith("@sa-1 what did it do") and "Receipt for sa-1" in said and "grep ×1" in said


async def test_line_mode_at_offers_the_file_and_sending_attaches_it(plain, server):  # noqa: F811
    server.script(text("It defines index()."))
    ui = plain()
    await ui.idle()
    await ui.until(lambda: ui.app.files.files, "the file list")
    buffer = ui.app.prompt.default_buffer
    ui.pipe.send_text("what is @view")
    await ui.until(lambda: buffer.complete_state and buffer.complete_state.completions, "file completions")
    assert buffer.complete_state.completions[0].text == "@src/app/views.py"
    ui.pipe.send_text("\t")
    await ui.until(lambda: buffer.text == "what is @src/app/views.py", "the completion to be taken")
    prompts = ui.app.prompts
    ui.pipe.send_text(" \r")
    await ui.until(lambda: ui.app.prompts > prompts and ui.app.at_prompt, "the next prompt")
    said = last_user_text(server)
    assert (
        "The user attached src/app/views.py with @src/app/views.py (5 lines, numbered as read_file numbers them):"
        in said
        and "def index():" in said
    )
    await ui.quit()


async def test_line_mode_offers_agent_types(plain, server):  # noqa: F811
    ui = plain()
    await ui.idle()
    buffer = ui.app.prompt.default_buffer
    ui.pipe.send_text("ask @expl")
    await ui.until(lambda: buffer.complete_state and buffer.complete_state.completions, "agent completions")
    first = buffer.complete_state.completions[0]
    assert first.text == "@explore" and "agent" in first.display_meta_text
