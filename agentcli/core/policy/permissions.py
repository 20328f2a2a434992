"""Who may run what: permission modes, rules, the workspace boundary, and approval requests.

The registry asks ``Permissions.authorize`` before every tool call. ``decide`` says allow,
ask or refuse; a call that asks becomes an ``ApprovalRequested`` event whose future the front
end resolves, and headless runs refuse it, naming the flag or rule that would allow it.

The order of checks, for every call:

1. deny rules (they hold in every mode, bypassPermissions included);
2. plan mode refuses writes and commands;
3. the workspace boundary: writes outside it are refused, reads outside it ask (but read_file reads
   this session's own full-output copies, which tool results point to: ``tools/outputs.py``);
4. bypassPermissions allows everything else;
5. protected paths (the held paths of ``system/protected_paths.py``: ``.git/``, ``.agentcli/``,
   ``.claude/``, ``.mcp.json``, ``.envrc``, the editors' folders, shell start-up files; the folder
   ``core.hooksPath`` names; credentials; agentcli's and git's own folders wherever they really are)
   and ask rules ask,
   and command substitution in bash always asks;
6. what the mode lets run freely, then allow rules and this session's rules;
7. anything else asks.

Before a question is asked, the tool checks the call (``Tool.check``): one bound to fail, such as
an edit whose ``old_string`` is not in the file, fails without a question, and an edit or write
shows the user its diff.

Subagents share their parent's ``Permissions`` through the tool context, so they have its
mode and rules, and answers given to one agent's requests apply to the others; but "for this
subagent" (``ALLOW_AGENT``) adds the rules for the asking child alone.

The approval inbox: every agent's questions, background children's included, wait in one queue
in the order asked, and are shown one at a time; an ``ApprovalsWaiting`` event tells the front
ends who waits each time the queue changes. In a headless run nothing is queued: a call that
would ask is refused, whichever agent made it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import paths
from ..events import (
    ALLOW_AGENT,
    ALLOW_ALWAYS,
    ALLOW_ONCE,
    ALLOW_SESSION,
    MAIN,
    Approval,
    ApprovalRequested,
    ApprovalsWaiting,
    Notice,
)
from ..storage.outputs import is_saved_output
from ..system import protected_paths
from ..system.home_held import home_reason
from ..system.sandbox import Widening
from ..tool_facts import KNOWN
from ..units import quoted
from ..vocabulary import MODES as MODES
from .calls import CallContext as Ctx
from .calls import JudgedTool as Tool
from .decision import ALLOW, BYPASS, Decision, plan_refusal, refuse
from .judgments import decide_command, decide_fetch
from .rules import Rule, RuleError, RuleSet, save_allow_rule

# Tool kinds each mode runs without asking (bypassPermissions runs everything).
_FREE: dict[str, set[str]] = {
    "default": {"read", "task"},
    "acceptEdits": {"read", "task", "edit"},
    "plan": {"read", "task"},
}

# Never written without an explicit yes, even in acceptEdits: the held paths (system/protected_paths.py:
# what git, the shell, editors, Claude Code and agentcli run later, held read-only in the sandbox too),
# the folder core.hooksPath names, and these credentials and git's list of submodules.
PROTECTED_DIRS = {".ssh", ".gnupg"}
PROTECTED_FILES = {".git-credentials", ".netrc", ".gitmodules"}


def protected(rel: Path) -> str:
    """Why writing ``rel`` (relative to the workspace root) needs an explicit yes, by its name; "" when it
    does not. (``protected_paths.in_hooks_folder`` finds the folder core.hooksPath names.)"""
    if why := protected_paths.protected(rel):
        return why
    for part in rel.parts[:-1]:
        if part.lower() in PROTECTED_DIRS:
            return f"files in {part}/ are protected"
    name = rel.name.lower()
    if name in PROTECTED_DIRS:
        return f"{rel.name} is protected"
    if name in PROTECTED_FILES:
        return f"{rel.name} is a protected credentials or submodules file"
    return ""


def own_folder(real: Path, base: Path) -> str:
    """Why writing ``real`` (resolved) needs an explicit yes because it lies in one of agentcli's own
    folders, or git's (``paths.own_dirs``), found by where they really are, not by name; "" when it
    does not. A folder the workspace itself lies in (a subagent's worktree in the data folder) is left out."""
    for folder, what in paths.own_dirs():
        try:
            where = folder.resolve()
        except (OSError, RuntimeError):
            continue
        if (real == where or where in real.parents) and not (base == where or where in base.parents):
            return f"{real} is in {what} ({where})"
    return ""


DENIAL_REASON_CAP = 1_000  # characters of a user's reason for a "no" that the model reads


def denial(tool: str, subagent: bool, reason: str = "") -> str:
    """What the model reads when the user said no, with why when they said (their words, quoted on one
    line); a subagent has no user to ask (its prompt says so)."""
    if reason.strip():
        return (
            f"The user denied this {tool} call and said why: {quoted(reason, DENIAL_REASON_CAP)}. Do not "
            "retry it unchanged; act on what they said."
        )
    then = (
        "take another approach, or finish and say in your answer what you needed it for"
        if subagent
        else "ask the user or take another approach"
    )
    return f"The user denied this {tool} call. Do not retry it; {then}."


@dataclass(frozen=True)
class _Target:
    """Where a path argument leads: as written, without and with symlinks followed."""

    shown: str
    lexical: Path
    real: Path
    inside: bool
    is_dir: bool


@dataclass
class Permissions:
    mode: str = "default"
    interactive: bool = False  # a user is there to answer approval requests
    rules: RuleSet = field(default_factory=RuleSet)  # from the user and project settings
    session_rules: list[Rule] = field(default_factory=list)  # allow rules added by answers this session
    # A loaded skill's or a command's allowed-tools, for its turn: they allow inside the workspace only.
    turn_rules: list[Rule] = field(default_factory=list)
    agent_rules: dict[str, list[Rule]] = field(default_factory=dict)  # likewise, for one subagent alone
    _grants: set[tuple[str, str, Path]] = field(default_factory=set, init=False, repr=False)
    _saved: dict[str, Path] = field(default_factory=dict, init=False, repr=False)  # "always" rules, and where
    # What answers let bash calls have beyond the OS sandbox for the rest of the session (ask_sandbox).
    sandbox_grants: Widening = field(default_factory=Widening, init=False)
    # The approval queue: one question at a time, in the order asked (front ends only show and answer it).
    _asking: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)
    _waiting: list[tuple[str, str]] = field(default_factory=list, init=False, repr=False)  # (agent, errand), in order
    on_mode: Callable[[str], None] | None = field(default=None, init=False, repr=False)  # told each change of mode

    def __post_init__(self) -> None:
        self.set_mode(self.mode)

    @classmethod
    def from_settings(cls, mode: str, rules: dict[str, list[str]] | None, interactive: bool) -> Permissions:
        return cls(mode=mode, interactive=interactive, rules=RuleSet.parse(rules))

    def set_mode(self, mode: str) -> None:
        """Switch modes (``/permissions``); ValueError with one sentence for an unknown mode."""
        if mode not in MODES:
            raise ValueError(f"Unknown permission mode {mode!r}; choose one of {', '.join(MODES)}.")
        changed, self.mode = mode != self.mode, mode
        _ = changed and self.on_mode is not None and self.on_mode(mode)  # the session stores it (ModeChanged)

    def deny_for_session(self, rules: Iterable[str]) -> None:
        """ "Reject always": rules (as an "allow always" would have saved them) denied for the rest of the session."""
        for rule in RuleSet.parse({"deny": list(rules)}).deny:
            if rule not in self.rules.deny:
                self.rules.deny.append(rule)

    @property
    def session_allowed(self) -> set[str]:
        """The rules answers added this session, as written (``bash(git diff *)``, ``edit_file``)."""
        return {rule.text for rule in self.session_rules}

    def describe(self) -> str:
        """The mode and every rule, for ``/permissions``."""
        lines = [f"Permission mode: {self.mode}"]
        for kind in ("deny", "ask", "allow"):
            for rule in getattr(self.rules, kind):
                lines.append(f"  {kind:5} {rule.text}")
        lines += [
            f"  allow {rule.text}  "
            + (f"(always: saved to {self._saved[rule.text]})" if rule.text in self._saved else "(this session)")
            for rule in self.session_rules
        ]
        lines += [
            f"  allow {rule.text}  (this turn: allowed-tools, inside the workspace only)" for rule in self.turn_rules
        ]
        lines += [
            f"  allow {rule.text}  (this session, {agent} only)"
            for agent, rules in self.agent_rules.items()
            for rule in rules
        ]
        return "\n".join(lines)

    # ------------------------------------------------------------ the question

    async def authorize(
        self, tool: Tool, args: dict[str, Any], ctx: Ctx, approved: bool = False
    ) -> str | dict[str, Any] | None:
        """None when the call may run; otherwise the sentence the model gets back. ``approved``: a
        PreToolUse hook allowed the call, which answers a question (never a deny rule or a refusal).
        A dict: the answer allowed the call with this input instead (an ``Approval``'s), which was
        checked again, as the model's would be, and may run."""
        decision = self.decide(tool, args, ctx)
        updated: dict[str, Any] | None = None
        if decision.verdict == "ask" and approved:
            decision = dataclasses.replace(decision, verdict="allow")
        if decision.verdict == "ask":
            from ..errors import ToolError  # here: config.py imports this module on the way to the app

            if not self.interactive:
                try:
                    await tool.check(args, ctx)  # a call bound to fail fails as such, not as one to approve
                except ToolError as exc:
                    return str(exc)
                return decision.headless_refusal(tool.name, ctx.workspace.root)
            waiting = (ctx.agent_id, "" if ctx.agent_id == MAIN else ctx.agent_description)
            self._waiting.append(waiting)
            self._announce(ctx)
            try:
                async with self._asking:  # asyncio's lock wakes its waiters first come, first served
                    decision = self.decide(tool, args, ctx)  # an answer given meanwhile may cover it now
                    if decision.verdict == "ask":
                        try:
                            diff = await tool.check(args, ctx)  # a call bound to fail fails without a question
                        except ToolError as exc:
                            return str(exc)
                        said = await self._ask(tool, args, ctx, decision, diff)
                        approval = said if isinstance(said, Approval) else Approval(said)
                        if approval.answer not in (ALLOW_ONCE, ALLOW_SESSION, ALLOW_AGENT, ALLOW_ALWAYS):
                            return approval.message or denial(tool.name, ctx.agent_id != MAIN, approval.reason)
                        await self._remember(approval.answer, decision, ctx)
                        decision = dataclasses.replace(decision, verdict="allow")
                        if approval.input is not None and approval.input != args:
                            updated, decision = approval.input, self.decide(tool, approval.input, ctx)
                            if decision.verdict == "ask":  # the answer covers its own input, but not a refusal
                                decision = dataclasses.replace(decision, verdict="allow")
            finally:
                self._waiting.remove(waiting)
                self._announce(ctx)
        if decision.verdict == "refuse":
            return decision.reason
        if decision.grant is not None:
            self._grants.add((ctx.agent_id, ctx.tool_use_id, decision.grant))
        return updated

    async def ask_sandbox(self, tool: Tool, args: dict[str, Any], ctx: Ctx, needed: Widening) -> str:
        """After a call failed in the OS sandbox for want of ``needed`` (``Sandbox.needs``): "" when the user
        lets it run again with just that added, else why nobody did (for its result; "declined" when the user
        said no). Asked once, in the approval queue, only where a user is there and the mode asks
        (default, acceptEdits): bypassPermissions lifts questions, not the sandbox, so it never widens it.
        "For the session" (and "always", which counts for the session) keeps ``needed`` for the session's
        later bash calls."""
        if not self.interactive:
            return "this is a headless run"
        if self.mode not in ("default", "acceptEdits"):
            return f"{self.mode} lifts questions, not the sandbox"
        async with self._asking:
            if self.sandbox_grants.covers(needed):  # an answer given meanwhile
                return ""
            what = needed.describe()
            decision = Decision(
                "ask",
                f"the OS sandbox stopped it, and it needs {what}: yes runs it again with "
                f"{what}, and nothing else, added",
                rules=(f"sandbox: {what}",),
            )
            answer = await self._ask(tool, args, ctx, decision, ())
            if answer not in (ALLOW_ONCE, ALLOW_SESSION, ALLOW_ALWAYS):
                return "declined"
            if answer != ALLOW_ONCE:
                self.sandbox_grants = self.sandbox_grants | needed
            if answer == ALLOW_ALWAYS:
                how = (
                    "to allow the network always, set sandbox_network = true (or sandbox_allowed_hosts) in your "
                    "settings"
                    if needed.network
                    else "a later session asks again"
                )
                ctx.emit(
                    Notice(level="info", text=f"Allowed {what} for this session only; {how}.", agent_id=ctx.agent_id)
                )
            return ""

    def _announce(self, ctx: Ctx) -> None:
        """Tell the front ends who waits now (through the agent whose call joined or left the queue)."""
        ctx.emit(
            ApprovalsWaiting(
                agents=tuple(agent for agent, _ in self._waiting),
                descriptions=tuple(errand for _, errand in self._waiting),
                agent_id=ctx.agent_id,
                parent_tool_use_id=ctx.parent_tool_use_id,
            )
        )

    def read_denials(self) -> list[Rule]:
        """The deny rules on paths that name a tool that reads (``Read(.env)``, ``read_file(.env)``,
        ``grep(secrets/**)``): each holds for every tool that reads, grep and glob over a folder and the
        git tools included."""
        return [
            rule
            for rule in self.rules.deny
            if rule.pattern is not None and any(rule.covers(tool) for tool in KNOWN.reading())
        ]

    def read_denial(self, path: Path, root: Path) -> str:
        """The text of the read deny rule that covers ``path`` (absolute; as named or as it resolves), "" when
        none does. A file the user names (an @-mention, an image path) is held to it as a tool's read is."""
        real = path.resolve()
        is_dir = real.is_dir()
        lexical = Path(os.path.normpath(path))
        rule = next(
            (
                rule
                for rule in self.read_denials()
                if rule.matches_path(real, root, is_dir) or rule.matches_path(lexical, root, is_dir)
            ),
            None,
        )
        return rule.text if rule is not None else ""

    def permits_outside(self, ctx: Ctx, real: Path) -> bool:
        """Whether this tool call was allowed to touch ``real``, a path outside the workspace."""
        return (ctx.agent_id, ctx.tool_use_id, real) in self._grants

    async def _ask(
        self, tool: Tool, args: dict[str, Any], ctx: Ctx, decision: Decision, diff: tuple[str, ...]
    ) -> str | Approval:
        future: asyncio.Future[str | Approval] = asyncio.get_running_loop().create_future()
        ctx.emit(
            ApprovalRequested(
                tool=tool.name,
                input=args,
                preview=tool.preview,
                description=ctx.agent_description,
                reason=decision.reason,
                rules=decision.rules,
                diff=diff,
                future=future,
                tool_use_id=ctx.tool_use_id,
                agent_id=ctx.agent_id,
                parent_tool_use_id=ctx.parent_tool_use_id,
            )
        )
        try:
            return await future
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            return "deny"  # the front end withdrew the question

    async def _remember(self, answer: str, decision: Decision, ctx: Ctx) -> None:
        if answer == ALLOW_ONCE:
            return
        if not decision.rules:
            ctx.emit(
                Notice(
                    level="info",
                    text=f"Allowed once: {decision.reason or 'this call'} needs a yes every time.",
                    agent_id=ctx.agent_id,
                )
            )
            return
        scoped = answer == ALLOW_AGENT and ctx.agent_id != MAIN
        rules = self.agent_rules.setdefault(ctx.agent_id, []) if scoped else self.session_rules
        for text in decision.rules:
            rule = Rule.parse(text)
            if rule not in rules:
                rules.append(rule)
        if answer != ALLOW_ALWAYS:
            return
        settings_file = paths.workspace_config_file(ctx.workspace.root)  # yours, not the repository's
        for text in decision.rules:
            try:
                await asyncio.to_thread(save_allow_rule, settings_file, text)
                self._saved[text] = settings_file
            except (OSError, RuleError) as exc:
                ctx.emit(
                    Notice(
                        level="warning",
                        text=f"Could not save the rule {text} to {settings_file}: "
                        f"{exc}. It applies for this session only.",
                    )
                )

    # ------------------------------------------------------------ the decision

    def decide(self, tool: Tool, args: dict[str, Any], ctx: Ctx) -> Decision:
        """What to do with one call, without asking anyone."""
        if tool.judged_by == "command" and isinstance(args.get("command"), str):
            return decide_command(self, args["command"], ctx.agent_id if ctx is not None else MAIN, tool.name)
        if tool.judged_by == "address":
            return decide_fetch(self, str(args.get("url", "")), tool.name)
        root = ctx.workspace.root
        takes_path = tool.workspace_paths and "path" in tool.input_schema.get("properties", {})
        target = self._target(ctx, args) if takes_path else None
        if target is not None:

            def matches(rule: Rule, strict: bool = False) -> bool:
                assert target is not None
                hit = rule.matches_path(target.real, root, target.is_dir)
                return hit or (not strict and rule.matches_path(target.lexical, root, target.is_dir))

            subject = f"{target.shown}"
        else:
            value = str(args.get(tool.key_arg, "")) if tool.key_arg else ""

            def matches(rule: Rule, strict: bool = False) -> bool:
                return rule.matches_text(value)

            subject = value
        about = f"{tool.name} on {subject}" if subject else tool.name
        kind = tool.kind

        agent = ctx.agent_id
        deny = self.find_rule("deny", tool.name, matches)
        if deny is None and kind == "read" and target is not None:
            deny = next((rule for rule in self.read_denials() if matches(rule)), None)
        if deny:
            return refuse(f"{about} is denied by the rule `{deny.text}`; do not try to get around it.")
        if self.mode == "plan" and kind in ("edit", "exec"):
            return refuse(plan_refusal(tool.name, "acceptEdits" if kind == "edit" else "bypassPermissions"))
        if target is not None and not target.inside:
            if tool.reads_saved_outputs and is_saved_output(ctx, target.real):  # the note says read it
                return Decision("allow", grant=target.real)
            return self._decide_outside(tool, kind, target, root, matches, agent)
        if self.mode == "bypassPermissions":
            return ALLOW
        if kind == "edit" and target is not None:
            base = ctx.workspace.base_of(target.real) or root  # the root, or a folder --add-dir gave
            why = own_folder(target.real, base)  # first: it says which of agentcli's or git's own folders
            why = why or (protected(target.lexical.relative_to(base)) if base in target.lexical.parents else "")
            why = (
                why
                or protected(target.real.relative_to(base))
                or protected_paths.in_hooks_folder(target.real, base)
                or home_reason(target.real, base)
            )
            if why:
                return Decision("ask", why, allows=f"run with {BYPASS}")
        ask = self.find_rule("ask", tool.name, matches)
        if ask:
            return Decision("ask", f"it matches the ask rule `{ask.text}`", allows=f"run with {BYPASS}")
        if kind in _FREE[self.mode] or self.find_rule("allow", tool.name, lambda r: matches(r, True), agent):
            return ALLOW
        if kind == "edit" and target is not None:
            base = ctx.workspace.base_of(target.real) or root
            rel = target.real.relative_to(root).as_posix() if base == root else str(target.real)
            return Decision(
                "ask",
                rules=(tool.name,),
                allows="run with --permission-mode acceptEdits",
                allow_rules=(f"{tool.name}({rel})",),
            )
        return Decision("ask", rules=(tool.name,), allows=f"run with {BYPASS}", allow_rules=(tool.name,))

    def _decide_outside(
        self, tool: Tool, kind: str, target: _Target, root: Path, matches: Callable[..., bool], agent: str = MAIN
    ) -> Decision:
        where = f"{target.real} is outside the workspace {root}"
        if target.shown != str(target.real):
            where = f"{target.shown} resolves to {target.real}, which is outside the workspace {root}"
        if self.mode == "bypassPermissions":
            return Decision("allow", grant=target.real)
        if kind != "read":
            return refuse(
                f"{where}; {tool.name} is refused outside the workspace in every permission mode "
                f"but bypassPermissions ({BYPASS})."
            )
        ask = self.find_rule("ask", tool.name, matches)
        if ask:
            return Decision(
                "ask", f"it matches the ask rule `{ask.text}`", allows=f"run with {BYPASS}", grant=target.real
            )
        if self.find_rule("allow", tool.name, lambda r: matches(r, True), agent, outside=True):
            return Decision("allow", grant=target.real)
        folder = target.real if target.is_dir else target.real.parent
        return Decision(
            "ask",
            f"{target.real} is outside the workspace",
            rules=(f"{tool.name}({folder}/**)",),
            allows=f"run with {BYPASS}",
            allow_rules=(f"{tool.name}({target.real})",),
            grant=target.real,
        )

    # ------------------------------------------------------------ helpers

    def rules_for(self, kind: str, tool: str, agent: str = MAIN, outside: bool = False) -> list[Rule]:
        """The rules of one kind for one tool; the allow rules with this session's, and ``agent``'s own, and
        the turn's allowed-tools but for a path ``outside`` the workspace (a skill's allowed-tools never
        take a read past the workspace boundary without a question)."""
        found = self.rules.of(kind, tool)
        if kind == "allow":
            own = self.agent_rules.get(agent, []) if agent != MAIN else []
            turn = [] if outside else self.turn_rules
            found += [rule for rule in [*self.session_rules, *own, *turn] if rule.covers(tool)]
        return found

    def find_rule(
        self, kind: str, tool: str, matches: Callable[[Rule], bool], agent: str = MAIN, outside: bool = False
    ) -> Rule | None:
        return next((rule for rule in self.rules_for(kind, tool, agent, outside) if matches(rule)), None)

    @staticmethod
    def _target(ctx: Ctx, args: dict[str, Any]) -> _Target | None:
        raw = args.get("path")
        path = raw if isinstance(raw, str) and raw.strip() else "."
        workspace = ctx.workspace
        lexical = workspace.lexical(path)
        try:
            real = workspace.locate(path)
        except (OSError, RuntimeError):  # a symlink loop: the tool reports it
            return None
        return _Target(
            shown=path, lexical=lexical, real=real, inside=workspace.contains(real), is_dir=os.path.isdir(real)
        )
