"""Startup: a bare --version loads nothing of the engine, and the command line module loads no settings."""

from __future__ import annotations

import subprocess
import sys


def test_bare_version_imports_no_engine_module():
    code = (
        "import sys; sys.argv = ['agentcli', '--version']; from agentcli.__main__ import main; main(); "
        "print(sorted(m for m in sys.modules if m.startswith('agentcli')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    from agentcli import __version__

    assert out.stdout.splitlines() == [f"agentcli {__version__}", "['agentcli', 'agentcli.__main__']"]


def test_the_cli_module_loads_no_settings_permissions_or_store():
    code = "import sys, agentcli.cli; print(sorted(m for m in sys.modules if m.startswith('agentcli')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "['agentcli', 'agentcli.cli']"
