"""Open a session in the TUI headless and report on it, in a process of its own (so its memory is
its own): ``python -m bench.session_view MODE ROOT [SESSION_ID]`` prints one JSON line.

MODE ``resume``: agentcli resuming SESSION_ID; ``fresh``: agentcli on a new session; ``bare``: a bare
Textual VerticalScroll holding plain Static widgets of the heights in ROOT/heights.json (written by a
``resume`` run), the peer for scrolling. The JSON has ``drawn`` (time.monotonic() of the first frame
that showed the conversation: a resumed one's tail, a new one's welcome line),
``rss_mb``, ``top_ms`` / ``bottom_ms`` (a jump from the bottom to the top and back; ``top_cpu_ms`` / ``bottom_cpu_ms``
the main thread's CPU time over each) and ``scroll_ms``
(``PAGES`` page-up steps from the bottom, or fewer if the top comes first), then ``trips_cpu_ms`` (the main thread's CPU
time of each jump of ``TRIPS`` more trips to the top and back).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from .probes import API_KEY, rss_mb, screen_text  # not .common: it imports the engine, which the app

# imports in a thread once its first screen is up (a new session's first frame never waits for it)

SIZE = (120, 40)
PAGES = 10  # pages up from the end: what a person reading back does, the same in every run (paging to the top
# of a history that draws earlier parts on the way made the count depend on the app: 4 pages, then 53 to 99)
TRIPS = 5  # trips to the top and back after the pages: what a person going back and forth does
GLANCE = 0.25  # seconds between two moves: a person skimming back reads at most about four pages a second


class BareScroll(App[None]):
    def __init__(self, heights: list[int]) -> None:
        super().__init__()
        self.heights = heights

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="log"):
            for n, height in enumerate(self.heights):
                yield Static(
                    "\n".join(f"entry {n} line {i}: some text of about the usual width" for i in range(max(1, height)))
                )


async def _timed(app: App[Any], action: Any) -> tuple[float, float]:
    """The move's wall time to the end of its repaint, and the main thread's CPU time over it (the app draws in its
    main thread): what other work on a shared machine does not stretch, unlike the wall time."""
    started, cpu = time.perf_counter(), time.thread_time()
    action()
    await app.wait_for_refresh()
    return (time.perf_counter() - started) * 1000, (time.thread_time() - cpu) * 1000


def _page_up(view: VerticalScroll) -> None:
    """What the page-up key does, without deferring the scroll to after the next refresh."""
    view.scroll_to(y=view.scroll_y - view.scrollable_content_region.height, animate=False, immediate=True)


async def _scroll(app: App[Any], view: VerticalScroll) -> dict[str, Any]:
    """From the bottom: jump to the top, jump back to the end, then page up ``PAGES`` times (or to the top), each move
    a ``GLANCE`` after the one before (what the app does meanwhile is no part of the move)."""
    view.scroll_end(animate=False, immediate=True)
    await app.wait_for_refresh()
    await asyncio.sleep(GLANCE)
    top, top_cpu = await _timed(app, lambda: view.scroll_home(animate=False, immediate=True))
    await asyncio.sleep(GLANCE)
    bottom, bottom_cpu = await _timed(app, lambda: view.scroll_end(animate=False, immediate=True))
    steps: list[float] = []
    while view.scroll_y > 0 and len(steps) < PAGES:
        await asyncio.sleep(GLANCE)
        steps.append((await _timed(app, lambda: _page_up(view)))[0])
    trips: list[float] = []  # then TRIPS more trips to the top and back: each top draws the next part above
    for _ in range(TRIPS):
        for jump in (view.scroll_home, view.scroll_end):
            await asyncio.sleep(GLANCE)
            trips.append((await _timed(app, lambda: jump(animate=False, immediate=True)))[1])  # noqa: B023
    return {
        "trips_cpu_ms": trips,
        "scroll_ms": steps,
        "top_ms": top,
        "bottom_ms": bottom,
        "top_cpu_ms": top_cpu,
        "bottom_cpu_ms": bottom_cpu,
        "rows": view.virtual_size.height,
    }


def first_frame_showing(app: App[Any], selector: str) -> list[float]:
    """A list that gets the time of the first frame the app draws (headless too: ``App._display`` is called
    for each) in which the conversation ``selector`` names shows: its entries mounted, each answer's
    Markdown blocks too (an answer the first frame draws as text, ui/tui/widgets/early_answer.py, is
    one widget, swapped for its Markdown entry after that frame). A later refresh may wait on the SDK import in its thread (the warm-up), which is
    no part of drawing the screen."""
    frames: list[float] = []
    display = app._display

    def complete(screen: Any) -> bool:
        found = screen.query(selector)
        view = found.first() if found else None
        entries = [child for child in view.children if type(child).__name__ != "PrunedMarker"] if view else []
        return bool(entries) and all(child.children for child in entries if type(child).__name__ == "AssistantEntry")

    exit_when_drawn = bool(os.environ.get("BENCH_EXIT_WHEN_DRAWN"))  # launch-to-drawn as a whole process

    def timed(screen: Any, renderable: Any) -> None:
        if renderable is not None and not frames and complete(screen):
            frames.append(time.monotonic())
            if exit_when_drawn:  # once this frame is out, not after the next pause: what follows it is not timed
                display(screen, renderable)
                os._exit(0)
        display(screen, renderable)

    app._display = timed  # type: ignore[method-assign]
    return frames


def warmed(app: Any) -> bool:
    """The session is open and the SDK imported in its thread (``warm_up``), so a resumed and a new session are
    measured alike: a new session opens sooner, and waiting only while a warm-up worker ran read its RSS before
    that worker had started, without the SDK (about 25 MiB) that the resumed one's figure held."""
    running = any(worker.group == "warm-up" and not worker.is_finished for worker in app.workers)
    return bool(app.ready()) and "anthropic" in sys.modules and not running


async def main(mode: str, root: Path, session_id: str | None) -> dict[str, Any]:
    if mode != "bare":  # as `agentcli` starts the TUI (cli.py): no collector passes over startup's objects,
        gc.disable()  # which the first screen's startup_done() freezes before turning it on again
    if mode == "bare":
        app: App[Any] = BareScroll(json.loads((root / "heights.json").read_text()))
    else:
        from agentcli.config import Settings
        from agentcli.core.model.llm import LLM, Credentials
        from agentcli.ui.tui.app import make_app

        llm = LLM(max_retries=0, credentials=Credentials(api_key=API_KEY, base_url="http://127.0.0.1:9"))
        app = make_app(Settings().engine(), root, llm=llm, resume=session_id if mode == "resume" else None)
    frames = first_frame_showing(app, "#log" if mode == "bare" else "#conversation")
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one("#log" if mode == "bare" else "#conversation", VerticalScroll)
        deadline = time.monotonic() + 120
        while not frames and time.monotonic() < deadline:
            await pilot.pause()
        if not frames:
            raise RuntimeError("no frame showed the conversation within 120 s")
        drawn = frames[0]
        await pilot.pause()
        await app.wait_for_refresh()
        screen = screen_text(app)
        while mode != "bare" and not warmed(app):
            await asyncio.sleep(0.01)  # the SDK import in its thread would slow the scrolls measured next
        await pilot.pause(0.5)
        opened = rss_mb()  # once open, before the scrolls below draw earlier parts of the history
        report = {"drawn": drawn, "children": len(view.children), **await _scroll(app, view), "rss_mb": opened}
        if mode == "resume":
            (root / "heights.json").write_text(json.dumps([c.outer_size.height for c in view.children]))
            report["screen"] = screen
    return report


if __name__ == "__main__":
    mode, root = sys.argv[1], Path(sys.argv[2])
    print(json.dumps(asyncio.run(main(mode, root, sys.argv[3] if len(sys.argv) > 3 else None))))
    sys.stdout.flush()
    os._exit(0)  # do not wait on the warm-up thread or the HTTP client at exit
