"""What a measure's own process reads off itself, without importing agentcli: a process that times
agentcli's launch (bench.session_view) must not have loaded the engine before the app does."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

API_KEY = "sk-ant-bench-0000"


def rss_mb(pid: int | str = "self") -> float:
    """Resident set size of a process, in MiB (Linux /proc)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def screen_text(app: Any) -> str:
    """The text on a Textual app's screen (from its SVG screenshot), spaces and all."""
    svg = app.export_screenshot()
    return html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")
