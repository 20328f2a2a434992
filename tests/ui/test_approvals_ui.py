"""What an approval shows, in the TUI's modal and in line mode: an edit's changed lines with their context
(never unchanged lines as removed and added), a new file's head and tail, a command whole, wrapped, below
its description; and tool-call lines that tell calls of one tool apart."""

from __future__ import annotations

from textual.geometry import Region
from textual.widgets import Static

from agentcli.ui.tui.widgets.tool_call import ToolCallEntry
from tests.fakes.anthropic_server import reply, text, tool_use, tool_use_block
from tests.ui.test_plain import plain as plain_fixture  # noqa: F401  (the line-mode harness)
from tests.ui.test_tui_support import SIZE, approval_shown, plain, send, until

LINES = "".join(f"line {n}\n" for n in range(1, 31))
EDIT = {
    "path": "lines.txt",
    "old_string": "line 14\nline 15\nline 16\n",
    "new_string": "line 14\nline fifteen\nline 16\n",
}
LONG = "echo " + " ".join(f"word{n}" for n in range(60)) + " END"
SCRIPT = {"command": f"set -e\n{LONG}\necho last-line", "description": "Print a long list of words"}
plain_ui = plain_fixture


def script_edit(server, repo) -> None:
    (repo / "lines.txt").write_text(LINES)
    server.script(tool_use("read_file", {"path": "lines.txt"}), tool_use("edit_file", EDIT), text("Edited."))


async def test_the_modal_shows_only_the_changed_lines_of_an_edit(server, tui, repo):
    script_edit(server, repo)
    app = tui(interactive=True)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "edit it")
        await until(pilot, lambda: approval_shown(app), "the approval request")
        shown = plain(app.screen.query_one("#approval-input"))
        assert shown.startswith("lines.txt\n@@ -12,7 +12,7 @@\n line 12\n line 13\n line 14\n-line 15\n+line fifteen\n")
        assert "-line 14" not in shown and "+line 14" not in shown and "line 11" not in shown
        await pilot.press("y")
        await until(pilot, lambda: not app.busy, "the end of the turn")
        assert "lines.txt  +1 −1" in plain(app.conversation.query(ToolCallEntry).last())


async def test_the_modal_shows_a_command_whole_and_wrapped_below_its_description(server, tui, repo):
    server.script(tool_use("bash", SCRIPT), text("Done."))
    app = tui(interactive=True)
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "print words")
        await until(pilot, lambda: approval_shown(app), "the approval request")
        box = app.screen.query_one("#approval-input")
        await until(pilot, lambda: box.size.width > 0, "the modal's layout")
        body = box.query_one(Static)
        drawn = [strip.text.rstrip() for strip in body.render_lines(Region(0, 0, *body.outer_size))]
        assert drawn[0].strip() == "Print a long list of words"
        assert "…" not in "".join(drawn) and any(line.strip().endswith("END") for line in drawn)
        assert " ".join(" ".join(drawn[2:-1]).split()) == LONG  # wrapped, not cut
        assert drawn[-1].strip() == "echo last-line"
        await pilot.press("y")
        await until(pilot, lambda: not app.busy, "the end of the turn")
        assert plain(app.conversation.query(ToolCallEntry).last()).startswith(
            "bash  Print a long list of words · set -e"
        )


async def test_line_mode_shows_an_edit_s_diff(plain_ui, server, repo):
    script_edit(server, repo)
    ui = plain_ui()
    await ui.idle()
    ui.pipe.send_text("edit it\r")
    await ui.until(lambda: "[y]es once" in ui.text, "the approval question")
    assert (
        "? main agent wants to run edit_file\n    lines.txt\n    @@ -12,7 +12,7 @@\n     line 12\n     line 13\n"
        "     line 14\n    -line 15\n    +line fifteen\n     line 16\n"
    ) in ui.text
    ui.pipe.send_text("y")
    await ui.idle()
    assert "● edit_file lines.txt  +1 −1 · " in ui.text
    await ui.quit()


async def test_line_mode_shows_a_new_file_s_head_and_tail(plain_ui, server, repo):
    rows = "".join(f"row {n}\n" for n in range(1, 46))
    server.script(tool_use("write_file", {"path": "rows.txt", "content": rows}), text("Wrote it."))
    ui = plain_ui()
    await ui.idle()
    ui.pipe.send_text("write rows\r")
    await ui.until(lambda: "[y]es once" in ui.text, "the approval question")
    question = ui.text[ui.text.index("? main agent") :]
    assert "    rows.txt\n    @@ -0,0 +1,45 @@\n    +row 1\n    +row 2\n" in question
    assert "    +row 20\n    … 15 more lines\n    +row 36\n" in question and "    +row 45\n" in question
    assert "lines of content" not in question
    ui.pipe.send_text("y")
    await ui.idle()
    assert "● write_file rows.txt  (45 lines) · " in ui.text
    await ui.quit()


async def test_line_mode_shows_a_command_whole_and_wrapped_below_its_description(plain_ui, server, repo):
    server.script(tool_use("bash", SCRIPT), text("Done."))
    ui = plain_ui()
    await ui.idle()
    ui.pipe.send_text("print words\r")
    await ui.until(lambda: "[y]es once" in ui.text, "the approval question")
    asked = ui.text[ui.text.index("? main agent") :].splitlines()
    question = [asked[0]] + [line for line in asked[1 : ui.text.count("\n")] if line.startswith("    ")]
    assert question[1].strip() == "Print a long list of words" and question[2].strip() == "set -e"
    assert " ".join(" ".join(question[3:-1]).split()) == LONG and len(question) > 5  # wrapped over lines
    assert question[-1].strip() == "echo last-line"
    ui.pipe.send_text("y")
    await ui.idle()
    assert "● bash Print a long list of words · set -e · " in ui.text
    await ui.quit()


async def test_glob_and_parallel_edits_say_which_is_which(plain_ui, server, repo):
    (repo / "lines.txt").write_text(LINES)
    server.script(
        tool_use("read_file", {"path": "lines.txt"}),
        reply(
            tool_use_block("glob", {"pattern": "*.py", "path": "src/app"}),
            tool_use_block(
                "edit_file", {"path": "lines.txt", "old_string": "line 3\n", "new_string": "line three\nline 3b\n"}
            ),
        ),
        text("ok"),
    )
    ui = plain_ui(permission_mode="acceptEdits")
    shown = await ui.submit("go")
    assert "● glob *.py in src/app · " in shown
    assert "● edit_file lines.txt  +2 −1 · " in shown
    await ui.quit()


async def test_a_diff_of_hostile_text_cannot_reach_the_terminal_raw(plain_ui, server, repo):
    server.script(
        tool_use("write_file", {"path": "evil.txt", "content": "clear\x1b[2J\x1b]0;pwned\x07 \x9b31m\n"}),
        text("Wrote it."),
    )
    ui = plain_ui()
    await ui.idle()
    ui.pipe.send_text("write it\r")
    await ui.until(lambda: "[y]es once" in ui.text, "the approval question")
    question = ui.text[ui.text.index("? main agent") :]
    assert "+clear" in question and not any(c in question for c in "\x1b\x07\x9b")
    ui.pipe.send_text("n")
    await ui.idle()
    await ui.quit()
