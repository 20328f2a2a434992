"""A tool call is one widget that draws its own lines: its title, and once expanded its input, and its output
beside a bar. What it draws, and how it opens and closes by mouse and keyboard, in a real app under Pilot."""

from __future__ import annotations

from textual.geometry import Region

from agentcli.core.events import AssistantMessage, Event, ToolCallFinished, ToolCallStarted, UserMessage
from agentcli.ui.tui.app import make_app
from agentcli.ui.tui.widgets.prompt import PromptInput
from agentcli.ui.tui.widgets.tool_call import ToolCallEntry
from tests.ui.test_tui_support import SIZE, drawn, until

LONG = " ".join(f"word{i}" for i in range(40))  # wider than the screen: wrapped, its bar on every row


def _events() -> list[Event]:
    return [
        UserMessage(content=[{"type": "text", "text": "look"}]),
        ToolCallStarted(id="a", name="grep", input={"pattern": "needle"}, summary="needle"),
        ToolCallFinished(id="a", name="grep", output=f"src/x.py:3: needle here\n{LONG}", is_error=False, seconds=-1.0),
        ToolCallStarted(id="b", name="read_file", input={"path": "gone.py"}, summary="gone.py"),
        ToolCallFinished(id="b", name="read_file", output="no such file: gone.py", is_error=True, seconds=-1.0),
        AssistantMessage(content=[{"type": "text", "text": "done"}]),
    ]


def _app(make_session):
    session, _ = make_session()
    session.restored_events = _events()
    return make_app(session.settings, session.workspace.root, session=session, testing=True)


async def _two_calls(pilot, app):
    """The replayed session's two calls (a grep and a read), once both are mounted."""
    await until(pilot, lambda: len(app.conversation.query(ToolCallEntry)) == 2, "the two calls")
    return tuple(app.conversation.query(ToolCallEntry))


async def test_a_click_on_its_title_opens_a_call_a_click_below_keeps_it_open_and_enter_closes_it(server, make_session):
    app = _app(make_session)
    async with app.run_test(size=SIZE) as pilot:
        grep, _ = await _two_calls(pilot, app)
        await until(pilot, lambda: grep.region.height == 1, "its line laid out")
        assert drawn(grep) == ["  ▶ grep  needle  ✓"]

        await pilot.click(grep, offset=(6, 0))  # on its title
        await until(pilot, lambda: not grep.collapsed and grep.region.height > 1, "the call opened")
        lines = drawn(grep)
        assert lines[:3] == ["  ▼ grep  needle  ✓", "    pattern: needle", "    ▏ src/x.py:3: needle here"]
        wrapped = lines[3:-1]
        assert len(wrapped) > 1 and all(line.startswith("    ▏ ") for line in wrapped)
        assert " ".join(line.removeprefix("    ▏ ") for line in wrapped) == LONG
        assert lines[-1] == "" and grep.region.height == len(lines)
        assert grep.has_focus  # clicked: the focus is on it, its title highlighted

        await pilot.click(grep, offset=(8, 2))  # on its output: nothing toggles
        await pilot.pause()
        assert not grep.collapsed

        await pilot.press("enter")  # its own key, the focus moved there on purpose
        await until(pilot, lambda: grep.collapsed and grep.region.height == 1, "the call closed")
        assert drawn(grep) == ["  ▶ grep  needle  ✓"]
        await pilot.press("enter")
        await until(pilot, lambda: not grep.collapsed and grep.region.height == len(lines), "open again")
        assert app.query_one(PromptInput).text == ""  # the enters were the call's, not a message sent


async def test_the_title_is_highlighted_under_the_mouse_and_a_failed_calls_output_in_another_colour(
    server, make_session
):
    app = _app(make_session)
    async with app.run_test(size=SIZE) as pilot:
        grep, read = await _two_calls(pilot, app)
        grep.collapsed = read.collapsed = False
        await until(pilot, lambda: grep.region.height > 1 and read.region.height > 1, "both open")

        def title_background() -> object:
            title = grep.render_lines(Region(0, 0, grep.outer_size.width, 1))[0]  # as the screen draws it
            return list(title)[-1].style.bgcolor

        plain = title_background()
        await pilot.hover(grep, offset=(6, 2))  # over its output
        await pilot.pause()
        assert not grep.has_class("-title-hover") and title_background() == plain
        await pilot.hover(grep, offset=(6, 0))  # over its title
        await until(pilot, lambda: grep.has_class("-title-hover"), "the hover")
        assert title_background() != plain

        def output_colour(call: ToolCallEntry) -> object:
            segment = next(s for s in call.render_line(2) if s.text.strip() not in ("", "▏"))
            return segment.style.color  # type: ignore[union-attr]

        assert "no such file: gone.py" in drawn(read)[2] and read.has_class("-error")
        assert output_colour(read) != output_colour(grep)


async def test_a_drag_over_its_output_selects_the_output_text(server, make_session):
    app = _app(make_session)
    async with app.run_test(size=SIZE) as pilot:
        grep, _ = await _two_calls(pilot, app)
        grep.collapsed = False
        await until(pilot, lambda: grep.region.height > 1, "the call open")
        await pilot.mouse_down(grep, offset=(6, 2))  # on "src/x.py…", after its indent and bar
        await pilot.hover(grep, offset=(14, 2))  # to its ":" (the cell under the pointer is selected)
        await pilot.mouse_up(grep, offset=(14, 2))
        await until(pilot, lambda: app.screen.get_selected_text(), "the selection")
        assert app.screen.get_selected_text() == "src/x.py:"  # the text alone, not the indent or the bar
