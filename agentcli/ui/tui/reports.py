"""The reports of /cost, /agents and /help: tables drawn to the width the conversation has.

When a table does not fit, its least needed columns go, whole, instead of every cell being cut.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from ...core.comparison import NEXT_STEP, rows
from .. import slash
from ..escapes import visible_data
from .format import STATUS_ICONS

if TYPE_CHECKING:
    from ...core.door import AgentType, ContextUsage, SessionSurface
    from ...core.events import AttemptsCompared
    from ..view import Subagent

GAP = 2  # cells between columns
WRAPPED = 16  # the width a wrapping column (a description) needs at least


@dataclass(frozen=True)
class Column:
    header: str
    keep: int  # the higher, the longer the column stays when the width is short
    numeric: bool = False
    wraps: bool = False  # free text: it wraps, and takes the width left over


class Fitted:
    """A table that leaves out its least needed columns rather than squeezing all of them."""

    def __init__(self, columns: list[Column], rows: list[list[str]], *, bold_last: bool = False) -> None:
        self.columns = columns
        self.rows = visible_data(rows)  # descriptions come from agent files and the model
        self.bold_last = bold_last

    def width(self, index: int) -> int:
        column = self.columns[index]
        widest = max([cell_len(column.header)] + [cell_len(row[index]) for row in self.rows])
        return min(widest, WRAPPED) if column.wraps else widest

    def shown(self, width: int) -> list[int]:
        """The columns that fit in ``width``, in their order."""
        shown = [i for i in range(len(self.columns)) if any(row[i] for row in self.rows)]
        while len(shown) > 1 and sum(map(self.width, shown)) + GAP * (len(shown) - 1) > width:
            shown.remove(min(shown, key=lambda i: self.columns[i].keep))
        return shown

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        shown = self.shown(options.max_width)
        table = Table(
            box=None, padding=(0, GAP // 2), pad_edge=False, show_edge=False, header_style="bold", expand=False
        )
        for i in shown:
            column = self.columns[i]
            table.add_column(
                column.header,
                justify="right" if column.numeric else "left",
                no_wrap=not column.wraps,
                overflow="fold" if column.wraps else "ellipsis",
                ratio=1 if column.wraps else None,
            )
        for number, row in enumerate(self.rows):
            bold = self.bold_last and number == len(self.rows) - 1
            table.add_row(*(Text(row[i]) for i in shown), style="bold" if bold else None)  # text, never markup
        yield table


def titled(title: str, body: RenderableType) -> Group:
    return Group(Text(title, style="bold"), body)


def cost_report(session: SessionSurface) -> Group:
    """Tokens and cost per agent and in total, how full the main context is, what subagents kept out."""
    columns = [
        Column("agent", 9),
        Column("input", 7, numeric=True),
        Column("output", 6, numeric=True),
        Column("cache read", 3, numeric=True),
        Column("cache write", 2, numeric=True),
        Column("cost", 8, numeric=True),
        Column("model · task", 4, wraps=True),
    ]
    agents = (
        [("main", session.main_usage, session.model)]
        + [(r.id, r.usage, f"{r.model} · {r.description}" if r.model else r.description) for r in session.children]
        + [
            (f"type {kind}", usage, f"{count} subagent{'' if count == 1 else 's'}")
            for kind, (count, usage) in session.usage_by_type().items()
        ]
    )
    rows = [
        [
            name,
            slash.tokens(u.input_tokens),
            slash.tokens(u.output_tokens),
            slash.tokens(u.cache_read_tokens),
            slash.tokens(u.cache_write_tokens),
            slash.money(u, cell=True),
            task,
        ]
        for name, u, task in agents
    ]
    rows.append(["total", *usage_cells(session)])
    notes = Text(
        "\n".join(
            [
                *slash.unknown_cost_note(session),
                slash.context_line(session),
                slash.kept_out_line(session.tokens_kept_out),
                *slash.delegation_bars(session),
                *slash.delegation_accounts(session),
            ]
        )
    )
    return Group(titled("Tokens and cost", Fitted(columns, rows, bold_last=True)), Text(""), notes)


CONTEXT_STYLES = ("magenta", "yellow", "cyan", "green", "blue")  # one per part, as slash.CONTEXT_MARKS


def context_report(usage: ContextUsage, width: int = 40) -> Group:
    """/context: one bar of the window coloured by part, then a row a part and what subagents kept out."""
    bar = Text()
    for (mark, cells), style in zip(slash.context_segments(usage, width), CONTEXT_STYLES, strict=False):
        bar.append(mark * cells, style=style)
    bar.append("░" * (width - len(bar)), style="dim")
    columns = [Column("", 2), Column("part", 17), Column("tokens", 7, numeric=True), Column("window", 6, numeric=True)]
    rows = [
        [mark, label, slash.tokens(count), f"{100 * usage.shares[label]:.1f}%"]
        for mark, (label, count) in zip(slash.CONTEXT_MARKS, usage.parts.items(), strict=False)
    ]
    rows.append(
        ["", "total", slash.tokens(usage.total), f"{100 * usage.total / usage.window:.1f}%" if usage.window else ""]
    )
    notes = Text(slash.context_kept_out(usage))
    return Group(titled(slash.context_how(usage), bar), Fitted(columns, rows, bold_last=True), notes)


def usage_cells(session: SessionSurface) -> list[str]:
    u = session.usage
    return [
        slash.tokens(u.input_tokens),
        slash.tokens(u.output_tokens),
        slash.tokens(u.cache_read_tokens),
        slash.tokens(u.cache_write_tokens),
        slash.money(u, cell=True),
        "",
    ]


def agents_report(types: Iterable[AgentType], subagents: Iterable[Subagent], how_to: str) -> Group:
    """The agent types a task may use, this session's subagents, and how to reach the panel."""
    kinds = Fitted(
        [Column("type", 9), Column("what it is for", 5, wraps=True)], [[t.name, t.description] for t in types]
    )
    parts: list[RenderableType] = [titled("Agent types", kinds)]
    rows = [
        [
            s.id,
            f"{STATUS_ICONS.get(s.status, '?')} {s.status}",
            s.type,
            f"{s.turn}/{s.max_turns}",
            slash.tokens(s.tokens),
            s.description,
        ]
        for s in subagents
    ]
    if rows:
        columns = [
            Column("id", 9),
            Column("status", 8),
            Column("type", 2),
            Column("turns", 4, numeric=True),
            Column("tokens", 3, numeric=True),
            Column("task", 6, wraps=True),
        ]
        parts += [Text(""), titled("This session", Fitted(columns, rows))]
    parts += [Text(""), Text(how_to, style="dim")]
    return Group(*parts)


def help_report(keys: list[tuple[str, str]], custom: list[slash.SlashCommand] | None = None, footer: str = "") -> Group:
    # Both columns wrap: beside the panel (about 40 cells at 80 columns) a key and what it does both fit, where
    # a key kept whole would leave no room and drop the description.
    commands = Fitted(
        [Column("command", 9, wraps=True), Column("what it does", 5, wraps=True)],
        [[f"/{c.name} {c.args}".strip(), c.help] for c in [*slash.commands_for("tui", custom or []), *(custom or [])]],
    )
    shortcuts = Fitted([Column("key", 9, wraps=True), Column("what it does", 5, wraps=True)], [list(k) for k in keys])
    return Group(
        titled("Commands", commands),
        Text(""),
        titled("Keys", shortcuts),
        *([Text(""), Text(footer, style="dim")] if footer else []),
    )


def comparison_report(compared: AttemptsCompared) -> Group:
    """A best-of-N errand's attempts side by side (core/comparison.py's one table), and what to do next."""
    header, *body = rows(compared.attempts)
    keep = (9, 7, 6, 8, 5, 4, 3, 2)  # the attempt, its check, status and diff stay longest
    table = Fitted(
        [Column(h, k, numeric=h in ("tokens", "cost", "time")) for h, k in zip(header, keep, strict=True)],
        [list(row) for row in body],
    )
    check = f" · checked with `{compared.check}`" if compared.check else ""
    return Group(titled(f"Attempts: {compared.description}{check}", table), Text(NEXT_STEP, style="dim"))
