"""/help beside the open panel at 80 columns (about 40 cells for the conversation) keeps what each key and
command does: with the key kept whole there was no room, and the descriptions were dropped."""

from __future__ import annotations

from rich.console import Console

from agentcli.ui.tui import reports

KEYS = [("pageup pagedown, shift+↑ ↓", "scroll the conversation, from the input or the panel"), ("esc", "interrupt")]


def rendered(width: int) -> str:
    console = Console(width=width, record=True, force_terminal=False)
    console.print(reports.help_report(KEYS))
    return console.export_text()


def test_help_beside_the_panel_keeps_every_description():
    narrow = rendered(40).split("\nKeys\n")[1].split()  # the keys table alone
    described = "scroll the conversation, from the input or the panel".split()
    assert [word for word in narrow if word in described] == described  # wrapped, every word, in order
    assert "interrupt" in narrow and "Quit agentcli" in " ".join(rendered(40).split())  # a command's too
    assert "pageup pagedown, shift+↑ ↓" in " ".join(rendered(120).split())  # wide: each key on one line


def test_line_mode_help_wraps_a_description_under_itself():
    from agentcli.ui.plain.commands import KEYS, two_columns

    console = Console(width=60, record=True, force_terminal=False)
    console.print(two_columns(KEYS))
    lines = console.export_text().splitlines()
    column = lines[0].index("send")  # where the descriptions start
    steer = next(i for i, line in enumerate(lines) if line.startswith("ctrl+s"))
    assert lines[steer + 1][:column].strip() == "" and lines[steer + 1][column:].strip()  # hangs under its column


def test_no_command_usage_takes_half_of_an_80_column_help():
    """/help's first column is as wide as its widest usage: one wider than 38 squeezed every description of the
    line-mode list into a 30-cell column at 80 columns, three lines each."""
    from agentcli.ui.slash import COMMANDS

    widest = max(COMMANDS, key=lambda c: len(f"/{c.name} {c.args}"))
    assert len(f"/{widest.name} {widest.args}") <= 38, widest
