"""The side panel at 80x24: each entry shows its id and the part of its description that tells it from
the others, token counts carry a unit, the header is whole; and /clear takes finished entries out of it
while their transcripts stay reachable."""

from __future__ import annotations

import threading

from textual.content import Content

from agentcli.ui.tui.screens.transcript import TranscriptScreen
from agentcli.ui.tui.widgets.entries import ReportEntry
from agentcli.ui.tui.widgets.side_panel import SubagentEntry, fit
from tests.fakes.anthropic_server import first_user_text, reply, text, tool_use_block
from tests.narrow import of
from tests.ui.test_tui_support import USAGE, answer, is_main, plain, resize, send, until

ERRANDS = ("Locate cache_reads in the loop", "Locate cache_writes in the store", "Locate cache_hits in the tests")


def delegate_three(server, gate=None):
    server.when(
        is_main,
        reply(
            "Three at once.",
            *[tool_use_block("task", {"description": d, "prompt": f"E{n}"}) for n, d in enumerate(ERRANDS, 1)],
            usage=USAGE,
        ),
        text("All found.", usage=USAGE),
    )
    for n in (1, 2, 3):
        server.when(
            lambda b, n=n: first_user_text(b) == f"E{n}",
            text(f"Found {n}.", usage=USAGE, **({"gate": gate, "gate_timeout": 120} if gate else {})),
        )


def title(app, agent_id: str) -> str:
    return app.query_one(f"#entry-{agent_id}", SubagentEntry).title.plain


async def test_three_alike_errands_read_apart_at_80_by_24(server, tui):
    gate = threading.Event()
    delegate_three(server, gate)
    app = tui()
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await send(pilot, "Find the cache counters")
            await until(
                pilot,
                lambda: len(app.panel.entries) == 3 and all(s.turn == 1 for s in app.subagents.values()),
                "three children",
            )
            await pilot.pause()
            width = app.panel.entries["sa-1"].size.width - 4  # the title's padding and its ▶
            titles = {agent_id: title(app, agent_id) for agent_id in ("sa-1", "sa-2", "sa-3")}
            for agent_id, shown in titles.items():
                first, numbers = shown.split("\n")
                assert first.split()[1] == agent_id, shown  # the id, always
                assert numbers.strip().startswith("1/30 · ") and numbers.endswith(" tok"), shown
                assert max(len(first), len(numbers)) <= width, shown  # nothing cut by the panel's edge
            # what tells them apart: the word after "Locate "
            for agent_id, word in (("sa-1", "cache_reads"), ("sa-2", "cache_writes"), ("sa-3", "cache_hits")):
                assert word in titles[agent_id], titles
            hint = app.panel.query_one("#panel-hint")  # the header: whole, wrapped between its phrases
            lines = hint.render().plain.splitlines()
            assert lines == ["enter open · space expand", "x cancel"] and hint.size.height == 2
            assert all(len(line) <= hint.content_size.width for line in lines)
            await resize(pilot, 160, 48)  # wide: one line each, the description whole
            await until(pilot, lambda: "\n" not in title(app, "sa-2"), "one line per entry")
            assert title(app, "sa-2").startswith("● sa-2 ") and ERRANDS[1] in title(app, "sa-2")
            gate.set()
            await until(pilot, lambda: not app.busy, "the turn to end")
    finally:  # a failed check above leaves the children waiting
        gate.set()


def test_a_cut_description_keeps_what_follows_the_shared_start():
    shared = "Locate cache_"
    assert fit("Locate cache_writes in the store", 20, shared) == "…cache_writes in th…"
    assert fit("Locate cache_writes in the store", 40, shared) == "Locate cache_writes in the store"  # it fits
    assert fit("Find the authentication handler", 12, "") == "Find the au…"
    long_word = "Check supercalifragilistic_alpha"
    assert fit(long_word, 10, "Check supercalifragilistic_") == "…alpha"  # mid-word, when the word is long


async def test_clear_takes_finished_entries_out_of_the_panel_and_their_transcripts_stay(server, tui):
    delegate_three(server)
    app = tui()
    async with app.run_test(size=(80, 24)) as pilot:
        await answer(pilot, "Find the cache counters")
        assert len(app.panel.entries) == 3 and app.panel.is_open
        await send(pilot, "/clear")
        await until(pilot, lambda: not app.panel.entries, "the finished entries to go")
        assert not app.panel.query(SubagentEntry) and not app.panel.is_open and app.prompt.has_focus
        await send(pilot, "/agents")
        listed = plain(list(app.conversation.query(ReportEntry))[-1])
        assert all(agent_id in listed for agent_id in ("sa-1", "sa-2", "sa-3")), listed
        await pilot.press("ctrl+o")
        await until(pilot, lambda: isinstance(app.screen, TranscriptScreen), "the latest transcript")
        assert app.screen.agent_id == "sa-3"


async def test_a_stalled_reviewer_at_80_columns_keeps_its_time_and_tokens():
    """At 80 columns the panel is 29 wide: "no progress for 1 min 08 s · 1.2k tok" was one line cut at the edge,
    losing the tokens and half the time; it wraps (the duration whole) and loses nothing."""
    from textual.app import App

    from agentcli.ui.view import Subagent

    state = Subagent(
        id="sa-12",
        type="review-security",
        description="security review",
        max_turns=20,
        turn=1,
        tokens=1234,
        started=0.0,
        last_progress=0.0,
    )

    class Panel(App[None]):
        CSS = "SubagentEntry { width: 29; }"

        def compose(self):
            yield SubagentEntry(state, now=lambda: 68.0, stall_after=60.0)

    app = Panel()
    async with app.run_test(size=(80, 24)) as pilot:
        entry = app.query_one(SubagentEntry)
        await entry.show(state, 68.0)
        await pilot.pause()
        title = of(Content, entry.title).plain
        lines = title.split("\n")
        assert "1 min 08 s" in title and "1.2k tok" in title, lines
        assert lines[-1].strip() == "w wraps it up" and lines[0].startswith("● sa-12 security review")
        assert max(len(line) for line in lines) <= entry.size.width - 4, lines  # nothing cut by the edge
