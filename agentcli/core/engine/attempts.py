"""Best-of-N attempts: ``task`` with ``attempts: N`` runs N isolated children on one brief and compares them.

Each attempt is a child in its own git worktree (``isolation: worktree``), optionally on a model of its own
(``attempt_models``). When all have ended, agentcli itself runs the brief's ``check`` command in each worktree,
through the bash tool (so in the OS sandbox, under the same permission rules and questions as any command), and
puts the worktree back at the child's saved work afterwards, so what the check left never reaches a merge. The
main agent gets one comparison (status, diff stat, check result, receipt, tokens, cost, time per attempt) and is
asked to recommend one; the user decides: ``/merge sa-N`` takes it, ``/discard`` drops the others, and a front end
asks about those left when the session ends (``Session.unmerged_attempts``). The same comparison goes to the
front ends as one ``AttemptsCompared`` event.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING, Any

from ..content import quoted
from ..errors import ToolError
from ..events import AttemptsCompared
from ..storage import worktrees
from ..system.workspace import Workspace
from ..tool_facts import KNOWN
from ..units import quoted as capped

if TYPE_CHECKING:
    from ..comparison import Attempt
    from ..tools.base import ToolContext
    from .subagent_record import SubagentRecord
    from .subagents import Subagents

MIN, MAX = 2, 4
CHECK_TAIL = 1_200  # characters of a check's output kept for the comparison
ANSWER_CAP = 1_500  # characters of each attempt's answer in the main agent's result
CHECK_NOTE = (
    "# Check\nYou are one of {n} attempts at this errand, each in its own worktree. When you are done, "
    "agentcli runs `{check}` in your worktree and compares the attempts by it: run it yourself before you "
    "answer, and leave the worktree as it should be merged."
)
ASK = (
    "Recommend one attempt to the user in a line or two, and why (its check, its diff, its receipt). Do not merge "
    "any yourself: the user takes one with /merge sa-N and drops the rest with /discard sa-N (asked when the "
    "session ends otherwise)."
)


def refusal(args: dict[str, Any]) -> str:
    """Why a task call's ``attempts`` cannot run as given ("" when it can)."""
    n = args.get("attempts")
    if not isinstance(n, int) or isinstance(n, bool) or not MIN <= n <= MAX:
        return f"attempts must be a whole number from {MIN} to {MAX}."
    if args.get("resume"):
        return "attempts start new subagents; leave out resume."
    if args.get("run_in_background"):
        return "attempts run in the foreground, since their comparison is your result; leave out run_in_background."
    return ""


async def run(subagents: Subagents, args: dict[str, Any], prompt: str, files: list[str], ctx: ToolContext) -> str:
    """Run the attempts, check each, emit the comparison and return the main agent's result."""
    if why := refusal(args):
        raise ToolError(why)
    n, check = int(args["attempts"]), str(args.get("check") or "").strip()
    models = [str(m) for m in args.get("attempt_models") or [] if str(m).strip()] or (
        [str(args["model"])] if args.get("model") else []
    )  # each its own, or the task call's for all
    brief = prompt + ("\n\n" + CHECK_NOTE.format(n=n, check=check) if check else "")
    before = set(subagents.records)
    outcomes = await asyncio.gather(
        *(
            subagents.run(
                f"{args['description']} ({i + 1}/{n})",
                brief,
                args.get("subagent_type"),
                ctx,
                isolation="worktree",
                files=files,
                token_budget=args.get("token_budget"),
                cost_budget=args.get("cost_budget"),
                model=models[i % len(models)] if models else None,
                effort=args.get("effort"),
            )
            for i in range(n)
        ),
        return_exceptions=True,
    )
    started = sorted(
        (r for r in subagents.records.values() if r.id not in before and r.tool_use_id == ctx.tool_use_id),
        key=lambda r: int(r.id.removeprefix("sa-")),
    )  # by number: they are recorded as their worktrees come
    if not started:
        failure = next((o for o in outcomes if isinstance(o, BaseException)), None)
        raise ToolError(quoted(str(failure)) if failure else "No attempt could start.")  # git's words, quoted
    compared = [await compare(record, check, ctx, subagents) for record in started]
    ctx.emit(
        AttemptsCompared(
            description=str(args["description"]), check=check, attempts=tuple(compared), agent_id=ctx.agent_id
        )
    )
    answers = [
        f"## {record.id}\n{capped((record.report.text if record.report else record.result) or '(no answer)', ANSWER_CAP)}"
        + (f"\nCheck output (last lines):\n{a.check_output}" if a.check_output else "")
        for record, a in zip(started, compared, strict=True)
    ]
    head = f'{len(started)} attempts at "{args["description"]}", each in its own worktree' + (
        f", each checked with `{check}` by agentcli:" if check else " (no check was given):"
    )
    from ..comparison import table_text

    return quoted("\n\n".join([head, table_text(compared), *answers, ASK]))


async def compare(record: SubagentRecord, check: str, ctx: ToolContext, subagents: Subagents) -> Attempt:
    """One attempt's row: its worktree's diff stat, and its check's result (run here, in its worktree)."""
    from ..comparison import Attempt  # (the comparison's table loads with the first best-of-N errand)

    report = record.report
    row = Attempt(
        id=record.id,
        status=record.status,
        model=record.model,
        mark=report.mark if report else "",
        tool_calls=report.tool_calls if report else 0,
        tokens=record.usage.total_tokens,
        cost=record.usage.cost,
        seconds=record.seconds,
    )
    place = subagents.worktree_place
    try:
        worktree = await asyncio.to_thread(
            worktrees.find, ctx.workspace.root, record.id, place.session if place else None
        )
        found = await asyncio.to_thread(worktrees.changes, worktree)
        tip = await asyncio.to_thread(worktrees.save_work, worktree)
    except worktrees.WorktreeError:  # it changed nothing (its worktree went when it ended) or its worktree is gone
        return dataclasses.replace(
            row,
            diff="no changes",
            check="not run" if check else "",
            check_output="it changed no files" if check else "",
        )
    row = dataclasses.replace(
        row,
        diff=worktrees.summary(found),
        files=len(found),
        added=sum(c.added or 0 for c in found),
        removed=sum(c.removed or 0 for c in found),
    )
    if not check:
        return row
    own = dataclasses.replace(
        ctx,
        workspace=Workspace.at(worktree.root, branch=worktree.branch),
        checkpoints=None,
        agent_id=record.id,
        agent_description=record.description,
        depth=ctx.depth + 1,
        subagents=None,
        parent_tool_use_id=ctx.tool_use_id,
        tool_use_id=f"{ctx.tool_use_id}_check_{record.id.replace('-', '')}",
    )
    left = ""
    try:
        outcome = await subagents.tools.call(
            KNOWN.role("commands"), {"command": check, "description": f"{record.id}'s check"}, own
        )
    finally:
        try:
            await asyncio.to_thread(worktrees.reset_to, worktree, tip)  # what the check left never reaches a merge
        except worktrees.WorktreeError as exc:
            left = f"\n(What the check left in the worktree could not be dropped: {exc})"
    state = "not run" if outcome.denied else "failed" if outcome.is_error else "passed"
    return dataclasses.replace(row, check=state, check_output=outcome.output.strip()[-CHECK_TAIL:] + left)
