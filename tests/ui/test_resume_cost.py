"""What keeps resuming a long session cheap without changing what it shows: a collapsed tool call lays out its
input and output only when first expanded; clean events pass the escaping unchanged (not copied); line mode
imports the SDK with the collector off and turns it back on afterwards."""

from __future__ import annotations

import os
import subprocess
import sys

from agentcli.core.events import AssistantMessage, Event, ToolCallFinished, ToolCallStarted, UserMessage
from agentcli.ui.escapes import visible_data, visible_event
from agentcli.ui.tui.app import RESUME_WIDGETS, make_app
from agentcli.ui.tui.widgets.tool_call import ToolCallEntry
from tests.ui.test_tui_support import SIZE, drawn, plain, until


def _calls() -> list[Event]:
    return [
        UserMessage(content=[{"type": "text", "text": "look"}]),
        ToolCallStarted(id="a", name="grep", input={"pattern": "needle"}, summary="needle"),
        ToolCallFinished(id="a", name="grep", output="src/x.py:3: needle here", is_error=False, seconds=-1.0),
        ToolCallStarted(id="b", name="read_file", input={"path": "gone.py"}, summary="gone.py"),
        ToolCallFinished(id="b", name="read_file", output="no such file: gone.py", is_error=True, seconds=-1.0),
        ToolCallStarted(id="c", name="glob", input={"pattern": "**/*.md"}, summary="**/*.md"),
        AssistantMessage(content=[{"type": "text", "text": "done"}]),
    ]


async def test_a_collapsed_tool_call_builds_its_body_when_first_expanded(server, make_session):
    session, _ = make_session()
    session.restored_events = _calls()
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: len(app.conversation.query(ToolCallEntry)) == 3, "the three calls")
        grep, read, glob = app.conversation.query(ToolCallEntry)
        assert all(entry.collapsed and not entry.built for entry in (grep, read, glob))
        assert drawn(grep) == ["  ▶ grep  needle  ✓"]  # a collapsed call is its title line alone
        assert plain(grep) == "grep  needle  ✓"  # the title is there from the start

        grep.collapsed = False
        await until(pilot, lambda: grep.region.height > 1, "the expanded call's output")
        assert drawn(grep) == ["  ▼ grep  needle  ✓", "    pattern: needle", "    ▏ src/x.py:3: needle here", ""]
        read.collapsed = False
        await until(pilot, lambda: "no such file: gone.py" in "\n".join(drawn(read)), "the failed call's output")
        assert read.has_class("-error")

        glob.collapsed = False  # still running (no result was stored): it says so, then shows what came
        await until(pilot, lambda: "    ▏ running…" in drawn(glob), "the running call's body")
        glob.finish(ToolCallFinished(id="c", name="glob", output="README.md", is_error=False, seconds=0.2))
        await until(pilot, lambda: "    ▏ README.md" in drawn(glob), "the late output in the open body")
        glob.collapsed, grep.collapsed = True, True
        await pilot.pause()
        assert grep.region.height == 1 and drawn(grep) == ["  ▶ grep  needle  ✓"]  # collapsed again
        assert grep.built and "src/x.py:3: needle here" in plain(grep)  # its body is kept, not drawn


def test_clean_data_passes_the_escaping_as_the_same_object_and_dirty_data_is_copied():
    clean = {"content": [{"type": "text", "text": "plain words\n\ttabbed"}], "n": 3, "t": ("a", "b")}
    assert visible_data(clean) is clean
    event = ToolCallFinished(id="a", name="grep", output="fine", is_error=False, seconds=0.1)
    assert visible_event(event) is event

    dirty = {"content": [{"type": "text", "text": "ok"}, {"type": "text", "text": "\x1b]52;c;aGk=\x07"}]}
    shown = visible_data(dirty)
    assert shown["content"][1]["text"] == "\\x1b]52;c;aGk=\\a"
    assert shown["content"][0] is dirty["content"][0]  # the clean part is shared, not copied
    assert dirty["content"][1]["text"] == "\x1b]52;c;aGk=\x07"  # the original is left as it was
    hostile = visible_event(ToolCallFinished(id="a", name="grep", output="\x1b[2J", is_error=False, seconds=0.1))
    assert hostile.output == "\\x1b[2J"


def test_the_sdk_imports_without_the_collector_and_turns_it_back_on(repo):
    script = (
        "import gc, sys\nfrom agentcli.core.model import llm\n"
        "thread = llm.start_sdk_import()\nprint(gc.isenabled())\nthread.join()\n"
        "print(gc.isenabled(), gc.get_freeze_count() > 0, 'anthropic' in sys.modules)\n"
        "print(llm.start_sdk_import() is None)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    proc = subprocess.run([sys.executable, "-c", script], cwd=repo, env=env, capture_output=True, text=True, timeout=90)
    assert (proc.returncode, proc.stdout.split()) == (0, ["False", "True", "True", "True", "True"]), proc.stderr


def test_the_tuis_warm_up_leaves_the_sdks_objects_out_of_every_later_full_collection(repo):
    # as `agentcli` starts the TUI: the collector off until the SDK is imported; left unfrozen, its ~140,000
    # objects were scanned by each full collection, one of which took 300 ms inside a page up
    script = (
        "import gc, sys\ngc.disable()\nfrom agentcli.ui.tui.work import warm_up_import\n"
        "warm_up_import()()\nprint(gc.isenabled(), 'anthropic' in sys.modules, len(gc.get_objects()))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    proc = subprocess.run([sys.executable, "-c", script], cwd=repo, env=env, capture_output=True, text=True, timeout=90)
    enabled, imported, scanned = proc.stdout.split()
    assert (proc.returncode, enabled, imported) == (0, "True", "True"), proc.stderr
    assert int(scanned) < 5_000  # what a full collection still scans


def test_a_resumed_sessions_warm_up_frees_the_garbage_of_its_first_screens_before_freezing(repo):
    # a resumed session's first frame leaves cycles (answers drawn as text, then swapped for Markdown entries):
    # frozen with startup's objects, they were never freed (about 2 MiB of a 500-turn session's RSS)
    script = (
        "import gc, sys, weakref\ngc.disable()\nfrom agentcli.ui.tui.work import warm_up_import\n"
        "class Node: pass\nnode = Node(); node.me = node; gone = weakref.ref(node); del node\n"
        "warm_up_import(resumed=True)()\nprint(gc.isenabled(), gone() is None)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    proc = subprocess.run([sys.executable, "-c", script], cwd=repo, env=env, capture_output=True, text=True, timeout=90)
    assert (proc.returncode, proc.stdout.split()) == (0, ["True", "True"]), proc.stderr


def _exchanges(count: int) -> list[Event]:
    events: list[Event] = []
    for n in range(count):
        events.append(UserMessage(content=[{"type": "text", "text": f"question {n}"}]))
        for k in range(4):
            events += [
                ToolCallStarted(id=f"t{n}-{k}", name="grep", input={"pattern": "x"}, summary=f"x {n}-{k}"),
                ToolCallFinished(id=f"t{n}-{k}", name="grep", output="hit", is_error=False, seconds=-1.0),
            ]
        events.append(AssistantMessage(content=[{"type": "text", "text": f"answer {n}"}]))
    return events


async def test_a_resumed_session_draws_what_fills_the_screen_and_can_be_scrolled_up_to_the_rest(server, make_session):
    session, _ = make_session()
    session.restored_events = _exchanges(30)  # 180 messages and calls: far more than a screen
    app = make_app(session.settings, session.workspace.root, session=session, testing=True)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.conversation
        await until(pilot, lambda: view.max_scroll_y > 0, "a conversation taller than the view")
        drawn = len(view.children)
        assert drawn - 1 < RESUME_WIDGETS  # fewer than the cap: they already fill 30 rows (the marker aside)
        assert plain(view.children[-1]) == "answer 29"
        view.scroll_home(animate=False, immediate=True)
        await until(pilot, lambda: len(view.children) > drawn, "the earlier part drawn on scrolling to the top")
