"""The prompt-cache script (prompt_cache.py) played to Claude Code's CLI: ``-p`` with stream-json input, one user
message a turn, on the same stand-in server (its Claude Code dialect), so both are measured the same way.

Claude Code 2.1.332 offers no plan tool up front (its plan lives in deferred task tools), so its turn 5 is a plain
one; its mode change is the stream-json ``set_permission_mode`` control request; its background child is an Agent
call with ``run_in_background``; the steer is a user message sent while a tool call is held; the enabled tool is a
ToolSearch that loads WebFetch (its own way of adding a tool mid-conversation); the compaction is ``/compact``."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from tests.fakes.anthropic_server import Reply, text, tool_use

from .claude_code import QUIET, claude_binary, seed_home
from .common import StandIn, api_env

TURNS = 30
STEER = "Read README.md, not the Python files."
QUIET_WAIT = 3.0  # seconds without output after which a turn that might be followed by another is over


def _user_text(message: dict[str, Any]) -> tuple[str, bool]:
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    said = "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
    return said, any(b.get("type") == "tool_result" for b in blocks)


class Script:
    """The stand-in's replies, by what the latest user message says; it records how far the script has got."""

    def __init__(self, ws: Path) -> None:
        self.ws, self.held = ws, threading.Event()
        self.answered: set[int] = set()  # steps whose turn got its final text
        self.other = 0  # replies to turns of Claude Code's own (a background result, a steer, a summary)

    def __call__(self, body: dict[str, Any]) -> Reply:
        users = [m for m in body["messages"] if m.get("role") == "user"]
        said, results = _user_text(users[-1]) if users else ("", False)
        steps = [int(n) for m in users for n in re.findall(r"Step (\d+):", _user_text(m)[0])]
        if "Count the Python files." in said and not steps:
            return text("1 Python file: src/app.py.")
        if results and steps:
            self.answered.add(steps[-1])
            return text(f"Done with step {steps[-1]}.")
        if not re.search(r"Step \d+:", said):
            self.other += 1
            return text(
                "Summary: the user is fixing the greeting in src/app.py." if "summar" in said.lower() else "Noted."
            )
        readme = str(self.ws / "README.md")
        match steps[-1]:
            case 8:
                return tool_use(
                    "Edit", {"file_path": readme, "old_string": "It greets.", "new_string": "It greets you."}
                )
            case 12:
                return tool_use(
                    "Agent",
                    {
                        "description": "Count Python files",
                        "prompt": "Count the Python files.",
                        "subagent_type": "Explore",
                        "run_in_background": True,
                    },
                )
            case 16:
                return tool_use("Read", {"file_path": readme}, gate=self.held, gate_timeout=120)
            case 20:
                return tool_use("ToolSearch", {"query": "select:WebFetch", "max_results": 1})
            case _:
                return tool_use("Read", {"file_path": readme})


class Output:
    """Claude Code's stream-json lines, read in a thread; how many results and control responses came."""

    def __init__(self, out: IO[str]) -> None:
        self.results = self.controls = 0
        self.thread = threading.Thread(target=self._read, args=(out,), daemon=True)
        self.thread.start()

    def _read(self, out: IO[str]) -> None:
        for line in out:
            kind = json.loads(line).get("type") if line.startswith("{") else None
            self.results += kind == "result"
            self.controls += kind == "control_response"


def _wait(condition: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"Claude Code: {what} did not happen in {timeout:g} s")
        time.sleep(0.05)


def session(work: Path, project: Path) -> tuple[list[dict[str, Any]], str]:
    """Run the script; the requests Claude Code sent and its version."""
    binary, why = claude_binary()
    if binary is None:
        raise RuntimeError(why)
    stamp = binary.parent / "claude.version"
    version = stamp.read_text().split()[0] if stamp.is_file() else "?"
    home = work / "claude-cache-home"
    home.mkdir(exist_ok=True)
    seed_home(home, project, version)
    script = Script(project)
    # Unchecked: after /compact Claude Code sends a system message with empty content, which the stand-in's
    # dialect check refuses; what is measured here is the requests' shape, not whether an endpoint takes them.
    with StandIn(responder=script, dialect="claude-code", validate=False) as server:
        env = {**api_env(server), **QUIET, "HOME": str(home)}
        argv = [str(binary), "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
        proc = subprocess.Popen(
            argv,
            cwd=project,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        stdin, out = proc.stdin, proc.stdout

        def send(message: dict[str, Any]) -> None:
            stdin.write(json.dumps(message) + "\n")
            stdin.flush()

        def say(words: str) -> None:
            send({"type": "user", "message": {"role": "user", "content": words}})

        seen = Output(out)
        try:
            for turn in range(1, TURNS + 1):
                if turn == 8:
                    send(
                        {
                            "type": "control_request",
                            "request_id": "mode",
                            "request": {"subtype": "set_permission_mode", "mode": "acceptEdits"},
                        }
                    )
                    _wait(lambda: seen.controls >= 1, "the mode change")
                if turn == 24:
                    before = seen.results
                    say("/compact")
                    _wait(lambda before=before: seen.results > before, "/compact")
                asked, before, other = len(server.requests), seen.results, script.other
                say(f"Step {turn}: look at the project and go on.")
                if turn == 16:
                    _wait(lambda asked=asked: len(server.requests) > asked, "the held call")
                    say(STEER)
                    script.held.set()
                _wait(
                    lambda turn=turn, before=before: turn in script.answered and seen.results > before, f"turn {turn}"
                )
                if turn == 12:  # the background result comes back in a turn of its own
                    _wait(
                        lambda other=other, before=before: script.other > other and seen.results > before + 1,
                        "the background result",
                    )
                if turn == 16:  # the steer may have its own turn: let it end
                    time.sleep(QUIET_WAIT)
                    _wait(
                        lambda other=other, before=before: seen.results > before + (script.other > other),
                        "the steer's turn",
                    )
            stdin.close()
            proc.wait(timeout=60)
        finally:
            script.held.set()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if server.rejections:
            raise RuntimeError(f"the stand-in refused a request: {server.rejections[0][1][:150]}")
        return server.requests, version
