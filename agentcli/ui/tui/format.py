"""Pure formatting for the TUI: tool inputs, status icons, and the status bar's line."""

from __future__ import annotations

from typing import Any, cast

from textual.content import Content

from ...core.events import Preview, Status
from ..calls import approval_lines
from ..format import KEPT_OUT, UNKNOWN_COST, tokens
from ..view import StatusFacts

# One glyph and one theme colour per subagent status.
STATUS_ICONS: dict[Status, str] = {
    "queued": "○",
    "running": "●",
    "done": "✓",
    "capped": "◑",
    "timed_out": "◷",
    "failed": "✗",
    "cancelled": "⊘",
    "interrupted": "‖",
    "refused": "✗",
}
STATUS_STYLES: dict[Status, str] = {
    "queued": "$text-muted",
    "running": "$warning",
    "done": "$success",
    "capped": "$warning",
    "timed_out": "$warning",
    "failed": "$error",
    "cancelled": "$text-muted",
    "interrupted": "$text-muted",
    "refused": "$error",
}


def one_line(text: str, width: int = 80) -> str:
    """The first line of ``text``, cut to ``width`` characters with an ellipsis."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


# How each kind of line of ``ui.calls.approval_lines`` looks.
LINE_STYLES = {
    "title": "bold",
    "command": "",
    "path": "bold",
    "field": "",
    "hunk": "$text-muted",
    "add": "$success",
    "remove": "$error",
    "same": "",
    "note": "$text-muted italic",
}


def input_view(preview: Preview, args: Any, max_lines: int = 40, diff: tuple[str, ...] = ()) -> Content:
    """A tool's input for people: an edit or a write as its diff (``diff``, the engine's, else the one its
    input tells), a command whole below its description, the rest as 'key: value'."""
    lines = approval_lines(preview, args, diff)
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [("note", f"… {len(lines) - max_lines} more lines")]
    return Content("\n").join([Content.styled(text, LINE_STYLES[kind]) for kind, text in lines])


def clip_lines(text: str, max_lines: int) -> str:
    lines = text.splitlines()
    if len(lines) <= max_lines:
        return text
    return "\n".join(lines[:max_lines] + [f"… {len(lines) - max_lines} more lines"])


def status_icon(status: str) -> Content:
    key = cast(Status, status)  # a child's status, or a tool call's: any other text gets "?"
    return Content.styled(STATUS_ICONS.get(key, "?"), STATUS_STYLES.get(key, ""))


def status_line(facts: StatusFacts, width: int = 1000) -> Content:
    """The status bar's facts on one line of ``width`` cells: labels get shorter before any number is lost."""
    pct = 100 * facts.context_used / facts.context_window if facts.context_window else 0
    sep = Content.styled(" │ ", "$text-muted")
    line = Content("")
    for short in range(6):  # each step shortens one more label
        state = (
            Content.styled("no API key", "bold $error")
            if facts.no_key
            else Content.styled("● working" if short < 4 else "●", "bold $warning")
            if facts.busy
            else None
        )
        parts = [
            Content.styled(facts.model if short < 3 else facts.model.removeprefix("claude-"), "bold"),
            Content(facts.mode) if short < 5 or facts.mode != "default" else None,
            Content(
                f"{tokens(facts.tokens)} tok "
                f"{'cost unknown' if short >= 2 and facts.cost == UNKNOWN_COST else facts.cost}"
            ),
            Content(f"context {pct:.0f}%" if short < 2 else f"ctx {pct:.0f}%"),
            Content(
                f"{KEPT_OUT}: {tokens(facts.kept_out)} tokens" if short < 1 else f"kept out {tokens(facts.kept_out)}"
            ),
        ]
        working = Content.styled(facts.servers_working, "$text-muted") if facts.servers_working and short < 5 else None
        line = sep.join([part for part in [state, *parts, working] if part is not None])
        if line.cell_length <= width:
            break
    return line
