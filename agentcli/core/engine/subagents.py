"""The task tool: subagents with a fresh history, budgets, a parallel limit and a final summary.

A subagent is the same ``Agent`` as the main one, with its own state. Its events go
to the same sink tagged with its id; its messages never reach the parent. The parent
gets only the child's final text and one footer line.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from typing import Any

from ..content import agentcli_note
from ..errors import ToolError
from ..events import (
    Event,
    Notice,
    ReplyStarted,
    Sink,
    SubagentCancelling,
    SubagentFinished,
    SubagentResultDelivered,
    SubagentStarted,
    SubagentSteered,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
    UsageUpdated,
)
from ..model.catalogue import resolve_model
from ..model.llm import LLM, LLMError
from ..storage import worktrees
from ..system.workspace import Workspace
from ..tools import ToolRegistry
from ..tools.base import ToolContext
from ..units import dollars
from .agents import AgentType
from .compaction import Ledger
from .context import subagent_system_prompt
from .loop import Agent
from .skill_tool import SkillTool
from .skills import catalog
from .steering import Steers
from .subagent_finish import WIND_DOWN, WrapUp, ask_wrap_up, boundary, reask, summarize, user_cancelled
from .subagent_record import Budgets, SubagentRecord, not_an_answer, report_of, report_so_far

WORKTREE_NOTE = (
    "# Isolation\nYou work in your own git worktree of the project, on a branch of your own, "
    "which holds the user's uncommitted changes too. Edit freely: nothing you change reaches "
    "the user's files until they review and merge it."
)


def _narrowest(*budgets: float | None) -> Any:
    """The smallest of the budgets that are set (the task call's, its type's); None when none is."""
    return min((b for b in budgets if b), default=None)


class Subagents:
    """Starts, limits, cancels and remembers the subagents of one session."""

    def __init__(
        self,
        *,
        llm: LLM,
        tools: ToolRegistry,
        agent_types: dict[str, AgentType],
        budgets: Budgets,
        type_settings: dict[str, dict[str, Any]],
        compact_threshold: float,
        task_models: list[str],
    ) -> None:
        self.llm = llm
        self.task_models = task_models  # what task's ``model`` may be
        self.tools = tools  # the session's own registry: MCP tools join it once their server is ready
        self.worktree_place: worktrees.Place | None = None  # where isolated children's worktrees go
        self.agent_types = agent_types
        self.budgets = budgets
        self.type_settings = type_settings
        self.compact_threshold = compact_threshold
        self.records: dict[str, SubagentRecord] = {}
        self.next_number = 1
        self._slots = asyncio.Semaphore(self.budgets.max_parallel)
        self._clashes: set[tuple[frozenset[str], str]] = set()  # (two children, a file) already warned about
        self.pending: list[SubagentRecord] = []  # background children whose result the main agent has not read
        self.closing = False  # the session is closing: children stopped now end as "interrupted"
        self.budget_usd: float | None = None  # the session's cost budget (--max-budget-usd), children included
        self.spent: Callable[[], float] = lambda: self.usage.cost or 0.0  # the session sets: main agent too
        self.transcript_of: Callable[[str], str] = lambda child: ""  # a child's transcript file (the session sets)

    @property
    def usage(self) -> Usage:
        total = Usage()
        for record in self.records.values():
            total = total + record.usage
        return total

    @property
    def tokens_kept_out(self) -> int:
        return sum(record.tokens_kept_out for record in self.records.values())

    def usage_by_type(self) -> dict[str, tuple[int, Usage]]:
        """Per agent type: how many children of it ran, and their usage summed."""
        kinds: dict[str, tuple[int, Usage]] = {}
        for record in self.records.values():
            count, usage = kinds.get(record.type, (0, Usage()))
            kinds[record.type] = (count + 1, usage + record.usage)
        return kinds

    def is_running(self, agent_id: str) -> bool:
        record, _ = self._find(agent_id)
        return record is not None and record.running

    def _find(self, agent_id: str) -> tuple[SubagentRecord | None, str]:
        """The child ``agent_id`` names ("sa-3", or "3"); or None, and why not, in one sentence."""
        record = self.records.get(f"sa-{agent_id}" if agent_id.isdigit() else agent_id)
        if record is not None:
            return record, ""
        known = ", ".join(self.records)
        return None, f"There is no subagent {agent_id} in this session" + (
            f"; its subagents are {known}." if known else "; none has run yet."
        )

    @property
    def running(self) -> list[SubagentRecord]:
        return [record for record in self.records.values() if record.running]

    @property
    def background_running(self) -> list[SubagentRecord]:
        return [record for record in self.running if record.background]

    def cancel_all(self) -> list[str]:
        """/stop: cancel every running child (each still sends its parent a summary); the ids cancelled."""
        return [record.id for record in self.running if self.cancel(record.id)]

    async def interrupt_all(self) -> None:
        """The session is closing: stop every child now, without a summary; each ends ``interrupted``."""
        self.closing = True
        tasks = [record.task for record in self.running if record.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def wait_background(self) -> None:
        """Until one background child ends (at once when none is running)."""
        tasks = [record.task for record in self.background_running if record.task is not None]
        if tasks:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)

    def take_results(self, emit: Sink) -> list[dict[str, Any]]:
        """The results of background children that finished since the main agent's last model call, as
        content for one user message; each is announced with a SubagentResultDelivered event first."""
        arrived, self.pending = self.pending, []
        content = []
        for record in arrived:
            emit(SubagentResultDelivered(id=record.id, status=record.status, description=record.description))
            content.append(agentcli_note((record.report or report_of(record)).as_message(record.description)))
        return content

    @property
    def winding_down(self) -> bool:
        """The session nears its cost budget: running children wrap up, and no new child starts."""
        return self.budget_usd is not None and self.spent() >= WIND_DOWN * self.budget_usd

    def steer(self, agent_id: str, text: str, source: str = "user") -> str:
        """Queue ``text`` for a running child's next turn boundary, marked as from ``source`` ("user" or
        "main agent"); "" when queued, else why not, in one sentence."""
        record, why = self._live(agent_id)
        if record is None:
            return why
        if why := record.steers.add(text, source):
            return why
        if record.emit is not None:
            record.emit(
                SubagentSteered(
                    id=record.id,
                    source=source,
                    text=text.strip(),
                    agent_id=record.id,
                    parent_tool_use_id=record.tool_use_id,
                )
            )
        return ""

    def wrap_up(self, agent_id: str, source: str = "user") -> str:
        """Ask a running child to finish now: at its next turn boundary it answers, without tools, with what
        it has. "" when asked, else why not, in one sentence."""
        record, why = self._live(agent_id)
        if record is None:
            return why
        ask_wrap_up(record, f"time: the {source} asked you to wrap up now")
        return ""

    def _live(self, agent_id: str) -> tuple[SubagentRecord | None, str]:
        """A running child that still takes messages; or None, and why not."""
        record, why = self._find(agent_id)
        if record is None:
            return None, why
        if not record.running:
            return None, (
                f"{record.id} is not running ({record.status}); continue it with task resume to give it more to do."
            )
        if record.wrap_up or record.cancel_requested:
            return None, f"{record.id} is already finishing: it is summing up what it found."
        return record, ""

    def cancel(self, agent_id: str) -> bool:
        """Stop one subagent; its parent still gets a summary of what it did."""
        record = self.records.get(agent_id)
        if record is None or record.task is None or record.task.done() or record.cancel_requested:
            return False
        record.cancel_requested = True
        record.task.cancel()
        if record.emit is not None:  # the front ends say "cancelling…" until the summary is back
            record.emit(SubagentCancelling(id=record.id, agent_id=record.id, parent_tool_use_id=record.tool_use_id))
        return True

    async def run(
        self,
        description: str,
        prompt: str,
        type_name: str | None,
        ctx: ToolContext,
        *,
        background: bool = False,
        resume: str | None = None,
        isolation: str | None = None,
        files: list[str] | None = None,
        token_budget: int | None = None,
        cost_budget: float | None = None,
        agent_type: AgentType | None = None,
        model: str | None = None,
        effort: str | None = None,
    ) -> tuple[str, bool]:
        """Run one subagent, or continue the finished child ``resume`` with ``prompt`` as its next message.

        Returns the text for the parent and whether it is an error. In the ``background``, it returns at
        once; the result reaches the main agent later, through ``take_results``. ``isolation="worktree"``
        (or a type that says so) runs it in its own git worktree; raises WorktreeError, a ToolError, when
        none can be made. ``token_budget`` and ``cost_budget`` narrow its type's; at one it wraps up.
        ``agent_type``: a type of its own, not one the task tool lists (a reviewer of /review).
        ``model`` (an alias or an id, within ``task_models``) and ``effort`` (one of EFFORT_ORDER) are this child's
        own, over its type's model and the session's effort; a resumed child keeps its own unless given new ones."""
        if self.winding_down:
            raise ToolError(
                f"The session has spent {dollars(self.spent())} of its {dollars(self.budget_usd or 0.0)} "
                "budget (--max-budget-usd), so no new subagent starts: finish with what you have."
            )
        worktree, chosen = None, self.chosen_model(model) if model else ""
        if resume is not None:
            record, agent_type = self.resumable(resume, type_name)
            record.tool_use_id = ctx.tool_use_id
            if record in self.pending:  # its earlier result is superseded by this run's
                self.pending.remove(record)
        else:
            type_name = agent_type.name if agent_type else type_name or "general-purpose"
            agent_type = agent_type or self.agent_types[type_name]
            record = SubagentRecord(
                id=f"sa-{self.next_number}",
                type=type_name,
                description=description,
                prompt=prompt,
                tool_use_id=ctx.tool_use_id,
                max_turns=self.max_turns(agent_type),
                model=resolve_model(model) if model else "",
            )
            self.next_number += 1
            if (isolation or agent_type.isolation) == "worktree":
                worktree = await self._isolate(record, ctx)
            self.records[record.id] = record
        record.background, record.named_files = background, list(files or [])
        record.token_budget = _narrowest(token_budget, agent_type.token_budget) or 0
        record.cost_budget = _narrowest(cost_budget, agent_type.cost_budget) or 0.0
        if chosen or not record.model:  # a resume keeps the model it ran on, unless given another
            typed = self.type_settings.get(agent_type.name, {}).get("model") or agent_type.model
            record.model = chosen or (self.llm.model if typed == "inherit" else resolve_model(typed))
            record.own_model = record.model != self.llm.model
        record.effort = effort or record.effort
        record.task = asyncio.create_task(
            self._run(record, agent_type, ctx, description, prompt, worktree), name=record.id
        )
        if background:  # not awaited: interrupting the parent's turn leaves it running
            return (
                f"{record.id} started in the background. Its result arrives as a message when it "
                "finishes; go on with other work meanwhile, or end your turn to wait for it."
            ), False
        await record.task  # cancelling the parent cancels this child too
        return (record.report or report_of(record)).for_parent(), record.status == "failed"

    async def _isolate(self, record: SubagentRecord, ctx: ToolContext) -> worktrees.Worktree:
        place = self.worktree_place
        if place is None:
            raise worktrees.WorktreeError("isolation: worktree is not available in this session.")
        worktree = await asyncio.to_thread(
            worktrees.create, ctx.workspace.root, place.folder, place.session, record.id, place.session_file
        )
        record.worktree = worktree.branch
        return worktree

    def chosen_model(self, name: str) -> str:
        """The model id a task call's ``model`` names (an alias or an id), when ``task_models`` lets the main
        agent choose it; ToolError saying what it may choose otherwise."""
        wanted = resolve_model(name)
        if name.strip().lower() in (m.lower() for m in self.task_models) or wanted in (
            resolve_model(m) for m in self.task_models
        ):
            return wanted
        if not self.task_models:
            raise ToolError(
                "This session lets you choose no model for a subagent (the task_models setting is "
                "empty): leave out model, and it runs on its type's."
            )
        raise ToolError(
            f"A subagent may not run on {name!r} in this session; model may be one of "
            f"{', '.join(self.task_models)} (the task_models setting), or leave it out for its type's."
        )

    def resumable(self, agent_id: str, type_name: str | None) -> tuple[SubagentRecord, AgentType]:
        """The child that ``task resume`` may continue, and its type; ToolError saying why not."""
        record, why = self._find(agent_id)
        if record is None:
            raise ToolError(why)
        if record.worktree:
            raise ToolError(
                f"{agent_id} worked in its own git worktree (branch {record.worktree}), which a resume "
                "does not reopen yet; start a new subagent with isolation: worktree instead."
            )
        if record.running:
            raise ToolError(
                f"{agent_id} is still running; its result arrives when it finishes, and it can be resumed after that."
            )
        if type_name and type_name != record.type:
            raise ToolError(
                f"{agent_id} is a {record.type} subagent, and a resumed child keeps its type; leave out subagent_type."
            )
        agent_type = self.agent_types.get(record.type)
        if agent_type is None:
            raise ToolError(f"{agent_id} was a {record.type} subagent, and that agent type no longer exists.")
        return record, agent_type

    def max_turns(self, agent_type: AgentType) -> int:
        return min(agent_type.max_turns or self.budgets.max_turns, self.budgets.max_turns)

    def timeout(self, agent_type: AgentType) -> float:
        return min(agent_type.timeout or self.budgets.timeout, self.budgets.timeout)

    async def _run(
        self,
        record: SubagentRecord,
        agent_type: AgentType,
        parent: ToolContext,
        description: str,
        prompt: str,
        worktree: worktrees.Worktree | None = None,
    ) -> None:
        edits: dict[str, str] = {}  # tool_use id -> path, for edit calls in flight
        workspace = Workspace.at(worktree.root, branch=worktree.branch) if worktree is not None else parent.workspace

        def emit(event: Event) -> None:
            if not isinstance(event, ReplyStarted):  # a wait that is over: no part of its transcript
                record.events.append(event)
            if isinstance(event, UsageUpdated):  # live: /cost and the session's budget count a running child
                record.usage = event.total
            if isinstance(event, ToolCallStarted) and self._is_edit(event.name):
                edits[event.id] = str(event.input.get("path") or "")
            if isinstance(event, ToolCallFinished):
                record.tool_output_chars += len(event.output)
            parent.emit(event)
            if isinstance(event, ToolCallFinished):
                path = edits.pop(event.id, "")
                if path and not event.is_error:
                    self._changed(record, path, parent, workspace)

        record.emit = emit
        record.started = time.monotonic()
        record.segments += 1
        record.status, record.result, record.cancel_requested, record.cancel_absorbed = "queued", "", False, False
        record.answer_mark, record.report = "", None  # this run's report is built when it ends
        record.wrap_up, record.wrapped_up, record.warned, record.steers = "", False, False, Steers()
        turns_before, seconds_before = record.turns, record.seconds
        emit(
            SubagentStarted(
                id=record.id,
                subagent_type=record.type,
                description=description,
                prompt=prompt,
                max_turns=record.max_turns,
                background=record.background,
                segment=record.segments,
                token_budget=record.token_budget,
                cost_budget=record.cost_budget,
                model=record.model,
                effort=record.effort,
                agent_id=record.id,
                parent_tool_use_id=record.tool_use_id,
            )
        )
        agent: Agent | None = None
        try:
            # A child in its own worktree changes nothing of the main tree: no checkpoints of it to keep.
            own = (
                dataclasses.replace(parent, workspace=workspace, checkpoints=None)
                if worktree
                else dataclasses.replace(parent, workspace=workspace)
            )
            agent = self._agent(record, agent_type, own, emit)
            agent.ledger = Ledger.from_dict(record.ledger)
            agent.inbox = lambda: boundary(record, agent, self.budget_usd if self.winding_down else None)
            agent.stop_fields = lambda answer: {  # what a SubagentStop hook reads: the receipt of the run so far
                "agent_transcript_path": self.transcript_of(record.id),
                "receipt": report_so_far(record, agent, answer, turns_before).to_dict(),
            }
            hooks = agent.ctx.hooks
            added = await hooks.subagent_start() if hooks else ()
            timeout = self.timeout(agent_type)
            cut_off = ""  # why the child stopped before its own final answer, if it did
            try:
                async with self._slots:  # at most max_parallel children run at once; the rest wait here
                    record.status = "running"
                    async with asyncio.timeout(timeout):
                        result = await agent.run(prompt, added)
                record.status, record.result = result.status, result.text
                if result.status == "done" and not_an_answer(result.text):
                    record.result = await reask(agent, record)
                if result.status == "capped":
                    cut_off = f"turns ({record.max_turns})"
            except WrapUp as wrap:
                record.status, cut_off, record.wrapped_up = "done", wrap.reason, True
            except TimeoutError:
                record.status, cut_off = "timed_out", f"time ({timeout:.0f} s)"
            except LLMError as exc:
                record.status, record.result = "failed", f"The subagent failed: {exc}"
                if exc.overflow:
                    cut_off = "context"
            except asyncio.CancelledError:
                record.status = "interrupted" if self.closing else "cancelled"
                if not user_cancelled(record):  # the parent itself is being cancelled, or the session closes
                    record.result = agent.last_text()
                    raise
                record.result = "Cancelled by the user before it started."
                if agent.turns:
                    cut_off = "time: the user cancelled you"
            if cut_off:
                record.result = await summarize(agent, cut_off, record)
            if worktree is not None:  # what it changed in its worktree, in a few lines (background too)
                try:
                    note = await asyncio.to_thread(worktrees.finish, worktree)
                except worktrees.WorktreeError as exc:
                    note = str(exc)
                record.result = "\n\n".join(part for part in (record.result, note) if part)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bad setting or a bug must not leave the child stuck as "running"
            record.status, record.result = "failed", f"The subagent could not run: {type(exc).__name__}: {exc}"
        finally:
            if agent is not None:
                record.turns, record.usage, record.messages = turns_before + agent.turns, agent.usage, agent.messages
                record.ledger = agent.ledger.to_dict()
            record.seconds = seconds_before + time.monotonic() - record.started
            record.run_turns, record.run_seconds = record.turns - turns_before, record.seconds - seconds_before
            record.report = report_of(record)
            if record.background and not self.closing:
                self.pending.append(record)  # before the event: a front end that sees it finds the result waiting
            emit(
                SubagentFinished(
                    id=record.id,
                    status=record.status,
                    result=record.result,
                    turns=record.turns,
                    usage=record.usage,
                    seconds=record.seconds,
                    summarized=record.summarized,
                    report=record.report,
                    agent_id=record.id,
                    parent_tool_use_id=record.tool_use_id,
                )
            )

    def _agent(
        self, record: SubagentRecord, agent_type: AgentType, parent: ToolContext, emit: Callable[[Event], None]
    ) -> Agent:
        """The child: a fresh history, its type's tools and model, and events tagged with its id."""
        ctx = dataclasses.replace(
            parent,
            agent_id=record.id,
            agent_description=record.description,
            parent_tool_use_id=record.tool_use_id,
            depth=parent.depth + 1,
            subagents=None,
            emit=emit,
            tool_use_id="",
            hooks=parent.hooks.for_agent(record.id, record.type, self.transcript_of(record.id))
            if parent.hooks is not None
            else None,
        )
        tools = agent_type.select(self.tools)
        skill = tools.get(SkillTool.name)
        system = subagent_system_prompt(
            parent.workspace,
            agent_type,
            mode=parent.permissions.mode,
            interactive=parent.permissions.interactive,
            max_turns=record.max_turns,
            timeout=self.timeout(agent_type),
            skills=catalog(skill.skills.values()) if isinstance(skill, SkillTool) else "",
        )
        return Agent(
            llm=self.llm,
            tools=tools,
            ctx=ctx,
            system=f"{system}\n\n{WORKTREE_NOTE}" if record.worktree else system,
            max_turns=record.max_turns,
            model=record.model or None,
            effort=record.effort or None,
            messages=list(record.messages),
            usage=record.usage,  # a resume goes on from its history
            compact_threshold=self.compact_threshold,
        )

    def _is_edit(self, tool_name: str) -> bool:
        tool = self.tools.get(tool_name)
        return tool is not None and tool.kind == "edit"

    def _changed(self, record: SubagentRecord, path: str, parent: ToolContext, workspace: Workspace) -> None:
        """Remember a file a child changed; warn once when a child that ran alongside changed it too.

        That child may have finished already: a write undoing a finished sibling's edit is a clash too.
        Children in worktrees of their own never clash.
        """
        try:
            shown = workspace.relative(workspace.locate(path))
        except (OSError, RuntimeError):
            shown = path
        if shown not in record.changed_files:
            record.changed_files.append(shown)
        for other in self.records.values():
            if record.worktree or other.worktree:
                continue
            clash = (frozenset((other.id, record.id)), shown)
            ran_alongside = not other.seconds or other.started + other.seconds >= record.started  # 0: not ended
            if other is record or not ran_alongside or shown not in other.changed_files or clash in self._clashes:
                continue
            self._clashes.add(clash)
            parent.emit(
                Notice(
                    level="warning",
                    text=(
                        f"{other.id} and {record.id} both changed {shown} while running at the same time; "
                        "check that one did not undo the other's edits."
                    ),
                )
            )
