"""The TUI's first screen is drawn without the engine: the app module loads no session, tool, subagent or
MCP module (they load in the thread that opens the session once the screen is up)."""

from __future__ import annotations

import subprocess
import sys

ENGINE = (
    "agentcli.core.session",
    "agentcli.core.tools",
    "agentcli.core.engine.subagents",
    "agentcli.core.engine.loop",
    "agentcli.core.mcp.servers",
    "agentcli.core.storage.worktrees",
    "agentcli.core.engine.history",
)


def test_the_app_module_loads_no_engine_module():
    code = f"import sys, agentcli.ui.tui.app; print(sorted(set({ENGINE!r}) & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_the_command_line_on_its_way_to_the_app_loads_no_engine_module(tmp_path):
    """What cli.run does before it hands over to the app: flags, settings, trust (no question here)."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from agentcli import cli, scripting, trust\n"
        "from agentcli.config import load_settings\n"
        "args = cli.build_parser().parse_args([])\n"
        "scripting.check_script_flags(args)\n"
        f"root = Path({str(tmp_path)!r})\n"
        "outcome = trust.settle(root, ask=lambda request: None)\n"
        "load_settings(root, {}, trusted=outcome.trusted, extra=scripting.script_settings(args))\n"
        "import agentcli.ui.tui.app\n"
        f"print(sorted(set({ENGINE!r}) & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
