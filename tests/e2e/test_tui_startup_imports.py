"""The TUI's first screen does without Markdown rendering, pathspec and git: they load on first use."""

from __future__ import annotations

import subprocess
import sys


def test_the_app_module_loads_no_markdown_pygments_or_pathspec():
    code = (
        "import sys, agentcli.ui.tui.app; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'markdown_it', 'pygments', 'pathspec'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_an_answer_still_imports_markdown_when_first_drawn():
    code = (
        "import sys; from agentcli.ui.tui.widgets.history import answer_entry; "
        "entry = answer_entry('**hi**'); print(type(entry).__name__, 'markdown_it' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "AssistantEntry True"
