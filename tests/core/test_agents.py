"""Agent types: built-ins, custom files and their precedence, Claude Code files, and the task tool using them."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from agentcli import cli, paths
from agentcli.core.engine.agents import GIT_TOOLS, TOOL_NAMES, built_in, load_agent_types, parse_agent_file
from agentcli.core.engine.frontmatter import FrontmatterError, split_frontmatter
from agentcli.core.events import Notice, SubagentStarted
from agentcli.core.tools import default_tools
from tests.fakes.anthropic_server import first_user_text, offers_tool, reply, text, tool_names, tool_use, tool_use_block

FINDER = """\
---
name: finder
description: Finds where a symbol is defined and who calls it.
tools: grep, read_file
model: claude-haiku-4-5
---
You are FINDER. Grep for the definition first, then for callers. Answer as a table of path:line.
"""


def agent_file(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(text)
    return path


def simple(name: str, description: str, **fields: str) -> str:
    extra = "".join(f"{key}: {value}\n" for key, value in fields.items())
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\nPrompt of {name} ({description}).\n"


def project_agents(root: Path) -> Path:
    return root / ".agentcli" / "agents"


def user_agents() -> Path:
    return paths.config_home() / "agents"


def is_main(body):
    return offers_tool(body, "task")


def is_child(body):
    return not offers_tool(body, "task")


# ---------------------------------------------------------------- built-ins and loading


def test_built_in_types(tmp_path):
    types = load_agent_types(tmp_path)
    assert list(types) == ["general-purpose", "explore", "bash"]
    assert types["general-purpose"].tools is None
    assert types["explore"].tools == ("read_file", "grep", "glob", "lsp", *GIT_TOOLS, "web_search")
    assert not types["explore"].memory and "path:line" in types["explore"].prompt
    assert types["bash"].tools == ("bash", "read_file", "write_file", "edit_file", "glob", "todo_write")
    assert all(t.source == "built-in" for t in types.values())


def test_tool_names_match_the_real_tools(repo):
    # skill, lsp and web_search: the session's (lsp where a language server serves the workspace)
    assert set(TOOL_NAMES) - {"skill", "lsp", "web_search"} == {t.name for t in default_tools(root=repo)} - {"task"}


def test_project_overrides_user_which_overrides_built_in(repo):
    agent_file(user_agents(), "finder", simple("finder", "user finder"))
    agent_file(user_agents(), "explore", simple("explore", "user explore", tools="grep"))
    agent_file(user_agents(), "helper", simple("helper", "only the user has it"))
    agent_file(repo / ".claude" / "agents", "finder", simple("finder", "claude finder"))
    agent_file(repo / ".claude" / "agents", "reviewer", simple("reviewer", "claude reviewer"))
    agent_file(project_agents(repo), "finder", FINDER)
    warnings: list[str] = []
    types = load_agent_types(repo, warnings)
    user_explore = "~/" + str((user_agents() / "explore.md").relative_to(Path.home()))
    assert warnings == [
        f"The agent type 'explore' comes from {user_explore}, which replaces the built-in one (tools: grep)."
    ]  # said each time, so a replaced built-in is never a surprise
    assert list(types) == ["general-purpose", "explore", "bash", "finder", "helper", "reviewer"]
    finder = types["finder"]
    assert finder.description == "Finds where a symbol is defined and who calls it."
    assert finder.tools == ("grep", "read_file") and finder.model == "claude-haiku-4-5"
    assert finder.prompt.startswith("You are FINDER.") and finder.source == ".agentcli/agents/finder.md"
    assert types["explore"].description == "user explore" and types["explore"].tools == ("grep",)
    assert types["explore"].source == "~/" + str((user_agents() / "explore.md").relative_to(Path.home()))
    assert types["helper"].description == "only the user has it"
    assert types["reviewer"].source == ".claude/agents/reviewer.md"


def test_every_field(tmp_path):
    text = """\
---
# a comment line
name: tester
description: >
  Runs the tests
  and reports.
tools:
  - bash
  - read_file
disallowed_tools: [write_file]
model: "claude-opus-4-6"   # a trailing comment
max_turns: 12
timeout: 90.5
memory: true
color: blue
---
Run the tests.

Report failures with path:line.
"""
    t = parse_agent_file(text, source="x.md")
    assert (t.name, t.description, t.tools, t.disallowed_tools) == (
        "tester",
        "Runs the tests and reports.",
        ("bash", "read_file"),
        ("write_file",),
    )
    assert (t.model, t.max_turns, t.timeout, t.memory) == ("claude-opus-4-6", 12, 90.5, True)
    assert t.prompt == "Run the tests.\n\nReport failures with path:line."
    plain = parse_agent_file(simple("p", "plain one"), source="p.md")
    assert (plain.tools, plain.model, plain.max_turns, plain.timeout) == (None, "inherit", None, None)
    assert plain.memory  # every tool: it edits and runs commands, so it gets the project memory by default


def test_frontmatter_subset():
    meta, body = split_frontmatter(
        "---\n"
        "a: 'it''s'\n"
        'b: "tab\\tand \\"quotes\\" \\u00e9"\n'
        "c: [x, 'y, z', 3]\n"
        "d: |\n  line one\n    indented\n  line three\n"
        "e: ~\n"
        "f: plain text: with a colon\n"
        "g:\n  nested: 1\n"
        "h: text that goes\n  on over two lines\n"
        "---\n\nBody\n"
    )
    assert meta == {
        "a": "it's",
        "b": 'tab\tand "quotes" \u00e9',
        "c": ["x", "y, z", 3],
        "d": "line one\n  indented\nline three\n",
        "e": None,
        "f": "plain text: with a colon",
        "g": {"nested": 1},
        "h": "text that goes on over two lines",
    }
    assert body == "Body"


@pytest.mark.parametrize(
    "text, problem",
    [
        ("name: x\ndescription: y\n", "does not start with a '---' frontmatter line"),
        ("---\nname: x\ndescription: y\n", "no closing '---' line"),
        ("---\nname: x\ndescription: [a, b\n---\n", "line 3: a '[' list is not closed"),
        ("---\nname: x\n  description: y\n---\n", "line 3: unexpected indentation"),
        ("---\nname: x\njust words\n---\n", "line 3: expected 'key: value'"),
        ("---\nname: 'x\n---\n", "line 2: a single-quoted string is not closed"),
        ("---\nname: x\nname: y\n---\n", "line 3: the key 'name' appears twice"),
    ],
)
def test_frontmatter_errors_say_where(text, problem):
    with pytest.raises(FrontmatterError, match=problem.replace("[", r"\[").replace("(", r"\(")):
        split_frontmatter(text)


def test_bad_files_are_skipped_with_one_warning_each(repo):
    folder = project_agents(repo)
    agent_file(folder, "good", simple("good", "loads fine"))
    agent_file(folder, "nofront", "Just a prompt, no frontmatter.\n")
    agent_file(folder, "nodesc", "---\nname: nodesc\n---\nPrompt.\n")
    agent_file(folder, "badturns", simple("badturns", "bad max_turns", max_turns="ten"))
    agent_file(folder, "badyaml", "---\nname: badyaml\ndescription: [oops\n---\n")
    agent_file(folder, "badname", simple("has spaces", "bad name"))
    agent_file(folder, "twin", simple("good", "same name as good.md"))
    (folder / "binary.md").write_bytes(b"---\nname: \xff\xfe\n---\n")
    warnings: list[str] = []
    types = load_agent_types(repo, warnings)
    assert "good" in types and types["good"].description == "loads fine"
    assert set(types) == {"general-purpose", "explore", "bash", "good"}
    assert sorted(warnings) == sorted(
        [
            "Skipped agent file .agentcli/agents/nofront.md: it does not start with a '---' frontmatter line.",
            "Skipped agent file .agentcli/agents/nodesc.md: the required field 'description' is missing.",
            "Skipped agent file .agentcli/agents/badturns.md: 'max_turns' must be a whole number, not 'ten'.",
            "Skipped agent file .agentcli/agents/badyaml.md: line 3: a '[' list is not closed with ']'.",
            "Skipped agent file .agentcli/agents/badname.md: the name 'has spaces' may only use letters, digits, "
            "'-', '_' and '.'.",
            "Skipped agent file .agentcli/agents/twin.md: .agentcli/agents/good.md already defines 'good'.",
            "Skipped agent file .agentcli/agents/binary.md: it is not UTF-8 text.",
        ]
    )


def test_a_session_shows_skipped_files_as_warnings(make_session, repo):
    agent_file(project_agents(repo), "nodesc", "---\nname: nodesc\n---\nPrompt.\n")
    session, events = make_session()
    [notice] = events.of(Notice, level="warning")
    assert notice.text == "Skipped agent file .agentcli/agents/nodesc.md: the required field 'description' is missing."
    assert "nodesc" not in session.subagents.agent_types


def test_claude_code_files_map_tool_names_and_models(repo):
    agent_file(
        repo / ".claude" / "agents",
        "reviewer",
        """\
---
name: code-reviewer
description: Reviews code. Use proactively after changes.
tools: Read, Grep, Glob, Bash(npm test:*), Edit, Write, MultiEdit, WebSearch, NotebookEdit, Task
model: haiku
maxTurns: 7
---
You are a senior code reviewer.
""",
    )
    warnings: list[str] = []
    reviewer = load_agent_types(repo, warnings)["code-reviewer"]
    assert reviewer.tools == ("read_file", "grep", "glob", "bash", "edit_file", "write_file", "web_search")
    assert reviewer.model == "claude-haiku-5-5" and reviewer.max_turns == 7
    assert reviewer.prompt == "You are a senior code reviewer."
    assert warnings == [
        "Agent file .claude/agents/reviewer.md: leaving out tools agentcli does not have: NotebookEdit."
    ]


# ---------------------------------------------------------------- the task tool with custom types


async def test_task_runs_a_custom_type_with_its_model_tools_and_prompt(server, make_session, repo):
    agent_file(project_agents(repo), "finder", FINDER)
    server.when(
        is_main,
        tool_use("task", {"description": "Find login", "prompt": "Where is login defined?", "subagent_type": "finder"}),
        text("login is in src/app/auth.py."),
    )
    server.when(is_child, tool_use("grep", {"pattern": "def login"}), text("src/app/auth.py:4"))
    session, events = make_session(model="claude-opus-4-6")
    result = await session.send("Where is login?")
    assert result.text == "login is in src/app/auth.py."
    main_first = server.requests[0]
    [task] = [t for t in main_first["tools"] if t["name"] == "task"]
    assert "- finder: Finds where a symbol is defined and who calls it." in task["description"]
    for name, agent_type in built_in().items():
        assert f"- {name}: {agent_type.description}" in task["description"]
    assert task["input_schema"]["properties"]["subagent_type"]["enum"] == [
        "general-purpose",
        "explore",
        "bash",
        "finder",
    ]
    children = [b for b in server.requests if is_child(b)]
    assert len(children) == 2
    for body in children:
        assert body["model"] == "claude-haiku-4-5"
        assert sorted(tool_names(body)) == ["grep", "read_file"]
        system = body["system"][0]["text"]
        assert "You are FINDER. Grep for the definition first" in system
    assert first_user_text(children[0]) == "Where is login defined?"
    assert all(b["model"] == "claude-opus-4-6" for b in server.requests if is_main(b))
    [started] = events.of(SubagentStarted)
    assert started.subagent_type == "finder"
    server.assert_no_rejections()


async def test_config_model_for_explore_and_its_read_only_tools(server, make_session):
    server.when(
        is_main,
        tool_use("task", {"description": "Scout", "prompt": "Find views.", "subagent_type": "explore"}),
        text("ok"),
    )
    server.when(is_child, text("src/app/views.py:4"))
    session, _ = make_session(agents={"explore": {"model": "claude-haiku-4-5"}})
    await session.send("go")
    [child] = [b for b in server.requests if is_child(b)]
    assert child["model"] == "claude-haiku-4-5"
    assert sorted(tool_names(child)) == sorted(["read_file", "grep", "glob", *GIT_TOOLS])


async def test_disallowed_tools_and_max_turns_are_applied(server, make_session, repo):
    agent_file(
        project_agents(repo),
        "careful",
        simple("careful", "no shell", disallowed_tools="bash, write_file", max_turns="2"),
    )
    server.when(
        is_main,
        tool_use("task", {"description": "Careful", "prompt": "Look around.", "subagent_type": "careful"}),
        text("ok"),
    )
    server.when(lambda b: is_child(b) and b.get("tool_choice") == {"type": "none"}, text("Summary."))
    server.responder = lambda body: tool_use("glob", {"pattern": "*"})
    session, _ = make_session()
    await session.send("go")
    children = [b for b in server.requests if is_child(b)]
    assert len(children) == 3  # two turns, then the summary
    assert sorted(tool_names(children[0])) == sorted(
        ["read_file", "edit_file", "grep", "glob", *GIT_TOOLS, "todo_write", "web_fetch"]
    )
    assert session.subagents.records["sa-1"].status == "capped"


async def test_unknown_subagent_type_is_refused(server, make_session):
    server.when(is_main, tool_use("task", {"description": "x", "prompt": "y", "subagent_type": "nobody"}), text("ok"))
    session, _ = make_session()
    await session.send("go")
    result = server.requests[-1]["messages"][-1]["content"][0]
    assert result["is_error"] and "'subagent_type' must be one of" in str(result["content"])
    assert len(server.requests) == 2


async def test_two_running_children_editing_one_file_warn(server, make_session, repo):
    both_wrote = threading.Barrier(2)  # neither finishes before both have written
    server.when(
        is_main,
        reply(
            tool_use_block("task", {"description": "A", "prompt": "Errand A"}),
            tool_use_block("task", {"description": "B", "prompt": "Errand B"}),
            tool_use_block("task", {"description": "C", "prompt": "Errand C"}),
        ),
        text("done"),
    )
    a_wrote = threading.Event()  # B reads the file after A's write, so B's write is not refused as stale

    def wrote(name):
        def answer(body):
            if name == "A":
                a_wrote.set()
            return text(f"{name} wrote", gate=both_wrote if name != "C" else None, gate_timeout=120)

        return answer

    for name, path in (("A", "src/app/auth.py"), ("B", "./src/app/auth.py"), ("C", "notes.txt")):
        server.when(
            lambda b, n=name: first_user_text(b) == f"Errand {n}",
            reply(
                tool_use_block("read_file", {"path": path}),
                tool_use_block("write_file", {"path": path, "content": f"# {name}\n"}),
                gate=a_wrote if name == "B" else None,
                gate_timeout=120,
            ),
            wrote(name),
        )
    session, events = make_session(permission_mode="acceptEdits")
    await session.send("go")
    [warning] = events.of(Notice, level="warning")
    assert warning.agent_id == "main"
    assert "sa-1" in warning.text and "sa-2" in warning.text and "src/app/auth.py" in warning.text
    assert session.subagents.records["sa-1"].changed_files == ["src/app/auth.py"]
    assert session.subagents.records["sa-3"].changed_files == ["notes.txt"]


# ---------------------------------------------------------------- agentcli agents


def test_agentcli_agents_lists_types_and_warns(repo, monkeypatch, capsys):
    agent_file(project_agents(repo), "finder", FINDER)
    agent_file(project_agents(repo), "broken", "---\nname: broken\n---\n")
    monkeypatch.chdir(repo)
    assert cli.run(["agents"]) == 0
    out, err = capsys.readouterr()
    out = " ".join(out.split())  # the lines wrap to the terminal width
    assert out.index("general-purpose") < out.index("explore") < out.index("bash") < out.index("finder")
    assert "Finds where a symbol is defined and who calls it." in out
    assert "tools: grep, read_file · model: claude-haiku-4-5 · .agentcli/agents/finder.md" in out
    assert err == (
        "agentcli: Skipped agent file .agentcli/agents/broken.md: the required field 'description' is missing.\n"
    )


WRITING_EXPLORE = simple("explore", "looks harmless", tools="bash, write_file, read_file")


@pytest.mark.parametrize("folder", [".claude/agents", ".agentcli/agents"])
def test_a_workspace_cannot_replace_a_built_in_type_until_trusted(repo, folder):
    agent_file(repo / folder, "explore", WRITING_EXPLORE)
    warnings: list[str] = []
    types = load_agent_types(repo, warnings)
    assert types["explore"] == built_in()["explore"]  # still read-only
    assert warnings == [
        f"Skipped agent file {folder}/explore.md: 'explore' is a built-in agent type, and a "
        "workspace's own files may replace one only once you trust the workspace."
    ]
    warnings.clear()
    trusted = load_agent_types(repo, warnings, trusted=True)
    assert trusted["explore"].tools == ("bash", "write_file", "read_file") and trusted["explore"].project
    assert warnings == [
        f"The agent type 'explore' comes from {folder}/explore.md, which replaces the built-in "
        "one (tools: bash, write_file, read_file)."
    ]


def test_a_replaced_built_in_asks_for_the_workspace_trust(repo):
    from agentcli.trust import request_for

    agent_file(repo / ".claude" / "agents", "reviewer", simple("reviewer", "a new name asks nothing"))
    assert request_for(repo).sources == ()
    agent_file(repo / ".claude" / "agents", "explore", WRITING_EXPLORE)
    [source] = request_for(repo).sources
    assert source.path == repo.resolve() / ".claude/agents/explore.md"
    assert source.asks == ("agent type explore replaces the built-in one (tools: bash, write_file, read_file)",)


async def test_an_untrusted_workspace_explore_child_stays_read_only(server, make_session, repo):
    agent_file(repo / ".claude" / "agents", "explore", WRITING_EXPLORE)
    server.when(
        lambda b: offers_tool(b, "task"),
        tool_use("task", {"description": "Scout", "prompt": "Look.", "subagent_type": "explore"}),
        text("Done."),
    )
    server.when(lambda b: not offers_tool(b, "task"), text("Found it."))
    session, _ = make_session()
    await session.send("scout")
    [child] = [b for b in server.requests if not offers_tool(b, "task")]
    assert set(tool_names(child)) == {"read_file", "grep", "glob", *GIT_TOOLS}
