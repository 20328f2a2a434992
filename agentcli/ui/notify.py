"""A terminal notification when the user is needed and may not be looking (core/lifecycle.py says when: an
approval or a server's question waits, a background subagent finished, a turn ended).

The ``notifications`` setting picks how: ``osc9`` (iTerm2, WezTerm, Ghostty, kitty: a desktop notification),
``osc777`` (foot, urxvt and other VTE-style terminals: ``notify;title;body``), ``bell`` (BEL: every terminal,
shown as it chooses), ``off``, or ``auto``: OSC 9 where the terminal is known to show it, OSC 777 on foot and
urxvt, else the bell. Inside tmux, ``auto`` is off unless tmux passes escape sequences through to the outer
terminal (its ``allow-passthrough`` option); an OSC sequence then goes wrapped in tmux's passthrough.

The message names a tool, a subagent or a server, which a repository may name: it is written with every
control character taken out, so it can never end the sequence and start one of its own.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Mapping

from ..config import NOTIFICATIONS

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
MESSAGE_CAP = 200  # characters of a notification's text
OSC9_TERMINALS = ("iTerm.app", "WezTerm", "ghostty")  # TERM_PROGRAM values of terminals that show OSC 9
OSC777_TERMS = ("foot", "rxvt")  # TERM prefixes of terminals that show OSC 777


def tmux_passes_through() -> bool:
    """Whether the tmux we run in passes escape sequences through (``allow-passthrough`` on or all)."""
    try:
        shown = subprocess.run(
            ["tmux", "show-options", "-gqv", "allow-passthrough"],
            capture_output=True,
            text=True,
            timeout=2,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return False
    return shown in ("on", "all")


def kind_of(setting: str, env: Mapping[str, str], passthrough: Callable[[], bool] = tmux_passes_through) -> str:
    """What ``setting`` comes to in this terminal: osc9, osc777, bell or off."""
    if setting != "auto":
        return setting if setting in NOTIFICATIONS else "off"
    if env.get("TMUX"):
        return "osc9" if passthrough() else "off"
    if env.get("TERM_PROGRAM") in OSC9_TERMINALS or env.get("KITTY_WINDOW_ID"):
        return "osc9"
    if env.get("TERM", "").startswith(OSC777_TERMS):
        return "osc777"
    return "bell"


def sequence(kind: str, message: str, *, in_tmux: bool = False) -> str:
    """The bytes (as text) that make the terminal notify; "" for off."""
    text = _CONTROL.sub(" ", message)[:MESSAGE_CAP]
    if kind == "bell":
        return "\x07"
    if kind == "osc9":
        made = f"\x1b]9;{text}\x07"
    elif kind == "osc777":
        made = f"\x1b]777;notify;agentcli;{text}\x07"
    else:
        return ""
    return f"\x1bPtmux;{made.replace(chr(27), chr(27) * 2)}\x1b\\" if in_tmux else made


class Notifier:
    """One front end's notifications: called as the session's ``attention`` with (notification_type, message),
    it writes the sequence with ``write`` (which reaches the terminal past the front end's own drawing)."""

    def __init__(self, setting: str, env: Mapping[str, str], write: Callable[[str], None]) -> None:
        self.kind = kind_of(setting, env)
        self.in_tmux, self.write = bool(env.get("TMUX")), write

    def __call__(self, kind: str, message: str) -> None:
        if made := sequence(self.kind, message, in_tmux=self.in_tmux):
            self.write(made)
