"""Which of the servers found (on PATH or in the settings) have files in the workspace, asked where it matters
(a search of workspace symbols, which would otherwise start every server found) and never on the way to the
first request: one ``rg --files`` per server, limited to that server's file patterns, each in a process of its
own, read up to its first line.

The session's start asks nothing: the lsp tool is offered when some server is found, and each file is checked at
use (``LanguageServers.for_path``), as the diagnostics after an edit are. A walk of the tree at the start cost up
to 200 ms whenever some server was on PATH (rust-analyzer on a Python project walked 5,000 entries to find no
``*.rs``), and an empty folder where the model then writes a project's first file got no lsp tool and no
diagnostics. rg skips what git ignores and hidden folders, and here the dependency folders a repository holds
without ignoring them. When rg is missing, or has not answered within ``WAIT``, every server found is kept.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import IO

from .specs import ServerSpec

WAIT = 10.0  # seconds rg gets to say whether the workspace holds a server's files
SKIPPED_DIRS = ("node_modules", "venv", "__pycache__", "target", "build", "dist")  # a repository's own copies


class WorkspaceLanguages:
    """The rg runs of one workspace, started at once; ``found()`` is the servers with files there."""

    def __init__(self, root: Path, specs: list[ServerSpec]) -> None:
        from ..system.secret_env import command_env
        from ..tools.rg import rg_path

        self.specs = specs
        self.runs: dict[str, subprocess.Popen[bytes]] = {}
        rg = rg_path()
        if rg is None:
            return
        skipped = [arg for name in SKIPPED_DIRS for arg in ("--glob", f"!{name}/")]
        for spec in specs:
            globs = [arg for pattern in spec.patterns for arg in ("--glob", pattern)]
            try:
                self.runs[spec.name] = subprocess.Popen(
                    [rg, "--files", "--no-config", "--no-require-git", *globs, *skipped, "."],
                    cwd=root,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env=command_env(),
                )
            except OSError:
                self.stop()
                return

    async def found(self, wait: float = WAIT) -> list[ServerSpec]:
        """The servers with a file in the workspace (all of them when rg could not say in time)."""
        if len(self.runs) < len(self.specs) or not self.specs:  # no rg (or nothing to ask)
            return self.specs
        names = list(self.runs)
        answers = [asyncio.create_task(asyncio.to_thread(_first_line, self.runs[name].stdout)) for name in names]
        done, _ = await asyncio.wait(answers, timeout=wait)
        for run in self.runs.values():  # one still walking is ended: its reader then sees the end of its output
            if run.poll() is None:
                run.kill()
        await asyncio.gather(*answers, return_exceptions=True)
        self.stop()
        return [
            spec
            for spec, answer in zip(self.specs, answers, strict=True)
            if answer not in done or answer.exception() is not None or answer.result()
        ]

    def stop(self) -> None:
        for run in self.runs.values():
            if run.poll() is None:
                run.kill()
            run.wait()
            if run.stdout is not None:
                run.stdout.close()
        self.runs.clear()


def _first_line(output: IO[bytes] | None) -> bool:
    """Whether rg printed a file (blocking: in a thread)."""
    return bool(output is not None and output.readline())
