"""Hooks in Claude Code's settings format: commands that run at fixed points of a session.

    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "…", "timeout": 30}]}]}

Each command runs with ``/bin/sh -c`` in the workspace root, in a process group of its own, with
bash's scrubbed environment (plus ``CLAUDE_PROJECT_DIR``), and gets the event as one JSON object on
stdin, with Claude Code's field names (``session_id``, ``hook_event_name``, ``tool_name``,
``tool_input``, …) and tool names (``Bash``, ``Read``, …). What it answers:

- exit 0: fine. Its stdout may be JSON: ``{"decision": "block", "reason": …}``, or
  ``{"hookSpecificOutput": {"permissionDecision": "allow"|"deny"|"ask", "permissionDecisionReason": …,
  "additionalContext": …}}``, or for ``PermissionRequest`` ``{"hookSpecificOutput": {"decision":
  {"behavior": "allow"|"deny", "message": …, "updatedInput": …, "interrupt": …}}}``. For
  ``UserPromptSubmit`` and ``SessionStart``, plain stdout is context for the model.
- exit 2: block where the event can be blocked (tool events, UserPromptSubmit, Stop, SubagentStop,
  Elicitation); its stderr goes to the model (to the user for ``UserPromptSubmit``). Elsewhere (``observe``)
  the stderr is shown to the user and nothing else changes.
- any other exit, a crash or a timeout: a warning; the run goes on as if the hook had said nothing.

Every event's input carries ``agent_id`` and ``agent_type`` when a subagent's work raised it (``for_agent``);
docs/hooks.md lists each event with its fields.

A hook that outlives its ``timeout`` (default 60 s) is killed with its whole process group.
Hooks from a workspace's own files reach this module only when the workspace is trusted (config.py),
and run in the OS sandbox as bash does (``core/system/sandbox.py``); config.py marks their groups with
``WORKSPACE_MARK``. The user's own hooks run outside it.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..events import Notice, Sink
from ..tool_facts import KNOWN  # Claude Code's names, which a hook's matcher and its tool_name see

if TYPE_CHECKING:
    from ..system.sandbox import Sandbox

EVENTS = (
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
    "Elicitation",
)
TOOL_EVENTS = ("PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure")  # matched on the tool's name
# What the matcher of the other events is matched against, as Claude Code's: the MCP server, the agent type, the
# session's source or reason, the compaction's trigger, the notification's type. UserPromptSubmit, Stop: no matcher.
MATCHED = ("Elicitation", "SubagentStart", "SubagentStop", "SessionStart", "SessionEnd", "PreCompact", "Notification")
DEFAULT_TIMEOUT = 60.0
OUTPUT_CAP = 10_000  # characters of a hook's stdout or stderr that are kept
BLOCK = 2
WORKSPACE_MARK = "agentcli_from_workspace"  # set by config.py on the hook groups of a workspace's own files
PLUGIN_ROOT_MARK = "agentcli_plugin_root"  # on a plugin's hook groups (engine/plugins.py): its folder


def file_path(tool: str) -> bool:
    """Whether Claude Code calls the tool's path argument file_path (its file tools), as the tool declares."""
    facts = KNOWN.get(tool)
    return facts is not None and facts.claude_file_path


class HookConfigError(ValueError):
    """A hooks table is malformed; the message says where."""


# A hook a host program runs itself (the Agent SDK's Python callbacks): it gets the event's fields, as a
# command's stdin would, and answers what a command would print as JSON.
Callback = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Hook:
    """One hook of the hooks table: the event it runs on, its command (or a host's callback) and its matcher."""

    event: str
    command: str  # for a callback hook: its name, for messages
    timeout: float = DEFAULT_TIMEOUT
    matcher: str = ""  # a regular expression on the tool name; "" or "*" matches every tool
    workspace: bool = False  # from the workspace's own files: runs in the OS sandbox
    callback: Callback | None = field(default=None, compare=False)  # run instead of the command
    plugin_root: str = ""  # a plugin's hook: its folder, readable in the sandbox and given as CLAUDE_PLUGIN_ROOT

    def matches(self, tool: str) -> bool:
        """``tool``: the tool's name, or what ``MATCHED`` says the event's matcher is matched against."""
        if self.event not in (*TOOL_EVENTS, *MATCHED) or self.matcher in ("", "*"):
            return True
        names = (KNOWN.claude_name(tool), tool) if self.event in TOOL_EVENTS else (tool,)
        try:
            pattern = re.compile(self.matcher)
        except re.error:
            return self.matcher in names
        return any(pattern.fullmatch(name) for name in names)


def parse_hooks(table: Any, where: str) -> list[Hook]:
    """The hooks of one settings file's ``hooks`` table; HookConfigError with one sentence if malformed."""
    if not isinstance(table, dict):
        raise HookConfigError(f"{where}: 'hooks' must be a table of events such as PreToolUse")
    hooks: list[Hook] = []
    for event, groups in table.items():
        if event not in EVENTS:
            raise HookConfigError(f"{where}: unknown hook event '{event}' (known: {', '.join(EVENTS)})")
        if not isinstance(groups, list):
            raise HookConfigError(f"{where}: hooks.{event} must be a list of {{matcher, hooks}} entries")
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                raise HookConfigError(f"{where}: each entry of hooks.{event} needs a 'hooks' list")
            matcher = group.get("matcher") or ""
            if not isinstance(matcher, str):
                raise HookConfigError(f"{where}: the matcher of a hooks.{event} entry must be text")
            for item in group["hooks"]:
                if not isinstance(item, dict) or item.get("type", "command") != "command":
                    raise HookConfigError(f"{where}: hooks.{event} supports only hooks of type 'command'")
                command, timeout = item.get("command"), item.get("timeout", DEFAULT_TIMEOUT)
                if not isinstance(command, str) or not command.strip():
                    raise HookConfigError(f"{where}: a hooks.{event} hook needs a 'command'")
                if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
                    raise HookConfigError(
                        f"{where}: the timeout of a hooks.{event} hook must be a positive "
                        f"number of seconds, not {timeout!r}"
                    )
                root = group.get(PLUGIN_ROOT_MARK)
                hooks.append(
                    Hook(
                        event,
                        command,
                        float(timeout),
                        matcher,
                        group.get(WORKSPACE_MARK) is True,
                        plugin_root=root if isinstance(root, str) else "",
                    )
                )
    return hooks


def describe(table: Any) -> list[str]:
    """Each hook of a ``hooks`` table on one line, as the trust prompt shows it."""
    try:
        hooks = parse_hooks(table, "hooks")
    except HookConfigError:
        return ["hooks (malformed: they would not run)"]
    return [
        f"{h.event} hook{f' on {h.matcher}' if h.matcher not in ('', '*') else ''}: {h.command} (runs a command)"
        for h in hooks
    ]


@dataclass(frozen=True)
class Verdict:
    """What the hooks of one event said, all together."""

    blocked: str = ""  # why the action is blocked ("" when it is not): for the model, or the user
    allowed: bool = False  # PreToolUse: a hook allowed the call, so it runs without asking
    context: tuple[str, ...] = ()  # text for the model
    stop: str = ""  # a hook answered "continue": false: the turn ends, and this (its stopReason) says why
    updated_input: dict[str, Any] | None = None  # PermissionRequest: allowed with this input instead

    def added(self, event: str) -> tuple[str, ...]:
        """Its context as the notes the model reads, each saying which event's hook added it."""
        return tuple(f"A {event} hook added: {text}" for text in self.context)


@dataclass(frozen=True)
class _Answer:
    """What a hook's command did: its exit status and what it printed."""

    code: int | None  # None: timed out or failed to start
    stdout: str
    stderr: str


class Hooks:
    """A session's hooks, and the one place they run. Front ends never call it: the engine does."""

    def __init__(
        self,
        hooks: list[Hook],
        *,
        root: Path,
        emit: Sink,
        session_id: str = "",
        transcript_path: str = "",
        keep_secret_env: bool = False,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.hooks, self.root, self.emit, self.sandbox = hooks, root, emit, sandbox
        self.session_id, self.transcript_path, self.keep_secret_env = session_id, transcript_path, keep_secret_env
        self.permission_mode: Callable[[], str] = lambda: "default"
        # Told of each hook command as it starts and ends (--include-hook-events): a dict with "phase"
        # ("started", "finished"), "id", "event", "tool", and once finished "code", "stdout", "stderr",
        # "outcome" (success, error, cancelled). A host's own callbacks are not told: the host ran them.
        self.watch: Callable[[dict[str, Any]], None] | None = None
        self.agent_id = self.agent_type = ""  # set on a subagent's copy (for_agent)
        self.agent_transcript_path = ""
        self.notifying: set[asyncio.Task[Verdict]] = set()  # Notification hooks under way (notify)

    def for_agent(self, agent_id: str, agent_type: str, transcript_path: str = "") -> Hooks:
        """These hooks as a subagent's work raises them: every input names the child (``agent_id``,
        ``agent_type``). The list of hooks is shared: one a host adds later counts for children too."""
        scoped = copy.copy(self)
        scoped.agent_id, scoped.agent_type, scoped.agent_transcript_path = agent_id, agent_type, transcript_path
        return scoped

    def __bool__(self) -> bool:
        return bool(self.hooks)

    async def before_tool(self, tool: str, tool_input: Any, tool_use_id: str) -> Verdict:
        return await self.run(
            "PreToolUse",
            tool,
            {
                "tool_name": KNOWN.claude_name(tool),
                "tool_input": self.claude_input(tool, tool_input),
                "tool_use_id": tool_use_id,
            },
        )

    async def after_tool(self, tool: str, tool_input: Any, tool_use_id: str, output: str, is_error: bool) -> Verdict:
        response = {"output": output, "is_error": is_error}
        return await self.run(
            "PostToolUse",
            tool,
            {
                "tool_name": KNOWN.claude_name(tool),
                "tool_input": self.claude_input(tool, tool_input),
                "tool_response": response,
                "tool_use_id": tool_use_id,
            },
        )

    async def tool_failed(self, tool: str, tool_input: Any, tool_use_id: str, error: str, interrupted: bool) -> Verdict:
        """PostToolUseFailure: a call that ran and failed (after PostToolUse, which hears of every call)."""
        return await self.run(
            "PostToolUseFailure",
            tool,
            {
                "tool_name": KNOWN.claude_name(tool),
                "tool_input": self.claude_input(tool, tool_input),
                "tool_use_id": tool_use_id,
                "error": error,
                "is_interrupt": interrupted,
            },
        )

    async def permission_request(self, tool: str, tool_input: Any, tool_use_id: str) -> Verdict:
        """PermissionRequest: the user is about to be asked about this call; a hook may answer for them."""
        return await self.run(
            "PermissionRequest",
            tool,
            {
                "tool_name": KNOWN.claude_name(tool),
                "tool_input": self.claude_input(tool, tool_input),
                "tool_use_id": tool_use_id,
            },
        )

    async def prompt_submitted(self, prompt: str) -> Verdict:
        return await self.run("UserPromptSubmit", "", {"prompt": prompt})

    async def stopping(
        self, subagent: bool, active: bool, last_message: str, extra: Callable[[], dict[str, Any]] | None = None
    ) -> Verdict:
        """Stop, or SubagentStop (``extra``: the child's transcript path and receipt so far, made only when a
        hook will read them)."""
        event = "SubagentStop" if subagent else "Stop"
        if not any(h.event == event and h.matches(self.agent_type) for h in self.hooks):
            return Verdict()
        return await self.run(
            event,
            self.agent_type,
            {"stop_hook_active": active, "last_assistant_message": last_message, **(extra() if extra else {})},
        )

    async def objection(
        self, subagent: bool, active: bool, last_message: str, extra: Callable[[], dict[str, Any]] | None = None
    ) -> str:
        """What a Stop (or SubagentStop) hook that blocks the end of a turn tells the model; "" if none."""
        verdict = await self.stopping(subagent, active, last_message, extra)
        return f"A stop hook asks you to continue: {verdict.blocked}" if verdict.blocked else ""

    async def session_start(self, source: str) -> tuple[str, ...]:
        """SessionStart (``source``: startup, resume, clear or compact): the notes of what its hooks add."""
        return (await self.observe("SessionStart", source, {"source": source})).added("SessionStart")

    async def session_end(self, reason: str) -> None:
        """SessionEnd (``reason``: clear, logout, prompt_input_exit or other), after the Notification hooks
        still under way."""
        await self.settle()
        await self.observe("SessionEnd", reason, {"reason": reason})

    async def subagent_start(self) -> tuple[str, ...]:
        """SubagentStart, on the child's copy (``for_agent``): the notes of what its hooks add to the child's brief."""
        return (await self.observe("SubagentStart", self.agent_type, {})).added("SubagentStart")

    async def pre_compact(self, trigger: str, instructions: str) -> None:
        """PreCompact (``trigger``: manual or auto; ``instructions``: what /compact was asked to keep)."""
        await self.observe("PreCompact", trigger, {"trigger": trigger, "custom_instructions": instructions})

    def notify(self, kind: str, message: str) -> None:
        """Notification (``kind``: Claude Code's notification_type) from anywhere, without waiting for its
        hooks: they run beside the session, and ``settle`` waits for them."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # said from a thread: nothing to run them on
            return
        if any(h.event == "Notification" and h.matches(kind) for h in self.hooks):
            task = loop.create_task(self.observe("Notification", kind, {"message": message, "notification_type": kind}))
            self.notifying.add(task)
            task.add_done_callback(self.notifying.discard)

    async def settle(self) -> None:
        """Wait for the Notification hooks under way."""
        if self.notifying:
            await asyncio.gather(*self.notifying, return_exceptions=True)

    async def observe(self, event: str, matched: str, fields: dict[str, Any]) -> Verdict:
        """An event that nothing waits on a yes or no from: a hook's exit 2 (or "block") is shown to the user."""
        verdict = await self.run(event, matched, fields)
        if verdict.blocked:
            self.warn(f"A {event} hook said: {verdict.blocked}")
        return verdict

    async def elicitation(
        self, server: str, message: str, schema: dict[str, Any], url: str
    ) -> tuple[str, dict[str, Any] | None] | None:
        """An MCP server's question answered by an Elicitation hook (matched on the server's name), as
        Claude Code's hooks answer it: (action, content) from ``hookSpecificOutput``; None when none answers."""
        chosen = [h for h in self.hooks if h.event == "Elicitation" and h.matches(server)]
        if not chosen:
            return None
        payload = self.input_of(
            "Elicitation",
            {
                "mcp_server_name": server,
                "message": message,
                "requested_schema": schema,
                **({"mode": "url", "url": url} if url else {}),
            },
        )
        for hook in chosen:
            answer = await self.call(hook, payload)
            if answer.code == BLOCK:
                return "decline", None
            try:
                reply = json.loads(answer.stdout) if answer.code == 0 and answer.stdout.strip().startswith("{") else {}
            except ValueError:
                reply = {}
            specific = reply.get("hookSpecificOutput") if isinstance(reply, dict) else None
            if isinstance(specific, dict) and specific.get("action") in ("accept", "decline", "cancel"):
                content = specific.get("content")
                return specific["action"], content if isinstance(content, dict) else None
        return None

    def claude_input(self, tool: str, tool_input: Any) -> Any:
        """The call's input, plus Claude Code's ``file_path`` (absolute) for the file tools."""
        if file_path(tool) and isinstance(tool_input, dict) and isinstance(tool_input.get("path"), str):
            return {**tool_input, "file_path": str(self.root / tool_input["path"])}
        return tool_input

    def own_input(self, tool: str, given: dict[str, Any], before: Any) -> dict[str, Any]:
        """An input given back in Claude Code's form (a hook's or a host's ``updatedInput``) as the tool
        takes it: a ``file_path`` that changed becomes ``path`` (relative when inside the workspace)."""
        if not file_path(tool) or not isinstance(given.get("file_path"), str):
            return given
        own = {key: value for key, value in given.items() if key != "file_path"}
        shown = self.claude_input(tool, before)
        if isinstance(shown, dict) and given["file_path"] == shown.get("file_path") and "path" in own:
            return own
        path = Path(given["file_path"])
        try:
            own["path"] = path.relative_to(self.root).as_posix() if path.is_absolute() else path.as_posix()
        except ValueError:
            own["path"] = str(path)
        return own

    async def run(self, event: str, tool: str, fields: dict[str, Any]) -> Verdict:
        """Run every hook of ``event`` that matches ``tool``, at once, and combine what they said."""
        chosen = [h for h in self.hooks if h.event == event and h.matches(tool)]
        if not chosen:
            return Verdict()
        payload = self.input_of(event, fields)
        answers = await asyncio.gather(*(self.call(hook, payload) for hook in chosen))
        said = [self.read(hook, answer) for hook, answer in zip(chosen, answers, strict=True)]
        blocked = "\n".join(v.blocked for v in said if v.blocked)
        updated = next((v.updated_input for v in said if v.updated_input is not None), None)
        return Verdict(
            blocked,
            any(v.allowed for v in said) and not blocked,
            tuple(c for v in said for c in v.context),
            "\n".join(v.stop for v in said if v.stop),
            None if blocked else updated,
        )

    def input_of(self, event: str, fields: dict[str, Any]) -> bytes:
        """A hook's stdin: the fields every event has, Claude Code's, then the event's own."""
        agent = {"agent_id": self.agent_id, "agent_type": self.agent_type} if self.agent_id else {}
        data = {
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": str(self.root),
            "permission_mode": self.permission_mode(),
            "hook_event_name": event,
            **agent,
            **fields,
        }
        return json.dumps(data, default=str).encode()

    def read(self, hook: Hook, answer: _Answer) -> Verdict:
        """What one hook's answer says: why it blocks, whether it allows, context for the model, why it ends
        the turn (Claude Code's ``"continue": false``, or a PermissionRequest's ``interrupt``)."""
        if answer.code is None:
            return Verdict()
        if answer.code == BLOCK:
            return Verdict(answer.stderr.strip() or f"Blocked by a {hook.event} hook ({hook.command}).")
        if answer.code != 0:
            self.warn(
                f"A {hook.event} hook failed (exit {answer.code}): {hook.command}"
                f"{': ' + answer.stderr.strip().splitlines()[-1] if answer.stderr.strip() else ''}. "
                "The run goes on."
            )
            return Verdict()
        out = answer.stdout.strip()
        try:
            reply = json.loads(out) if out.startswith("{") else None
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            return Verdict(context=(out,) if out and hook.event in ("UserPromptSubmit", "SessionStart") else ())
        specific: dict[str, Any] = (
            reply["hookSpecificOutput"] if isinstance(reply.get("hookSpecificOutput"), dict) else {}
        )
        asked: dict[str, Any] = (
            specific["decision"] if isinstance(specific.get("decision"), dict) else {}
        )  # PermissionRequest
        decision = specific.get("permissionDecision") or asked.get("behavior") or reply.get("decision")
        reason = str(
            specific.get("permissionDecisionReason")
            or asked.get("message")
            or reply.get("reason")
            or reply.get("stopReason")
            or f"Blocked by a {hook.event} hook ({hook.command})."
        )
        context = (str(specific["additionalContext"]),) if specific.get("additionalContext") else ()
        ends = reply.get("continue") is False or (decision == "deny" and asked.get("interrupt") is True)
        if decision in ("deny", "block") or reply.get("continue") is False:
            return Verdict(reason, context=context, stop=reason if ends else "")
        given = asked.get("updatedInput")
        return Verdict(
            allowed=decision in ("allow", "approve"),
            context=context,
            updated_input=given if isinstance(given, dict) and decision == "allow" else None,
        )

    async def call(self, hook: Hook, payload: bytes) -> _Answer:
        """Run one hook (a command, or a host's callback), telling ``watch`` of a command."""
        if hook.callback is not None:
            return await self.call_back(hook, payload)
        if self.watch is None:
            return await self.run_command(hook, payload)
        tool = json.loads(payload).get("tool_name") or ""
        run = {"id": str(uuid.uuid4()), "event": hook.event, "tool": tool}
        self.watch({"phase": "started", **run})
        answer, outcome = _Answer(None, "", ""), "cancelled"
        try:
            answer = await self.run_command(hook, payload)
            outcome = "success" if answer.code == 0 else "error"
            return answer
        finally:
            self.watch(
                {
                    "phase": "finished",
                    **run,
                    "code": answer.code,
                    "stdout": answer.stdout,
                    "stderr": answer.stderr,
                    "outcome": outcome,
                }
            )

    async def run_command(self, hook: Hook, payload: bytes) -> _Answer:
        """Run one hook command; kill its process group when it outlives its timeout."""
        from ..system import processes
        from ..system.sandbox import SandboxError

        try:
            argv, preexec, env, passed = await asyncio.to_thread(
                launch,
                hook.command,
                self.root,
                sandbox=self.sandbox if hook.workspace else None,
                keep_secret_env=self.keep_secret_env,
                plugin_root=hook.plugin_root,
            )
        except SandboxError as exc:
            self.warn(f"The {hook.event} hook {hook.command} was not run: {exc}")
            return _Answer(None, "", "")
        try:
            proc = await processes.start_in_session(
                *argv,
                cwd=self.root,
                env=env,
                preexec_fn=preexec,
                hand_over=passed,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            self.warn(f"Could not start the {hook.event} hook {hook.command}: {exc.strerror or exc}.")
            return _Answer(None, "", "")
        processes.direct.add(proc.pid)  # waited for here: not an orphan to reap
        try:
            stdout, stderr = await asyncio.wait_for(proc.communicate(payload), hook.timeout)
        except TimeoutError:
            self.warn(
                f"The {hook.event} hook {hook.command} did not finish within {hook.timeout:g} s and was "
                "stopped; the run goes on."
            )
            return _Answer(None, "", "")
        except BrokenPipeError:  # it did not read its input; what it says still counts
            stdout, stderr = await proc.communicate()
        finally:
            if proc.returncode is None:
                processes.kill_group(proc.pid)
                await proc.wait()
            processes.direct.discard(proc.pid)
        return _Answer(proc.returncode, _text(stdout), _text(stderr))

    async def call_back(self, hook: Hook, payload: bytes) -> _Answer:
        """A host's hook: what it answers is read as a command's JSON output would be."""
        assert hook.callback is not None
        try:
            reply = await asyncio.wait_for(hook.callback(json.loads(payload)), hook.timeout)
        except TimeoutError:
            self.warn(
                f"The {hook.event} hook {hook.command} did not answer within {hook.timeout:g} s; the run goes on."
            )
            return _Answer(None, "", "")
        except Exception as exc:  # noqa: BLE001 - the host's failure is its hook's, not the run's
            self.warn(f"The {hook.event} hook {hook.command} failed: {exc}. The run goes on.")
            return _Answer(None, "", "")
        return _Answer(0, json.dumps(reply if isinstance(reply, dict) else {}), "")

    def warn(self, text: str) -> None:
        self.emit(Notice(level="warning", text=text))


def launch(
    command: str, root: Path, *, sandbox: Sandbox | None, keep_secret_env: bool, plugin_root: str = ""
) -> tuple[list[str], Callable[[], None] | None, dict[str, str], list[int]]:
    """How a hook's (or the status line's) command starts: ``/bin/sh -c`` in ``root``, with bash's scrubbed
    environment plus ``CLAUDE_PROJECT_DIR``, inside ``sandbox`` when one is given (a workspace's own command)
    and usable. Returns argv, the preexec function, the environment and the descriptors to pass down
    (``pass_fds``) and close once it started (the sandbox's seccomp filter); raises SandboxError. Blocking.
    ``plugin_root``: a plugin's command, which gets its folder as ``CLAUDE_PLUGIN_ROOT``, readable in the sandbox."""
    from ..system import processes
    from ..system.sandbox import writable_dirs
    from ..system.secret_env import command_env

    env = command_env(keep_secret_env)
    env["CLAUDE_PROJECT_DIR"] = str(root)
    if plugin_root:
        env["CLAUDE_PLUGIN_ROOT"] = plugin_root
    argv = ["/bin/sh", "-c", command]
    if sandbox is not None and sandbox.usable():
        passed: list[int] = []
        readable = [Path(plugin_root)] if plugin_root else []
        return (
            sandbox.wrap(argv, cwd=root, writable=writable_dirs(root), pass_fds=passed, readable=readable),
            None,
            env,
            passed,
        )
    return argv, processes.die_with_parent(), env, []


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")[:OUTPUT_CAP]
