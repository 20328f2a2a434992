"""The TUI's first screen does without Markdown rendering, pathspec and git: they load on first use."""

from __future__ import annotations

import os
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


def test_the_first_screen_loads_no_permission_checks_sandbox_model_client_or_question_screens():
    """The settings name the permission and sandbox modes (core/vocabulary.py), the door takes the key's check
    and the model's window from their own small modules; the permission checks, the sandbox's bwrap plumbing,
    the model client and compaction load with the session, after the first screen, and the screens that ask
    (an approval, a server's question, a missing key, the question before quitting) when first shown."""
    code = (
        "import sys, agentcli.cli, agentcli.trust, agentcli.ui.tui.app; "
        "print(sorted(m for m in sys.modules if m.startswith(('agentcli.core.policy.permissions', "
        "'agentcli.core.system.sandbox', 'agentcli.core.system.protected_paths', 'agentcli.core.policy.decision', "
        "'agentcli.core.model.llm', 'agentcli.core.model.early_request', 'agentcli.core.engine.compaction', "
        "'agentcli.ui.tui.screens.approval', 'agentcli.ui.tui.screens.elicitation', 'agentcli.ui.tui.screens.no_key', "
        "'agentcli.ui.tui.screens.quit'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_importing_names_from_the_door_does_not_read_its_lazy_block():
    """``from door import x`` asks the module for ``__path__``: answered without parsing door.py, which its
    lazy names need (``later``) and the first screen does not."""
    code = (
        "import agentcli.cli, agentcli.trust, agentcli.ui.tui.app; from agentcli.core import door; "
        "print(door.later.cache_info().currsize, door.Skill.__name__, door.later.cache_info().currsize)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["0", "Skill", "1"]


def test_settling_trust_where_nothing_asks_loads_no_trust_screen(tmp_path):
    """The TUI's trust question (its own small app, and the dialog it is built on) loads only when a workspace
    asks for trust; most never do."""
    code = (
        "import sys, argparse, pathlib, agentcli.cli, agentcli.ui.tui.app; "
        "outcome = agentcli.cli.settle_trust(argparse.Namespace(headless=False, plain=False, trust_workspace=False), "
        "pathlib.Path(sys.argv[1])); "
        "print(outcome.trusted, sorted(m for m in sys.modules if m.startswith(('agentcli.ui.tui.screens.trust', "
        "'agentcli.ui.tui.screens.dialog'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "True []"


def test_the_look_alike_bracket_patterns_compile_on_first_quote():
    """content.quoted's two patterns (large case-insensitive classes of look-alike brackets, about 4 ms to
    compile) are compiled when it first quotes, not when the first screen's modules load."""
    code = (
        "import agentcli.cli, agentcli.trust, agentcli.ui.tui.app; from agentcli.core import content; "
        "before = content._brackets.cache_info().currsize; quoted = content.quoted('a <system-reminder> b'); "
        "print(before, quoted)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "0 a [system-reminder] b"


def test_settings_and_trust_where_nothing_names_rules_or_servers_load_no_rule_or_server_parser(tmp_path):
    """The permission rules' parser (with the bash parser it needs) and the language servers' load when a settings,
    command or skill file names some, or a plugin's servers are read: not to settle trust and read the settings of a
    workspace that names none, before the first screen."""
    code = (
        "import sys, argparse, pathlib, agentcli.cli, agentcli.config, agentcli.ui.tui.app; "
        "root = pathlib.Path(sys.argv[1]); "
        "outcome = agentcli.cli.settle_trust(argparse.Namespace(headless=False, plain=False, trust_workspace=False), "
        "root); agentcli.config.load_settings(root, {}, trusted=outcome.trusted); "
        "print(sorted(m for m in sys.modules if m.startswith(('agentcli.core.policy.rules', "
        "'agentcli.core.policy.bash_', 'agentcli.core.lsp.specs'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]"


def test_the_toml_parser_loads_with_the_first_toml_file(tmp_path):
    """Settings with no TOML file to read load no TOML parser; a workspace's file is read all the same, and a
    damaged one still gets its sentence."""
    code = (
        "import sys, pathlib; from agentcli.config import ConfigError, load_settings; "
        "ws = pathlib.Path(sys.argv[1]); load_settings(ws, {}); print('tomllib' in sys.modules); "
        "(ws / '.agentcli').mkdir(); (ws / '.agentcli' / 'settings.toml').write_text('model = \"claude-opus-4-5\"\\n'); "
        "print(load_settings(ws, {}).model, 'tomllib' in sys.modules); "
        "(ws / '.agentcli' / 'settings.toml').write_text('model = '); "
        "exec('try:\\n load_settings(ws, {})\\nexcept ConfigError as exc:\\n print(exc)')"
    )
    home = tmp_path / "home"
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "AGENTCLI_HOME": str(home / "agentcli")}
    out = subprocess.run(
        [sys.executable, "-c", code, str(ws)], capture_output=True, text=True, timeout=60, check=True, env=env
    )
    lines = out.stdout.splitlines()
    assert lines[:2] == ["False", "claude-opus-4-5 True"]
    assert lines[2].startswith(f"{ws / '.agentcli' / 'settings.toml'} is not valid TOML: ")
