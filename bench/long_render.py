"""A 500-turn session with tool calls in the TUI: time to open it by resume, memory, scrolling.

Each opening runs in a process of its own (``bench.session_view``, headless ``run_test`` at
120×40), so its RSS is its own: agentcli resuming the long session, agentcli on a new session (the
peer for opening and memory), and a bare Textual VerticalScroll of plain Static widgets with the
same heights as the resumed conversation's (the peer for scrolling).
"""

from __future__ import annotations

import compileall
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .common import REPO_ROOT
from .long_session import LongSession, build
from .stats import Section, paced

BUDGET = 240.0  # seconds for the repeated runs; at least three happen whatever it takes
_SAME_WORK = (
    "the wall time of the jump to the top was bimodal in whole runs (7 ms in some, 11-25 in others): per jump, its "
    "frame did the same work in every run (Textual's scroll-only reflow, 37 widgets' cached lines, about 31,000 Python "
    "calls, 9 young collections of 0.5 ms in all, no drawing ahead, load or tend pending, the same page faults), and "
    "its CPU time was 6.5-8 ms in 19 of 21 processes; the slow runs were the machine (the wall time waits while "
    "another process runs, and a busy host stretches even the CPU time of the same calls: 12 ms twice, with the bare "
    "view's 4.4 ms at 6.8 once). Under load the jump back to the end can land in the rest after the jump to the top "
    "(drawing ahead, the next part drawn above, drawing ahead again: about 60 ms of CPU that a quarter second no "
    "longer covers at load 6-9), and then renders about 110 widgets' lines, 20 ms of CPU instead of 7"
)


def _view(mode: str, session: LongSession) -> dict[str, Any]:
    argv = [sys.executable, "-m", "bench.session_view", mode, str(session.root)]
    if mode == "resume":
        argv.append(session.session_id)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=session.root, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"bench.session_view {mode} failed: {proc.stderr.strip()[-500:]}")
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    data["open_ms"] = (data["drawn"] - started) * 1000
    screen = data.pop("screen", None)
    if screen is not None and session.last_marker not in screen:
        raise RuntimeError("the resumed session's last answer is not on the first screen")
    return data


def run(work: Path, runs: int = 5) -> Section:
    section = Section("500-turn session")
    # As installed (pip compiles bytecode), whatever PYTHONDONTWRITEBYTECODE says, as the Startup rows do: else
    # each run compiled the engine's sources, which a resumed session imports and a new one's first frame does not
    compileall.compile_dir(REPO_ROOT / "agentcli", quiet=1)
    session = build(work / "long-session-ws")
    got: dict[str, list[dict[str, Any]]] = {"resume": [], "fresh": [], "bare": []}
    for _ in paced(runs, BUDGET):
        for mode in got:  # resume first: it writes the heights the bare peer copies
            got[mode].append(_view(mode, session))

    def col(mode: str, key: str) -> list[float]:
        return [r[key] for r in got[mode]]

    children, rows = got["resume"][0]["children"], got["resume"][0]["rows"]
    section.compare(
        "open by --resume, launch to drawn",
        col("resume", "open_ms"),
        "new session",
        col("fresh", "open_ms"),
        digits=0,
        note="target ≤ 1.2×: met on a quiet machine (1.10× and 1.18× in two runs), not on a loaded one (1.28×, "
        "1.14–2.29). Done: the latest part is drawn from the file's last records before the engine opens the "
        "session (ui/tui/preview.py; kept once it is open if the session's events end with the same ones, "
        "drawn afresh otherwise), the first frame holds what likely fills the screen and the rest of the "
        "screenful comes right after it; the first frame draws each answer it can as one widget of text laid "
        "out and styled as its Markdown entry (ui/tui/widgets/early_answer.py: ## headings, paragraphs, one "
        "level of - items, fenced code, inline code, **bold**; anything else is Markdown at once), swapped "
        "for that entry right after the frame, so markdown-it, Textual's Markdown, the first parse and a "
        "widget per block wait until then (a test compares the settled screens with and without it); the "
        "preview's marker is mounted with its widgets, after they are built, so the screen no longer lays out "
        "and draws a frame without the conversation first (about 30 ms); code blocks are coloured after the "
        "frame that first paints them, the bytecode is compiled as installed; earlier: each record type's "
        "checks compiled once, a collapsed tool call builds its body when expanded, a whole answer composes "
        "its Markdown blocks with one shared parser. Whole-process CPU to the drawn frame: about 0.30 s "
        "against 0.26 for a new session (it was 0.40 against 0.27); what is left is mounting and styling the "
        f"tool calls and the question and the taller layout ({children - 1} items drawn in all)",
    )
    section.compare(
        "RSS once open",
        col("resume", "rss_mb"),
        "new session",
        col("fresh", "rss_mb"),
        unit="MiB",
        digits=0,
        note="target ≤ 1.15×; both read once the session is open and the SDK imported, before the scrolls "
        "below (read after them, it counted what paging to the top draws: 240 MiB, 2.41×, once paging up drew "
        "the whole history a screenful at a time); what moved it from 1.15-1.17× (115.7 MiB in paired runs): a "
        "resumed session's warm-up runs one full collection before the SDK import and the freeze, which had kept "
        "for good the cyclic garbage of its first screens (the first frame's text answers swapped for Markdown "
        "entries, Textual's node per component style each time a widget is styled: -2.7 MiB; "
        "ui/tui/work.py), and the replayed events share the history's tool output strings and intern their short "
        "fields, which each JSON line had parsed into copies of their own (-0.4 MiB; core/engine/history.py); "
        "drawing ahead (ahead.py) holds about 0.35 MiB of line caches; where the "
        "difference went after the scrolls (tracemalloc by file, 98 against 74 MiB traced, on branch speed): Textual's "
        "own objects for the resumed conversation's widgets and their blocks (message pumps, DOM "
        "nodes, strips and caches, the compositor's map: about 12 MiB), the 500 turns' history as "
        "parsed from the file (about 2.7 MiB, what the next turn sends), and the modules only a "
        "drawn answer imports (markdown-it, linkify, the Markdown widgets)",
    )
    steps = len(got["resume"][0]["scroll_ms"])
    moved = (
        "what moved it (6 December, on a machine where drawing the next part above and the rest after it, about "
        "200 ms of main-thread CPU, no longer fitted between two pages): the app's screens lay out once where "
        "Textual laid out twice (ui/tui/screens/layout.py): a whole layout hands out the widgets' virtual sizes "
        "without each new one asking for another whole layout, and keeps the map of every widget it built rather "
        "than building it again for the first region asked (a probe of this section's moves, 5 alternating runs: "
        "whole layouts' CPU 614-848 ms to 378-632, maps rebuilt 39 to 11-14, slowest page 32-172 ms to 40-68); "
        "earlier: while the view rests, the screen above it and the first screen of what is drawn are rendered "
        "ahead into each widget's line cache (ui/tui/widgets/ahead.py), so a page up or a jump to the top composites "
        "cached lines rather than rendering the entries' Markdown blocks and tool-call lines in its frame; "
        "entries more than five screens from the view are hidden behind one blank gap of their rows per "
        "screenful (ui/tui/widgets/offscreen.py), shown again before the frame that scrolls near them, so a page lays "
        "out and composites about what a bare view of those screens would; once the view has reached the top of what "
        "is drawn, the next part is drawn ahead while the view rests within a screen of it, so a page up "
        "no longer waits for a load (ui/tui/widgets/history.py); and what a load drew is frozen for the collector, "
        "whose full passes over the drawn history took 160-180 ms in a page's frame; earlier: reaching the top draws "
        "about a screenful above it in the layout that keeps the view in place"
    )
    jumps = (
        "what moved the jumps (branch scroll3, counted in Python calls in the move's frame, the machine too "
        "busy to time them): once the view rests, what shows is laid out as a scroll lays it out "
        "(History._tend), so a move repaints what moved rather than the whole screen with the footer's keys "
        "and the prompt (top: 19,500 calls before, 18,250 after; the bare view 9,700), and finds each "
        "widget's place in that layout: after a whole layout (a load, hiding, rendering ahead off screen) a "
        "jump back to the end first built Textual's map of every drawn widget (end: 19,700 calls before when "
        "it did, in 3 of 5 runs, 17,100 otherwise; 15,800 after, in 4 of 5 runs; the bare view 8,700), for "
        "the view's height (now from its latest layout, offscreen.view_rows) or for the scrollbar's position. "
        "Then the widgets on screen (about 37 in the conversation against the bare view's 10 Statics: a "
        "Markdown list item is four), each a render of its cached lines, a cut at its edges on each of its "
        "lines and a place in the layout: the boxes among them that only hold what shows (the conversation, "
        "an answer, a list and its rows and columns, a code block around its code, a gap) are Widget.BLANK, a "
        "blank strip each (branch blank: CPU of the jump back to the end 7.0 to 5.1 ms, to the top 7.2 to 6.2, "
        "paired at load 1); what is left is the cuts and places of those widgets; and (branch jump4) the rest after a move is tended "
        "only once the view has rested since its latest scroll, so under load the drawing ahead and the layout "
        "after a jump to the top, whose timer had fired as the jump back to the end came, no longer run in that "
        "jump's frame (main's end jump at 30.9 ms of CPU in 1 of 8 paired runs at load 4, 18-22 ms at load 6-9)"
    )
    section.compare(
        "scroll: jump to the top",
        col("resume", "top_ms"),
        "bare VerticalScroll",
        col("bare", "top_ms"),
        digits=1,
        note=f"{jumps}; {moved}",
    )
    section.compare(
        "scroll: jump back to the end",
        col("resume", "bottom_ms"),
        "bare VerticalScroll",
        col("bare", "bottom_ms"),
        digits=1,
        note=jumps,
    )
    for move, key in (("the jump to the top", "top_cpu_ms"), ("the jump back to the end", "bottom_cpu_ms")):
        section.compare(
            f"… {move}, CPU",
            col("resume", key),
            "bare VerticalScroll",
            col("bare", key),
            digits=1,
            note="the main thread's CPU time over the same span: the work of the move's frame, which other work on a "
            "shared machine does not stretch, unlike the wall time above; " + _SAME_WORK,
        )
    section.compare(
        "scroll: slowest jump of five more trips to the top and back, CPU",
        [max(r["trips_cpu_ms"]) for r in got["resume"]],
        "bare VerticalScroll",
        [max(r["trips_cpu_ms"]) for r in got["bare"]],
        digits=1,
        note="after the pages up, five trips to the top and back, each jump a quarter second after the one before; "
        "each jump to the top draws the next part above once the view rests, so the history grows and gaps "
        "hide what is far at both ends (ui/tui/widgets/offscreen.py); the main thread's CPU of the slowest of "
        "the ten jumps; what moved it (6 December, probe of six trips, paired): a jump's frame shows only the "
        "hidden entries it shows (all within three screens before: from the fifth trip on, 40-150 ms a jump), "
        "without a repaint that built the map of every widget on the screen, and the gaps shown are removed once "
        "the view rests (6-35 ms); then the last screen is never hidden, so a jump back to the end shows nothing "
        "hidden and needs no whole layout (15-21 ms to 5-6 ms at the later trips); in this section's runs the "
        "slowest was 97.1 ms (51.1-130.6) before the first, 23.1 ms (21.3-26.3) after it",
    )
    section.compare(
        "scroll: one page up",
        [statistics.median(r["scroll_ms"]) for r in got["resume"]],
        "bare VerticalScroll",
        [statistics.median(r["scroll_ms"]) for r in got["bare"]],
        digits=1,
        note=f"median of {steps} pages up from the end, each a quarter second after the one before (runs before "
        "2026-12-05 12:40 UTC paged to the top: 4 pages, then 53 to 99, so they do not compare)",
    )
    section.compare(
        "scroll: slowest page up",
        [max(r["scroll_ms"]) for r in got["resume"]],
        "bare VerticalScroll",
        [max(r["scroll_ms"]) for r in got["bare"]],
        digits=1,
        note=f"the slowest of the {steps} pages: " + moved,
    )
    section.notes.append(
        f"The session: {session.turns} turns in {session.turns // 10} exchanges (a question, nine turns of "
        "`read_file` / `grep` / `glob` calls with their outputs, a Markdown answer with a list and a code block), "
        f"{session.path.stat().st_size / 1e6:.1f} MB of JSONL written by the engine's store. Each run starts "
        "`python -m bench.session_view` (the app under `App.run_test()` headless, 120×40) three times: resuming "
        "it, on a new session, and the bare peer. Open: from process launch to the first frame the app draws "
        "that shows the conversation, each answer included (as Markdown, or as the text the first frame draws in its place; resumed: checked to show the last answer; "
        "new: its welcome line); later refreshes wait on the SDK import in its thread, which is no part of "
        "drawing, and measuring to one of them added about 1 s to both sides. The app starts with the collector "
        "off, as `agentcli` starts it. RSS: once open, 0.5 s later, before scrolling. Scroll, each move timed "
        "from the scroll to the end of the repaint that follows, a quarter second after the move before (a person "
        "skimming back): from the end, a jump to the top and back, then 10 pages up (a page is the view's height), "
        "then five more trips to the top and back. "
        f"The resumed conversation is {rows} rows long and holds "
        f"{children} widgets (the app draws the latest part "
        "of a long session and marks the rest hidden; the whole history stays in the session); the bare peer "
        "holds the same number of plain `Static` widgets of the same heights."
    )
    return section
