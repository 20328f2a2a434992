"""The engine's small vocabularies: each a ``Literal`` written once, which events, records, tools and front ends
type their fields with, so mypy catches a misspelt status or level. events.py passes each on.
"""

from __future__ import annotations

from typing import Literal, get_args

# A subagent's status, from queued to how it ended; the one list every front end draws from.
Status = Literal["queued", "running", "done", "capped", "timed_out", "failed", "cancelled", "interrupted", "refused"]
STATUSES: tuple[str, ...] = get_args(Status)
FINISHED: frozenset[str] = frozenset(STATUSES) - {"queued", "running"}
# Who a user-role message comes from: the person, the tool results of a turn, a note of the engine's, or
# the results of background subagents, added before the main agent's next model call, or what the person sent
# into the running turn (steered: read after the tool results, see SteerDelivered), or a change in the session the
# front ends already show their own way (state: a permission mode change, said at the request's end, mode_note.py).
# ``interrupt`` is the engine's note to the model that the user stopped its turn: a front end says that in its own
# words, never as the user's.
Origin = Literal["user", "tool_results", "engine", "interrupt", "subagent", "steered", "state"]
StepStatus = Literal["pending", "in_progress", "completed"]  # a plan step's (todo_write)
NoticeLevel = Literal["info", "warning", "error"]
ToolKind = Literal["read", "edit", "exec", "task"]  # what a tool does, as front ends group and show it
# How a tool's calls read for people, as the tool declares it (``Tool.preview``) and its events carry it: a command
# whole below its description, whose output is worth seeing (bash); output worth seeing (bash_output); an edit's
# diff of its old and new strings; a written file's whole content; a search's folder; a call that starts a subagent,
# whose own lines tell its story (task); "": its arguments as they are.
Preview = Literal["", "command", "output", "edit", "write", "search", "delegate"]
# The permission modes (core/policy/permissions.py says what each runs without asking) and the sandbox's settings
# (core/system/sandbox.py): here, so that reading or checking a setting loads neither module.
MODES: tuple[str, ...] = ("default", "acceptEdits", "plan", "bypassPermissions")
SANDBOX_MODES: tuple[str, ...] = ("auto", "on", "off")
# The permission rule lists, checked in this order (core/policy/rules.py): here, so that reading a settings file
# loads neither the rules nor the bash parser they need.
LISTS: tuple[str, ...] = ("deny", "ask", "allow")
ShellStatus = Literal["running", "exited", "killed"]  # a background shell's (bash with run_in_background)
