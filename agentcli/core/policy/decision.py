"""What a judgment of one call says (``Decision``: allow, ask or refuse, and what a question offers), and what a
judgment reads of the permissions (``Rulebook``): the seam between ``Permissions``, which holds the mode, the rules
and the approval queue, and the judgments of calls that are no path's (judgments.py: a command line, a web address).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..events import MAIN
from .headless_advice import ways_to_allow
from .rules import Rule

BYPASS = "--permission-mode bypassPermissions"


@dataclass(frozen=True)
class Decision:
    verdict: str  # "allow", "ask" or "refuse"
    reason: str = ""  # refuse: the sentence the model gets; ask: why it needs a yes ("" when nothing special)
    rules: tuple[str, ...] = ()  # ask: what "allow for the session" and "always allow" record; () = once only
    allows: str = ""  # ask: a flag that would let it run without asking, for headless refusals
    grant: Path | None = None  # a path outside the workspace this call may touch once allowed
    allow_rules: tuple[str, ...] = ()  # ask: the allow rules that would let it run, for headless refusals
    rule_kind: str = ""  # ask: what such a rule must say where none can be named exactly

    def headless_refusal(self, tool: str, root: Path) -> str:
        why = f" ({self.reason})" if self.reason else ""
        ways = ways_to_allow(self.allows, self.allow_rules, self.rule_kind, root)
        return f"{tool} needs approval{why}, and no one can give it in a headless run; to allow it, {ways}."


ALLOW = Decision("allow")


def refuse(reason: str) -> Decision:
    return Decision("refuse", reason)


def plan_refusal(tool: str, flag: str) -> str:
    return (
        f"{tool} is not allowed in plan mode, which only reads and searches; the user can leave plan mode "
        f"with /permissions, or run with --permission-mode {flag}."
    )


class Rulebook(Protocol):
    """What a judgment reads of the permissions (``Permissions`` matches it)."""

    @property
    def mode(self) -> str: ...

    def rules_for(self, kind: str, tool: str, agent: str = MAIN, outside: bool = False) -> list[Rule]:
        """The rules of one kind (deny, ask, allow) that apply to ``tool``, for ``agent``."""
        ...

    def find_rule(
        self, kind: str, tool: str, matches: Callable[[Rule], bool], agent: str = MAIN, outside: bool = False
    ) -> Rule | None:
        """The first of those rules that ``matches``."""
        ...
