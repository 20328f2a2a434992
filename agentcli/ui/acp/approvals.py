"""Questions for the user as ``session/request_permission``: a tool call's approval, and workspace trust.

An approval offers allow once, allow always (the rule agentcli would save, as the TUI's "Always" saves it),
reject once and reject always (the same rule, denied for the rest of the session). A call whose reason
needs a yes every time (a protected path) has no rule to remember, so it offers the two "once" answers.
The client cancelling the question (``cancelled``) is a no.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from acp import schema as s

from ...core.door import SessionSurface
from ...core.events import ALLOW_ALWAYS, ALLOW_ONCE, DENY, ApprovalRequested
from . import updates

ALLOW, ALWAYS, REJECT, NEVER = "allow_once", "allow_always", "reject_once", "reject_always"
TRUST_CALL = "agentcli-workspace-trust"


def options(event: ApprovalRequested) -> list[s.PermissionOption]:
    rules = ", ".join(event.rules)
    offered = [s.PermissionOption(option_id=ALLOW, name="Allow once", kind="allow_once")]
    if event.rules:
        offered.append(s.PermissionOption(option_id=ALWAYS, name=f"Always allow {rules}", kind="allow_always"))
    offered.append(s.PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"))
    if event.rules:
        offered.append(
            s.PermissionOption(option_id=NEVER, name=f"Always reject {rules} (this session)", kind="reject_always")
        )
    return offered


def question(event: ApprovalRequested, call_id: str, root: Path, told: bool) -> s.ToolCallUpdate:
    """The call the question is about (``told``: the client already has it, with its title, which stays); an
    edit's change goes with it as ACP diff content (the update's content replaces the call's, which held it),
    the description and reason as text. A call the client was not told of gets its title here."""
    lines = [event.description if event.description else ""]
    if event.reason:
        lines.append(f"Needs a yes: {event.reason}.")
    diff = updates.edit_diff(event.preview, event.input, root)
    if event.diff and not diff:  # a change ACP's diff cannot carry: the hunk as text
        lines.append("\n".join(event.diff))
    text = "\n".join(line for line in lines if line)
    content = [*(diff or []), *([updates.text_content(text)] if text else [])]
    return s.ToolCallUpdate(
        tool_call_id=call_id,
        status="pending",
        raw_input=event.input,
        title=None if told else event.tool,
        content=content or None,
    )


async def ask_permission(
    conn: Any, session_id: str, session: SessionSurface, event: ApprovalRequested, call_id: str | None, root: Path
) -> None:
    """Ask the client about the call ``call_id`` (None: one it was not told of), and resolve the engine's
    question with the answer."""
    future = event.future
    if future is None or future.done():
        return
    call = question(event, call_id or f"approval-{id(event)}", root, told=call_id is not None)
    try:
        response = await conn.request_permission(session_id=session_id, tool_call=call, options=options(event))
        chosen = response.outcome.option_id if isinstance(response.outcome, s.AllowedOutcome) else REJECT
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the client failed to answer: a no, said on stderr
        print(f"agentcli: the permission request failed ({type(exc).__name__}: {exc}); denied.", file=sys.stderr)
        chosen = REJECT
    if chosen == NEVER:
        session.deny_for_session(event.rules)
    if not future.done():
        future.set_result({ALLOW: ALLOW_ONCE, ALWAYS: ALLOW_ALWAYS}.get(chosen, DENY))


async def ask_trust(conn: Any, session_id: str, request: Any) -> bool | None:
    """The workspace trust question, before the workspace's own settings act. True, False, or None
    (cancelled: nothing is remembered, and the settings stay ignored)."""
    text = "\n".join(
        [
            f"Files in {request.root} ask for more than agentcli allows by default:",
            *(f"  {line}" for line in request.lines(mark_new=True)),
            "Anyone who wrote this repository wrote them; trust it only if you trust them. No: agentcli "
            "runs with these parts ignored (what narrows permissions still applies).",
        ]
    )
    call = s.ToolCallUpdate(
        tool_call_id=TRUST_CALL,
        title="Trust this workspace?",
        kind="other",
        status="pending",
        content=[updates.text_content(text)],
    )
    try:
        response = await conn.request_permission(
            session_id=session_id,
            tool_call=call,
            options=[
                s.PermissionOption(option_id="trust", name="Trust this workspace", kind="allow_always"),
                s.PermissionOption(option_id="distrust", name="Do not trust it", kind="reject_always"),
            ],
        )
    except Exception as exc:
        print(f"agentcli: the trust question failed ({type(exc).__name__}: {exc}); not trusted.", file=sys.stderr)
        return None
    if not isinstance(response.outcome, s.AllowedOutcome):
        return None
    return response.outcome.option_id == "trust"
