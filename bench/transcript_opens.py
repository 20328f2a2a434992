"""The same child's transcript opened six times in one process, as a person opens and closes it (ctrl+o, esc):
``python -m bench.transcript_opens ROOT`` prints one JSON line of each open's wall and CPU milliseconds.

A process of its own, started with the collector off as ``agentcli`` starts the TUI (the app's warm-up turns
it on once the SDK is imported), and no ``gc.collect()`` before an open: what differs between the first opens
and the later ones (first styles, first imports, a full collection landing inside one) is what it measures.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import sys
import time
from pathlib import Path

OPENS = 6


async def main(root: Path) -> list[tuple[float, float]]:
    gc.disable()  # as cli.py starts the TUI
    from .transcript import CHILD, child_finished_app

    took: list[tuple[float, float]] = []
    async with child_finished_app(root) as (app, pilot):
        for _ in range(OPENS):
            started, cpu = time.perf_counter(), time.process_time()
            app.open_transcript(CHILD)
            await pilot.pause()
            await app.wait_for_refresh()
            took.append(((time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000))
            app.pop_screen()
            await pilot.pause(0.2)  # back on the main screen, as a person reads it before the next open
    return took


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(Path(sys.argv[1])))))
    sys.stdout.flush()
    os._exit(0)  # do not wait on the warm-up thread or the HTTP client at exit
