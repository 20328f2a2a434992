"""System prompts: memory files and git state for the main agent; memory for subagents only when asked."""

from __future__ import annotations

from typing import Any

from agentcli import paths
from agentcli.core.engine.agents import built_in, parse_agent_file
from agentcli.core.engine.context import (
    GIT_STATUS_LINES,
    MEMORY_FILE_CAP,
    MEMORY_TOTAL_CAP,
    main_system_prompt,
    subagent_system_prompt,
)
from agentcli.core.system.workspace import Workspace
from tests.conftest import git
from tests.fakes.anthropic_server import offers_tool, text, tool_names, tool_use

CONVENTIONS = "Always run `make lint` before you say you are done. Tabs, never spaces."


def system_of(body: dict[str, Any]) -> str:
    return body["system"][0]["text"]


async def test_agents_md_and_branch_reach_the_main_system_prompt(server, make_session, repo):
    git(repo, "checkout", "-q", "-b", "feature/login")
    (repo / "AGENTS.md").write_text(f"# Conventions\n\n{CONVENTIONS}\n")
    (repo / "CLAUDE.md").write_text("Claude-specific: prefer small commits.\n")
    user_memory = paths.config_home() / "AGENTS.md"
    user_memory.parent.mkdir(parents=True, exist_ok=True)
    user_memory.write_text("The user likes answers in British English.\n")
    server.script(text("Noted."))
    session, _ = make_session()
    await session.send("hello")
    system = system_of(server.requests[0])
    assert CONVENTIONS in system
    assert "Claude-specific: prefer small commits." in system
    assert "The user likes answers in British English." in system
    assert system.index("British English") < system.index(CONVENTIONS) < system.index("small commits")
    assert "## AGENTS.md\n# Conventions" in system and "## CLAUDE.md\n" in system
    assert "Current branch: feature/login" in system
    assert "Main branch (for comparisons and pull requests): main" in system
    assert "?? AGENTS.md" in system and "?? CLAUDE.md" in system
    assert "Recent commits:\n" in system and "Initial commit" in system
    assert set(tool_names(server.requests[0])) >= {"git_status", "git_diff", "git_log", "git_blame"}


def test_git_section(repo):
    for i in range(7):
        (repo / f"f{i}.txt").write_text("x")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"Commit number {i}")
    for i in range(GIT_STATUS_LINES + 5):
        (repo / f"untracked{i:02d}.txt").write_text("x")
    system = main_system_prompt(Workspace.at(repo))
    section = system[system.index("# Git") :]
    assert "Current branch: main" in section
    subjects = [line.split(" ", 1)[1] for line in section.split("Recent commits:\n")[1].splitlines()[:5]]
    assert subjects == [f"Commit number {i}" for i in (6, 5, 4, 3, 2)]
    assert "Initial commit" not in section
    assert "?? untracked00.txt" in section and f"?? untracked{GIT_STATUS_LINES:02d}.txt" not in section
    assert "… and 5 more changed files" in section


def test_clean_repository_says_so(repo):
    assert "Status: clean" in main_system_prompt(Workspace.at(repo))


def test_memory_files_are_capped(repo):
    (repo / "AGENTS.md").write_text("A" * (MEMORY_FILE_CAP + 5000))
    (repo / "CLAUDE.md").write_text("C" * (MEMORY_FILE_CAP + 5000))
    user_memory = paths.config_home() / "AGENTS.md"
    user_memory.parent.mkdir(parents=True, exist_ok=True)
    user_memory.write_text("U" * 100)
    system = main_system_prompt(Workspace.at(repo))
    assert "A" * MEMORY_FILE_CAP in system and "A" * (MEMORY_FILE_CAP + 1) not in system
    assert f"[… cut: AGENTS.md has {MEMORY_FILE_CAP + 5000:,} characters; only the first {MEMORY_FILE_CAP:,}" in system
    kept_c = MEMORY_TOTAL_CAP - MEMORY_FILE_CAP - 100
    assert "C" * kept_c in system and "C" * (kept_c + 1) not in system
    assert len(system) < MEMORY_TOTAL_CAP + 5000


def test_a_copy_of_agents_md_is_included_once(repo):
    (repo / "AGENTS.md").write_text(CONVENTIONS)
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")
    system = main_system_prompt(Workspace.at(repo))
    assert system.count(CONVENTIONS) == 1


async def test_a_workspace_outside_git(server, make_session, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "AGENTS.md").write_text(CONVENTIONS)
    server.script(text("Hi."))
    session, _ = make_session(plain)
    assert (await session.send("hello")).text == "Hi."
    body = server.requests[0]
    assert CONVENTIONS in system_of(body)
    assert "# Git" not in system_of(body) and "branch" not in system_of(body)
    assert not [n for n in tool_names(body) if n.startswith("git_")]
    server.assert_no_rejections()


def test_no_memory_files_no_section(repo):
    assert "# Project memory" not in main_system_prompt(Workspace.at(repo))


def test_subagents_that_edit_or_run_commands_see_the_memory_and_read_only_ones_do_not(repo):
    """The decision (docs/agents.md): the conventions are about changing things, so the types that change
    files or run commands get them; a read-only scout's brief carries what it needs, as the main prompt says."""
    (repo / "AGENTS.md").write_text(CONVENTIONS)
    workspace = Workspace.at(repo)
    assert CONVENTIONS not in subagent_system_prompt(workspace, built_in()["explore"])
    assert CONVENTIONS in subagent_system_prompt(workspace, built_in()["general-purpose"])
    assert CONVENTIONS in subagent_system_prompt(workspace, built_in()["bash"])

    def custom(fields: str):
        agent_type = parse_agent_file(f"---\nname: c\ndescription: d\n{fields}---\nMY PROMPT", source="c.md")
        prompt = subagent_system_prompt(workspace, agent_type)
        assert "MY PROMPT" in prompt
        return CONVENTIONS in prompt

    assert custom("")  # every tool
    assert custom("tools: read_file, edit_file\n")
    assert not custom("tools: read_file, grep\n")
    assert not custom("disallowed_tools: bash, write_file, edit_file\n")
    assert custom("tools: read_file\nmemory: true\n") and not custom("memory: false\n")
    assert "subagents do not, so put in their brief what they need from it" in main_system_prompt(workspace)


async def test_explore_child_gets_no_memory_but_a_memory_type_does(server, make_session, repo):
    (repo / "AGENTS.md").write_text(CONVENTIONS)
    agents = repo / ".agentcli" / "agents"
    agents.mkdir(parents=True)
    (agents / "keeper.md").write_text("---\nname: keeper\ndescription: Knows the rules.\nmemory: true\n---\nKEEPER\n")
    server.when(
        lambda b: offers_tool(b, "task") and len(b["messages"]) == 1,
        tool_use("task", {"description": "Scout", "prompt": "scout", "subagent_type": "explore"}),
    )
    server.when(
        lambda b: offers_tool(b, "task") and len(b["messages"]) == 3,
        tool_use("task", {"description": "Keep", "prompt": "keep", "subagent_type": "keeper"}),
    )
    server.when(lambda b: offers_tool(b, "task"), text("done"))
    server.responder = lambda body: text("child answer")
    session, _ = make_session()
    await session.send("go")
    children = {
        b["messages"][0]["content"][0]["text"]: system_of(b) for b in server.requests if not offers_tool(b, "task")
    }
    assert CONVENTIONS not in children["scout"]
    assert CONVENTIONS in children["keep"] and "KEEPER" in children["keep"]
    assert CONVENTIONS in system_of(server.requests[0])
    server.assert_no_rejections()


def test_unreadable_memory_is_skipped(repo):
    (repo / "AGENTS.md").mkdir()  # a directory where a file was expected
    assert "# Project memory" not in main_system_prompt(Workspace.at(repo))
