"""A tool's facts are written on the tool alone (issue 42 §3): policy, hooks, agent files and ``--tools`` read
views of them (core/tool_facts.py), and no table of tool names grows back anywhere else."""

import ast
from pathlib import Path

import agentcli
import agentcli.core.session  # noqa: F401  (a session's modules declare every tool, task's too)
from agentcli.core.engine.history import builtin_tools
from agentcli.core.engine.tool_catalogue import catalogue
from agentcli.core.policy.hooks import Hooks
from agentcli.core.policy.rules import Rule

SOURCE = Path(agentcli.__file__).parent

# Words spelt as a tool's name that mean something else, by file (each counted: one more fails): settings of the same
# name (lsp, web_search, tool_search), git's worktree command and a child's worktree isolation, the task kind of tools
# (vocabulary.ToolKind), a definition's kind (skill), the bash program, agent type and deno's task command, the json
# result's structured_output field, a column's heading. The demo is left out: it plays the model, which calls the
# tools by name as any model does.
OTHER_WORDS = {
    "config.py": {"tool_search": 1},
    "config_values.py": {"lsp": 1, "web_search": 1},
    "core/engine/agents.py": {"bash": 3, "worktree": 2},
    "core/engine/attempts.py": {"worktree": 1},
    "core/engine/skills.py": {"skill": 1},
    "core/engine/subagent_record.py": {"worktree": 1},
    "core/engine/subagents.py": {"worktree": 1},
    "core/lsp/specs.py": {"lsp": 1},
    "core/policy/permissions.py": {"task": 3},
    "core/policy/rules.py": {"bash": 1, "task": 1},
    "core/storage/worktrees.py": {"worktree": 6},
    "core/system/git.py": {"worktree": 2},
    "core/system/git_config.py": {"worktree": 1},  # the scope git config reports for config.worktree
    "core/tools/__init__.py": {"task": 1},
    "core/vocabulary.py": {"task": 1},
    "ui/stream_json.py": {"structured_output": 1},
    "ui/tui/reports.py": {"task": 1},
}


def _tool_classes(tree: ast.Module) -> list[ast.ClassDef]:
    """The classes that name a tool: the one place its facts are written."""
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(
            isinstance(item, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "name" for t in item.targets)
            for item in node.body
        )
    ]


def _outside(tree: ast.Module) -> list[ast.AST]:
    """Every node but those of a tool's class and of ``__all__`` (which names a tool's class, not its facts)."""
    exports = [
        node
        for node in tree.body
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    ]
    inside = {id(node) for top in [*_tool_classes(tree), *exports] for node in ast.walk(top)}
    return [node for node in ast.walk(tree) if id(node) not in inside]


def _own_names(tree: ast.Module) -> set[str]:
    """The names of the tools a module defines, which it may write anywhere in it (web_search's NAME)."""
    constants = {
        t.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    values = [
        item.value
        for cls in _tool_classes(tree)
        for item in cls.body
        if isinstance(item, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "name" for t in item.targets)
    ]
    names = {
        v.value if isinstance(v, ast.Constant) else constants.get(v.id) if isinstance(v, ast.Name) else None
        for v in values
    }
    return {name for name in names if isinstance(name, str)}


def test_facts_are_written_on_the_tools_alone():
    facts = list(catalogue())
    names = {f.name for f in facts}
    claude = {n for f in facts for n in (f.claude_name, *f.claude_aliases) if n}
    trees = {path.relative_to(SOURCE).as_posix(): ast.parse(path.read_text()) for path in sorted(SOURCE.rglob("*.py"))}
    classes = {node.name for tree in trees.values() for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    tools = {cls.name for tree in trees.values() for cls in _tool_classes(tree)}
    spoken = claude - (classes - tools)  # "Agent", "Skill": also other classes of agentcli, in quoted annotations
    tables: dict[str, int] = {}
    named: list[str] = []
    words: dict[str, dict[str, int]] = {}
    for where, tree in trees.items():
        own = _own_names(tree)
        for node in _outside(tree):
            if isinstance(node, ast.Constant) and node.value in spoken:
                named.append(f"{where}:{node.lineno} {node.value!r}")
            if isinstance(node, ast.Constant) and node.value in names - own and not where.startswith("demo/"):
                found = words.setdefault(where, {})
                found[node.value] = found.get(node.value, 0) + 1
            items = (
                [*node.keys, *node.values]
                if isinstance(node, ast.Dict)
                else node.elts
                if isinstance(node, (ast.Tuple, ast.List, ast.Set))
                else []
            )
            if sum(isinstance(i, ast.Constant) and i.value in names | claude for i in items) >= 2:
                tables[where] = tables.get(where, 0) + 1
    assert named == [], "Claude Code's names for tools are written outside the tools' classes"
    assert tables == {}, "a list of tool names written outside the tools (use the views of core/tool_facts.py)"
    assert words == OTHER_WORDS, (
        "a tool's name written outside its module: ask the tool's facts (its role, preview, "
        "the agent types given it) or the catalogue instead"
    )


def test_the_views_say_what_the_tables_said():
    known = catalogue()
    assert set(known.reading()) == {"read_file", "grep", "glob", "git_status", "git_diff", "git_log", "git_blame"}
    assert set(known.changing()) == {"write_file", "edit_file", "bash"}
    assert Rule.parse("Read(.env)").tools == ("read_file", "grep", "glob")
    assert Rule.parse("MultiEdit").tools == ("edit_file",) and Rule.parse("LS").tools == ("glob",)
    assert Rule.parse("Agent").tools == ("task",) and Rule.parse("KillShell").tools == ("kill_bash",)
    assert known.claude_name("web_search") == "WebSearch" and known.claude_name("mcp__docs__x") == "mcp__docs__x"
    assert known.with_companions(("bash",)) == ("bash", "bash_output", "kill_bash")
    hooks = Hooks([], root=Path("/w"), emit=lambda event: None)
    assert {name for name in known.for_agents() if hooks.claude_input(name, {"path": "a"}) != {"path": "a"}} == {
        "read_file",
        "edit_file",
        "write_file",
    }


def test_the_roles_agent_types_and_previews_say_what_the_names_said():
    known = catalogue()
    assert [known.role(role) for role in ("plan", "skills", "delegate", "commands")] == [
        "todo_write",
        "skill",
        "task",
        "bash",
    ]
    assert set(known.given_to("explore")) == {
        "read_file",
        "grep",
        "glob",
        "lsp",
        "git_status",
        "git_diff",
        "git_log",
        "git_blame",
        "web_search",
    }
    assert set(known.given_to("bash")) == {"bash", "read_file", "write_file", "edit_file", "glob", "todo_write"}
    tools = builtin_tools()
    assert {
        name: tools.described(name, {})["preview"]
        for name in ("bash", "bash_output", "edit_file", "write_file", "grep", "glob", "task", "read_file")
    } == {
        "bash": "command",
        "bash_output": "output",
        "edit_file": "edit",
        "write_file": "write",
        "grep": "search",
        "glob": "search",
        "task": "delegate",
        "read_file": "",
    }


def test_the_script_flags_know_every_tool_the_catalogue_declares():
    """--allowedTools and --tools knew the default tools of no repository, and task and skill by hand: the git
    tools, web_search and lsp, which a session has, were "no tool" to them."""
    from agentcli.scripting import checked_rules, tool_names

    assert checked_rules(["git_status", "web_search", "lsp(*)"], "--allowedTools") == [
        "git_status",
        "web_search",
        "lsp(*)",
    ]
    assert tool_names("git_log,skill,Bash") == ["git_log", "skill", "bash", "bash_output", "kill_bash"]
