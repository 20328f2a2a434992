"""The TUI's first screen is drawn without the engine: the app module loads no session, tool, subagent or
MCP module (they load in the thread that opens the session once the screen is up)."""

from __future__ import annotations

import subprocess
import sys

ENGINE = ("agentcli.core.session", "agentcli.core.tools", "agentcli.core.subagents", "agentcli.core.loop",
          "agentcli.core.mcp.servers", "agentcli.core.worktrees", "agentcli.core.history")


def test_the_app_module_loads_no_engine_module():
    code = (f"import sys, agentcli.ui.tui.app; print(sorted(set({ENGINE!r}) & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
