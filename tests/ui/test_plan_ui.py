"""The plan (todo_write) in every front end: the TUI's block above the prompt and the panel's entry of a
child, line mode's short list, and stream-json's tool call."""

from __future__ import annotations

import json

from agentcli.ui.tui.widgets.plan import PlanBlock
from agentcli.ui.tui.widgets.side_panel import SubagentEntry
from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import reply, text, tool_use, tool_use_block
from tests.ui.test_plain import plain  # noqa: F401  (the fixture)
from tests.ui.test_tui_support import SIZE, answer, is_child, is_main, until
from tests.ui.test_tui_support import plain as shown_text

PLAN = [
    {"content": "Read the auth code", "status": "completed", "activeForm": "Reading the auth code"},
    {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
    {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
]


async def test_the_tui_shows_the_main_plan_above_the_prompt_and_a_childs_in_its_entry(server, tui):
    server.when(
        is_main,
        tool_use("todo_write", {"todos": PLAN}),
        reply("Delegating.", tool_use_block("task", {"description": "Check tests", "prompt": "Check."})),
        text("All done."),
    )
    server.when(
        is_child,
        tool_use(
            "todo_write",
            {"todos": [{"content": "Find the tests", "status": "in_progress", "activeForm": "Finding the tests"}]},
        ),
        text("Tests are in tests/."),
    )
    app = tui()
    async with app.run_test(size=SIZE) as pilot:
        block = app.query_one(PlanBlock)
        assert not block.display or block.has_class("-empty")  # no plan yet: no block
        assert not block.children  # nor its title and steps, composed with the first plan
        await answer(pilot, "fix auth and test it")
        assert not block.has_class("-empty")
        drawn = shown_text(block)
        assert "Plan · 1/3 done" in drawn
        assert "☑ Read the auth code" in drawn and "▶ Fixing the bug" in drawn and "☐ Run the tests" in drawn
        assert block.region.y < app.prompt.region.y  # above the prompt
        entry = app.query_one(SubagentEntry)
        await until(pilot, lambda: "Finding the tests" in shown_text(entry), "the child's plan in its entry")
        assert "Plan · 0/1 done" in shown_text(entry)
        await answer(pilot, "/clear")
        assert block.has_class("-empty")  # a fresh conversation has no plan


async def test_line_mode_prints_the_plan_as_a_short_list_when_it_changes(plain, server):  # noqa: F811
    later = [dict(item, status="completed") for item in PLAN]
    server.script(tool_use("todo_write", {"todos": PLAN}), tool_use("todo_write", {"todos": later}), text("Done."))
    ui = plain()
    shown = await ui.submit("fix auth")
    assert "Plan · 1/3 done\n  ☑ Read the auth code\n  ▶ Fixing the bug\n  ☐ Run the tests" in shown
    assert "Plan · 3/3 done" in shown and shown.index("Plan · 1/3") < shown.index("Plan · 3/3")
    await ui.quit()


def test_stream_json_carries_the_plan_as_the_tool_call(server, api_env, repo):
    server.script(tool_use("todo_write", {"todos": PLAN}), text("Done."))
    proc = agentcli("-p", "fix auth", "--output-format", "stream-json", "--verbose", cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    [call] = [
        b
        for line in lines
        if line["type"] == "assistant"
        for b in line["message"]["content"]
        if b["type"] == "tool_use"
    ]
    assert call["name"] == "todo_write" and call["input"] == {"todos": PLAN}  # TodoWrite's input, as sent
    [result] = [
        b for line in lines if line["type"] == "user" for b in line["message"]["content"] if b["type"] == "tool_result"
    ]
    assert result["tool_use_id"] == call["id"] and "3 items" in json.dumps(result)


async def test_line_mode_prints_a_childs_plan_under_its_id(plain, server):  # noqa: F811
    server.when(is_main, tool_use("task", {"description": "Check tests", "prompt": "Check."}), text("Done."))
    server.when(
        is_child,
        tool_use(
            "todo_write",
            {"todos": [{"content": "Find the tests", "status": "in_progress", "activeForm": "Finding the tests"}]},
        ),
        text("Found."),
    )
    ui = plain()
    shown = await ui.submit("check the tests")
    assert "  sa-1 Plan · 0/1 done\n    ▶ Finding the tests" in shown
    await ui.quit()
