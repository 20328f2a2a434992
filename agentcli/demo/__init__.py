"""``agentcli --demo`` (``make demo``): the app in a sample repository, against a scripted stand-in API.

No key and no network: the stand-in (``server.py``, playing ``scenario.py``) runs in a thread on
loopback, the sample repository (``sample.py``) is written to a temporary folder, and sessions and
settings live in a temporary home, so nothing of the user's is read or changed. The full-screen app
sends a first question by itself: a subagent searches, the panel shows it live, and its transcript
opens when it is done. ``--plain`` and ``-p`` work too.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from .intro import MODEL, PROMPT, TRY_PLAIN


def run_demo(args: argparse.Namespace, argv: list[str], run: Callable[[list[str]], int]) -> int:
    """The demo in its temporary world; ``--plain`` and ``-p`` are handed back to ``run`` (cli.run) there."""
    from ..core.system import secret_env
    from ..ui.slash import TEMPORARY_HOME
    from .sample import write_sample
    from .server import DemoServer

    with tempfile.TemporaryDirectory(prefix="agentcli-demo-") as temp:
        root = write_sample(Path(temp) / "tiny-shop")
        os.environ["AGENTCLI_HOME"] = str(Path(temp) / "home")  # no user settings, no sessions left behind
        os.environ[TEMPORARY_HOME] = "1"  # so quitting says no session is there to resume
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "AGENTCLI_API_KEY_HELPER", "AGENTCLI_MODEL"):
            os.environ.pop(name, None)
        os.environ["ANTHROPIC_MODEL"] = MODEL  # no price: the demo costs nothing, and says so
        secret_env.forget("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "AGENTCLI_API_KEY_HELPER")
        with DemoServer() as server:
            os.environ["ANTHROPIC_BASE_URL"] = server.base_url
            os.chdir(root)
            if args.prompt is not None or args.plain:
                if args.plain:
                    print(f"Demo in {root}: try  {PROMPT}\n{TRY_PLAIN}", file=sys.stderr)
                return run([a for a in argv if a != "--demo"])
            return run_tui(root)


def run_tui(root: Path) -> int:
    import asyncio

    from ..config import load_settings
    from ..signals import run_until_signal
    from ..ui.tui.controls import goodbye
    from .app import make_demo_app

    app = make_demo_app(load_settings(root), root)
    code = asyncio.run(run_until_signal(app))
    print(goodbye(app.session))  # as the app says it: here, that the demo's session goes with its folder
    return code if isinstance(code, int) else 0
