"""``python -m bench``: run every measure, print the table, write docs/benchmarks.md.

Runs in a private temporary home (AGENTCLI_HOME, XDG dirs), so no user setting changes a result
and no session is left behind; every server, subprocess and tmux session it starts is stopped.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from . import machine, report
from .common import REPO_ROOT
from .stats import Section

DOC = REPO_ROOT / "docs" / "benchmarks.md"
NAMES = (
    "startup",
    "search",
    "stream",
    "session",
    "transcript",
    "loop",
    "delegation",
    "parallel",
    "claude",
    "acp",
    "mentions",
    "ondemand",
    "cache",
    "review",
    "lsp",
    "lsperrand",
    "attempts",
)


def _measures(work: Path) -> dict[str, tuple[str, Callable[[], Section]]]:
    from . import acp as acp_bench
    from . import (
        attempts_cost,
        bigrepo,
        claude_code,
        delegation,
        long_render,
        loop_overhead,
        lsp_errand,
        mentions,
        on_demand,
        parallel,
        prompt_cache,
        render,
        review_cost,
        search,
        startup,
        transcript,
    )
    from . import lsp as lsp_bench

    big: list[bigrepo.BigRepo] = []

    def big_repo() -> bigrepo.BigRepo:
        if not big:
            big.append(bigrepo.generate(work / "big-repo"))
        return big[0]

    return {
        "startup": ("Startup", lambda: startup.run(work)),
        "search": ("Search tools", lambda: search.run(big_repo())),
        "stream": ("Streaming render", lambda: render.run_stream(work)),
        "session": ("500-turn session", lambda: long_render.run(work)),
        "transcript": ("Transcript", lambda: transcript.run(work)),
        "loop": ("Loop overhead", lambda: loop_overhead.run(work)),
        "delegation": ("Delegation savings", lambda: delegation.run(big_repo())),
        "parallel": ("Parallel subagents", lambda: parallel.run(work)),
        "claude": ("Claude Code", lambda: claude_code.run(work)),
        "ondemand": ("Tools on demand", lambda: on_demand.run(work)),
        "acp": ("ACP", lambda: acp_bench.run(work)),
        "mentions": ("@-completion", lambda: mentions.run(work)),
        "cache": ("Prompt cache", lambda: prompt_cache.run(work)),
        "review": ("Review", lambda: review_cost.run(work)),
        "lsp": ("Language server references", lambda: lsp_bench.run(work)),
        "attempts": ("Best-of-N attempts", lambda: attempts_cost.run(work)),
        "lsperrand": ("Find every caller", lambda: lsp_errand.run(work)),
    }


def _isolate(home: Path) -> None:
    os.environ["AGENTCLI_HOME"] = str(home / "agentcli")
    os.environ["XDG_CONFIG_HOME"] = str(home / "config")
    os.environ["XDG_DATA_HOME"] = str(home / "data")
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_MODEL",
        "ANTHROPIC_AUTH_TOKEN",
        "AGENTCLI_MODEL",
        "AGENTCLI_PERMISSION_MODE",
        "CLAUDE_CONFIG_DIR",
    ):  # else Claude Code would use (and write) the user's own config
        os.environ.pop(name, None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--only", help=f"comma-separated measures to run, of: {', '.join(NAMES)}")
    parser.add_argument("--no-write", action="store_true", help="print the table; leave docs/benchmarks.md alone")
    args = parser.parse_args(argv)
    chosen = NAMES if not args.only else tuple(n.strip() for n in args.only.split(",") if n.strip())
    unknown = [n for n in chosen if n not in NAMES]
    if unknown:
        parser.error(f"unknown measure {', '.join(unknown)}; choose from {', '.join(NAMES)}")

    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="agentcli-bench-"))
    sections: list[Section] = []
    try:
        _isolate(work / "home")
        measures = _measures(work)
        for name in chosen:
            title, measure = measures[name]
            print(f"bench: {title} …", file=sys.stderr, flush=True)
            t0 = time.monotonic()
            try:
                section = measure()
            except Exception as exc:  # one broken measure must not hide the others' results
                traceback.print_exc()
                section = Section(title)
                section.row("(failed)", "not measured", note=f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
            section.seconds = time.monotonic() - t0
            sections.append(section)
            print(f"bench: {title} took {section.seconds:.0f} s", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    seconds = time.monotonic() - started
    print(report.table(sections))
    print(f"\n{seconds / 60:.1f} minutes in all.")
    if args.no_write or chosen != NAMES:
        print("(docs/benchmarks.md not written: pass no --only and no --no-write to write it.)")
        return 0
    command = "python -m bench" + (" " + " ".join(shlex.quote(a) for a in argv) if argv else "")
    report.write(DOC, report.markdown(sections, machine.describe(), command, seconds, NAMES))
    print(f"Wrote {DOC.relative_to(REPO_ROOT)}.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
