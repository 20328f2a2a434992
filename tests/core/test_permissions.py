"""Permissions against the stand-in server: modes, rules, compound commands, the workspace boundary,
protected paths, approvals answered like the TUI modal does, subagents, and secrets."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentcli import paths
from agentcli.config import ConfigError, load_settings
from agentcli.core.events import (
    ALLOW_ALWAYS,
    ALLOW_ONCE,
    ALLOW_SESSION,
    DENY,
    ApprovalRequested,
    Notice,
    SubagentFinished,
    ToolCallFinished,
)
from agentcli.core.policy.permissions import Permissions
from agentcli.core.policy.rules import Rule, save_allow_rule, split_command
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.shell import Bash
from tests.conftest import API_KEY, TOOLS
from tests.fakes.anthropic_server import (
    first_user_text,
    offers_tool,
    reply,
    text,
    tool_result_text,
    tool_results,
    tool_use,
    tool_use_block,
)


def answer_with(session: Any, events: Any, answers: list[str] | Callable[[ApprovalRequested], str]) -> None:
    """Answer approval requests the way the TUI modal does: by resolving the request's future."""
    queue = list(answers) if isinstance(answers, list) else []

    def sink(event: Any) -> None:
        events(event)
        if isinstance(event, ApprovalRequested):
            assert event.future is not None
            event.future.set_result(answers(event) if callable(answers) else queue.pop(0))

    session.sink = sink


def results_of(server: Any, index: int = 1) -> list[tuple[bool, str]]:
    return [(bool(r.get("is_error")), tool_result_text(r)) for r in tool_results(server.requests[index])]


@pytest.fixture
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    place = tmp_path_factory.mktemp("outside")
    (place / "victim.txt").write_text("keep\n")
    return place


# ---------------------------------------------------------------- every mode, every kind of call


CALLS = {
    "bash": ("bash", {"command": "touch ran.txt"}),
    "write": ("write_file", {"path": "new.txt", "content": "new\n"}),
    "edit": ("edit_file", {"path": "README.md", "old_string": "Demo app", "new_string": "Edited app"}),
    "dotdot": ("write_file", {"path": "../escape.txt", "content": "x"}),
    "absolute": ("write_file", {"path": "{outside}/abs.txt", "content": "x"}),
    "symlink": ("write_file", {"path": "out/link.txt", "content": "x"}),
    "symlink_edit": ("edit_file", {"path": "out/victim.txt", "old_string": "keep", "new_string": "lost"}),
}
RUNS = {  # which calls run headless in each mode
    "default": set(),
    "acceptEdits": {"write", "edit"},
    "plan": set(),
    "bypassPermissions": set(CALLS),
}
FLAG = {  # the flag a headless refusal names, per mode and call
    "default": {"bash": "bypassPermissions", "write": "acceptEdits", "edit": "acceptEdits"},
    "acceptEdits": {"bash": "bypassPermissions"},
    "plan": {"bash": "bypassPermissions", "write": "acceptEdits", "edit": "acceptEdits"},
}


@pytest.mark.parametrize("mode", list(RUNS))
async def test_each_mode_runs_exactly_what_it_should(server, make_session, repo, outside, mode):
    (repo / "out").symlink_to(outside)
    blocks = [
        tool_use_block(name, {k: v.replace("{outside}", str(outside)) for k, v in args.items()})
        for name, args in CALLS.values()
    ]
    reads = [tool_use_block("read_file", {"path": path}) for path in ("README.md", "out/victim.txt")]
    server.script(reply(*reads), reply(*blocks), text("done"))  # edits need a read first
    session, events = make_session(permission_mode=mode)
    await session.send("Do everything")
    outcomes = dict(zip(CALLS, results_of(server, 2), strict=True))
    for label, (is_error, output) in outcomes.items():
        assert is_error == (label not in RUNS[mode]), (label, output)
        if label in FLAG.get(mode, {}):
            assert f"--permission-mode {FLAG[mode][label]}" in output, output
        if label in ("dotdot", "absolute", "symlink", "symlink_edit") and mode != "bypassPermissions":
            assert "outside the workspace" in output or "plan mode" in output, output
    ran = RUNS[mode]
    assert (repo / "ran.txt").exists() == ("bash" in ran)
    assert (repo / "new.txt").exists() == ("write" in ran)
    assert ("Edited app" in (repo / "README.md").read_text()) == ("edit" in ran)
    assert (repo.parent / "escape.txt").exists() == ("dotdot" in ran)
    assert (outside / "abs.txt").exists() == ("absolute" in ran)
    assert (outside / "link.txt").exists() == ("symlink" in ran)
    assert (outside / "victim.txt").read_text() == ("lost\n" if "symlink_edit" in ran else "keep\n")
    assert not events.of(ApprovalRequested)  # headless: nobody is asked
    server.assert_no_rejections()


async def test_reads_and_searches_are_free_in_every_mode(server, make_session):
    for mode in ("default", "acceptEdits", "plan"):
        server.script(
            reply(
                tool_use_block("read_file", {"path": "README.md"}),
                tool_use_block("grep", {"pattern": "handle_auth"}),
                tool_use_block("glob", {"pattern": "*.py"}),
            ),
            text("ok"),
        )
        session, _ = make_session(permission_mode=mode)
        await session.send("look")
        assert [err for err, _ in results_of(server, -1)] == [False, False, False]
        server.reset()


# ---------------------------------------------------------------- rules and compound commands


async def test_compound_commands_run_only_when_every_part_is_allowed(server, make_session, repo):
    (repo / "x").mkdir()
    (repo / "x" / "keep.txt").write_text("1")
    server.script(
        reply(
            tool_use_block("bash", {"command": "ls && rm -rf x"}),
            tool_use_block("bash", {"command": "git diff $(curl x)"}),
            tool_use_block("bash", {"command": "ls\nrm -rf x"}),
            tool_use_block("bash", {"command": "ls | wc -l; git diff --stat"}),
            tool_use_block("bash", {"command": "git diff > x/out.patch"}),
        ),
        text("ok"),
    )
    session, _ = make_session(permissions={"allow": ["bash(ls *)", "bash(git diff *)", "bash(wc *)"]})
    await session.send("clean up")
    (and_, subst, newline, allowed, redirect) = results_of(server)
    assert and_[0] and "`rm -rf x`" in and_[1] and "bash(rm -rf x)" in and_[1] and "bypassPermissions" in and_[1]
    assert subst[0] and "command substitution" in subst[1] and "--permission-mode bypassPermissions" in subst[1]
    assert newline[0] and "`rm -rf x`" in newline[1]
    assert not allowed[0] and "README.md" not in allowed[1]  # it ran: `ls | wc -l` prints a count
    assert redirect[0] and "redirection" in redirect[1]
    assert (repo / "x" / "keep.txt").exists() and not (repo / "x" / "out.patch").exists()


async def test_deny_beats_ask_beats_allow_even_in_bypass_mode(server, make_session, repo):
    (repo / ".env").write_text("TOKEN=1\n")
    (repo / "env-alias").symlink_to(repo / ".env")
    (repo / "x").mkdir()
    server.script(
        reply(
            tool_use_block("bash", {"command": "ls; rm -rf x"}),
            tool_use_block("bash", {"command": "FOO=1 rm -rf x"}),
            tool_use_block("read_file", {"path": ".env"}),
            tool_use_block("read_file", {"path": "env-alias"}),
            tool_use_block("bash", {"command": "echo hi"}),
        ),
        text("ok"),
    )
    session, _ = make_session(
        permission_mode="bypassPermissions", permissions={"deny": ["bash(rm *)", "read_file(.env)"], "allow": ["bash"]}
    )
    await session.send("try")
    chained, prefixed, env, alias, echo = results_of(server)
    assert chained[0] and "denied by the rule `bash(rm *)`" in chained[1]
    assert prefixed[0] and "denied" in prefixed[1]
    assert env[0] and "read_file(.env)" in env[1] and alias[0] and "read_file(.env)" in alias[1]
    assert not echo[0] and echo[1].strip() == "hi"
    assert (repo / "x").is_dir()
    server.reset()
    # An ask rule beats an allow rule: headless, it is refused.
    server.script(tool_use("bash", {"command": "git push origin main"}), text("ok"))
    session, _ = make_session(permissions={"allow": ["bash(git *)"], "ask": ["bash(git push *)"]})
    await session.send("push")
    [(is_error, output)] = results_of(server)
    assert is_error and "ask rule `bash(git push *)`" in output


async def test_allow_rules_open_paths_and_commands_headless(server, make_session, repo):
    server.script(
        reply(
            tool_use_block("write_file", {"path": "docs/guide.md", "content": "# Guide\n"}),
            tool_use_block("write_file", {"path": "src/app/new.py", "content": "x = 1\n"}),
            tool_use_block("bash", {"command": "git status --short"}),
        ),
        text("ok"),
    )
    session, _ = make_session(permissions={"allow": ["write_file(docs/**)", "bash(git status *)"]})
    await session.send("write docs")
    docs, src, status = results_of(server)
    assert not docs[0] and (repo / "docs" / "guide.md").exists()
    assert src[0] and "write_file(src/app/new.py)" in src[1] and not (repo / "src" / "app" / "new.py").exists()
    assert not status[0]


def test_rule_parsing_and_matching(tmp_path):
    root = tmp_path
    assert Rule.parse("Bash(npm test *)").matches_command("npm test")
    assert Rule.parse("bash(npm test *)").matches_command("npm test -- --watch")
    assert not Rule.parse("bash(npm test *)").matches_command("npm tests")
    assert Rule.parse("Edit(src/**)").tools == ("edit_file", "write_file")
    assert Rule.parse("write_file(docs/**)").matches_path(root / "docs" / "a" / "b.md", root)
    assert not Rule.parse("write_file(docs/**)").matches_path(root / "src" / "docs.md", root)
    assert Rule.parse("read_file(.env)").matches_path(root / "sub" / ".env", root)
    assert Rule.parse("read_file(*.md)").matches_path(root / "a" / "README.md", root)
    assert Rule.parse("read_file(/etc/**)").matches_path(Path("/etc/hosts"), root)
    assert not Rule.parse("read_file(docs/**)").matches_path(Path("/elsewhere/docs/x"), root)
    assert Rule.parse("edit_file").pattern is None and Rule.parse("bash(*)").pattern is None
    line = split_command("a && b || c; d | e\nf & g")
    assert [c.text for c in line.commands] == list("abcdefg") and not line.substitution
    assert split_command("echo `id`").substitution and split_command("cat <(ls)").substitution
    assert [c.text for c in split_command("echo 'a && b'").commands] == ["echo 'a && b'"]


def test_rules_from_user_and_project_settings_add_up(repo, isolated_home):
    user = isolated_home / "config" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[permissions]\nallow = ["bash(npm test *)"]\ndeny = ["read_file(.env)"]\n')
    (repo / ".agentcli").mkdir()
    (repo / ".agentcli" / "settings.toml").write_text('[permissions]\nallow = ["bash(git diff *)"]\n')
    settings = load_settings(repo, trusted=True)  # project allow rules apply in a trusted workspace only
    assert settings.permissions == {"allow": ["bash(npm test *)", "bash(git diff *)"], "deny": ["read_file(.env)"]}
    (repo / ".agentcli" / "settings.toml").write_text('[permissions]\nallow = ["bash(npm test"]\n')
    with pytest.raises(ConfigError, match="cannot read the permission rule"):
        load_settings(repo)
    (repo / ".agentcli" / "settings.toml").write_text('[permissions]\nallways = ["bash"]\n')
    with pytest.raises(ConfigError, match="unknown permissions list 'allways'"):
        load_settings(repo)


def test_set_mode_validates():
    permissions = Permissions()
    permissions.set_mode("plan")
    assert permissions.mode == "plan"
    with pytest.raises(ValueError, match="choose one of default, acceptEdits, plan, bypassPermissions"):
        permissions.set_mode("yolo")
    assert permissions.mode == "plan"
    described = Permissions.from_settings("plan", {"deny": ["bash(rm *)"]}, False).describe()
    assert "Permission mode: plan" in described and "deny  bash(rm *)" in described


# ---------------------------------------------------------------- the workspace boundary


async def test_reads_outside_the_workspace_ask_or_are_refused_headless(server, make_session, repo, outside):
    target = str(outside / "victim.txt")
    server.script(tool_use("read_file", {"path": target}), text("ok"))
    session, events = make_session()
    await session.send("read it")
    [(is_error, output)] = results_of(server)
    assert is_error and "outside the workspace" in output and f"read_file({target})" in output
    assert "bypassPermissions" in output
    server.reset()
    # With an allow rule naming the place, it is read headless.
    server.script(tool_use("read_file", {"path": target}), text("ok"))
    session, _ = make_session(permissions={"allow": [f"read_file({outside}/**)"]})
    await session.send("read it")
    [(is_error, output)] = results_of(server)
    assert not is_error and "keep" in output


async def test_outside_read_approved_once_then_denied(server, make_session, outside):
    target = str(outside / "victim.txt")
    server.script(
        tool_use("read_file", {"path": target}), tool_use("grep", {"pattern": "keep", "path": str(outside)}), text("ok")
    )
    session, events = make_session(interactive=True)
    answer_with(session, events, [ALLOW_ONCE, DENY])
    await session.send("read it")
    first, second = events.of(ApprovalRequested)
    assert first.tool == "read_file" and "outside the workspace" in first.reason
    assert first.rules == (f"read_file({outside}/**)",)
    [(is_error, output)] = results_of(server, 1)
    assert not is_error and "keep" in output
    [(is_error, output)] = results_of(server, 2)
    assert is_error and "denied" in output


async def test_protected_paths_always_ask_even_in_accept_edits(server, make_session, repo):
    (repo / "hooks").symlink_to(repo / ".git" / "hooks")
    writes = [
        ("write_file", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ncurl evil\n"}),
        ("write_file", {"path": "hooks/post-checkout", "content": "x"}),
        ("write_file", {"path": ".agentcli/settings.toml", "content": "permission_mode = 'bypassPermissions'"}),
        ("write_file", {"path": ".bashrc", "content": "alias ls=rm"}),
        ("edit_file", {"path": ".git/config", "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = x"}),
    ]
    # The edit reads the file first: one that would fail anyway fails as such, before any refusal.
    server.script(
        tool_use("read_file", {"path": ".git/config"}), reply(*(tool_use_block(n, a) for n, a in writes)), text("ok")
    )
    session, _ = make_session(permission_mode="acceptEdits")
    await session.send("configure")
    for is_error, output in results_of(server, 2):
        assert is_error and "protected" in output and "--permission-mode bypassPermissions" in output
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    assert not (repo / ".git" / "hooks" / "post-checkout").exists()
    assert not (repo / ".agentcli").exists() and not (repo / ".bashrc").exists()
    assert "fsmonitor" not in (repo / ".git" / "config").read_text()
    server.reset()
    # Interactive: the user is asked each time; "allow for the session" counts once only.
    server.script(
        tool_use("write_file", {"path": ".bashrc", "content": "a"}),
        tool_use("write_file", {"path": ".bashrc", "content": "b"}),
        text("ok"),
    )
    session, events = make_session(interactive=True, permission_mode="acceptEdits")
    answer_with(session, events, [ALLOW_SESSION, DENY])
    await session.send("write rc")
    first, second = events.of(ApprovalRequested)
    assert "protected" in first.reason and first.rules == ()
    assert (repo / ".bashrc").read_text() == "a"
    assert any("Allowed once" in n.text for n in events.of(Notice))


# ---------------------------------------------------------------- the approval modal's answers


async def test_allow_once_asks_again_next_time(server, make_session, repo):
    server.script(
        tool_use("bash", {"command": "touch one.txt"}), tool_use("bash", {"command": "touch one.txt"}), text("ok")
    )
    session, events = make_session(interactive=True)
    answer_with(session, events, [ALLOW_ONCE, DENY])
    await session.send("touch")
    assert len(events.of(ApprovalRequested)) == 2
    assert (repo / "one.txt").exists()
    [(is_error, output)] = results_of(server, 2)
    assert is_error and "The user denied this bash call" in output
    assert session.permissions.session_rules == []


async def test_allow_session_scopes_bash_to_the_command_and_edits_to_the_tool(server, make_session, repo):
    server.script(
        tool_use("bash", {"command": "git status"}),
        tool_use("bash", {"command": "git status --short"}),  # covered: no question
        tool_use("bash", {"command": "git log -1"}),  # not covered: asks
        tool_use("read_file", {"path": "README.md"}),  # edits need a read first
        tool_use("edit_file", {"path": "README.md", "old_string": "Demo", "new_string": "Fine"}),
        tool_use("edit_file", {"path": "README.md", "old_string": "tiny", "new_string": "small"}),
        tool_use("write_file", {"path": "w.txt", "content": "w"}),  # another tool: asks
        text("ok"),
    )
    session, events = make_session(interactive=True)
    answer_with(session, events, [ALLOW_SESSION, DENY, ALLOW_SESSION, DENY])
    await session.send("work")
    asked = events.of(ApprovalRequested)
    assert [(a.tool, a.input.get("command") or a.input.get("path")) for a in asked] == [
        ("bash", "git status"),
        ("bash", "git log -1"),
        ("edit_file", "README.md"),
        ("write_file", "w.txt"),
    ]
    assert asked[0].rules == ("bash(git status *)",) and asked[2].rules == ("edit_file",)
    assert [r.text for r in session.permissions.session_rules] == ["bash(git status *)", "edit_file"]
    assert session.permissions.session_allowed == {"bash(git status *)", "edit_file"}  # /permissions shows these
    assert (repo / "README.md").read_text().startswith("# Fine app") and "small" in (repo / "README.md").read_text()
    assert not (repo / "w.txt").exists()
    assert not (repo / ".agentcli").exists()  # session answers write nothing


async def test_allow_always_saves_the_rule_in_your_own_config_and_later_runs_use_it(server, make_session, repo):
    project_file = repo / ".agentcli" / "settings.toml"
    project_file.parent.mkdir()
    project_file.write_text('# my settings\nmodel = "claude-sonnet-4-5"\n\n[permissions]\ndeny = ["bash(rm *)"]\n')
    before = project_file.read_text()
    server.script(tool_use("bash", {"command": "git log --oneline -3"}), text("ok"))
    session, events = make_session(interactive=True)
    answer_with(session, events, [ALLOW_ALWAYS])
    await session.send("log")
    assert not results_of(server)[0][0]
    assert project_file.read_text() == before  # the repository's file stays as it was
    own = paths.workspace_config_file(repo)
    assert own.read_text() == '[permissions]\nallow = ["bash(git log *)"]\n'
    settings = load_settings(repo)  # your own answer: it needs no trust of the workspace
    assert settings.permissions == {"allow": ["bash(git log *)"], "deny": ["bash(rm *)"]}
    assert settings.model == "claude-sonnet-4-5"
    server.reset()
    # A later headless run in default mode runs it without asking anyone.
    server.script(tool_use("bash", {"command": "git log --oneline"}), text("ok"))
    session, events = make_session(permissions=settings.permissions)
    await session.send("log again")
    [(is_error, output)] = results_of(server)
    assert not is_error and "Initial commit" in output


def test_save_allow_rule_keeps_the_file_and_extends_lists(tmp_path):
    path = tmp_path / "s.toml"
    save_allow_rule(path, "bash(npm test *)")
    assert path.read_text() == '[permissions]\nallow = ["bash(npm test *)"]\n'
    path.write_text('[permissions]  # mine\nallow = [\n  "a",  # first\n  "b",\n]\nask = ["c"]\n\n[agents]\n')
    save_allow_rule(path, "bash(x)")
    save_allow_rule(path, "bash(x)")  # twice: once in the file
    import tomllib

    data = tomllib.loads(path.read_text())
    assert data["permissions"] == {"allow": ["a", "b", "bash(x)"], "ask": ["c"]} and data["agents"] == {}
    assert path.read_text().startswith("[permissions]  # mine\n")


# ---------------------------------------------------------------- subagents


def is_child(body: dict[str, Any]) -> bool:
    return not offers_tool(body, "task")


async def test_a_child_in_plan_mode_cannot_write(server, make_session, repo):
    server.when(
        lambda b: not is_child(b),
        tool_use("task", {"description": "Fix readme", "prompt": "Fix README."}),
        text("The child could not write."),
    )
    server.when(
        is_child,
        tool_use("write_file", {"path": "README.md", "content": "gone"}),
        tool_use("bash", {"command": "touch child.txt"}),
        text("Plan mode refused my write."),
    )
    session, events = make_session(permission_mode="plan")
    result = await session.send("Delegate the fix")
    assert result.text == "The child could not write."
    child = [f for f in events.of(ToolCallFinished) if f.agent_id == "sa-1"]
    assert [(f.name, f.is_error) for f in child] == [("write_file", True), ("bash", True)]
    assert all("plan mode" in f.output for f in child)
    assert (repo / "README.md").read_text().startswith("# Demo app") and not (repo / "child.txt").exists()
    [finished] = events.of(SubagentFinished)
    assert finished.status == "done"


async def test_denying_one_child_leaves_its_sibling_running(server, make_session, repo):
    server.when(
        lambda b: not is_child(b),
        reply(
            tool_use_block("task", {"description": "Make file A", "prompt": "Create a.txt with touch."}),
            tool_use_block("task", {"description": "Make file B", "prompt": "Create b.txt with touch."}),
        ),
        text("One of two."),
    )
    server.when(
        lambda b: is_child(b) and "a.txt" in first_user_text(b) and not tool_results(b),
        tool_use("bash", {"command": "touch a.txt"}),
    )
    server.when(
        lambda b: is_child(b) and "b.txt" in first_user_text(b) and not tool_results(b),
        tool_use("bash", {"command": "touch b.txt"}),
    )
    server.when(is_child, text("child done"), text("child done"))
    session, events = make_session(interactive=True)
    answer_with(session, events, lambda e: DENY if e.description == "Make file A" else ALLOW_ONCE)
    result = await session.send("Make both files")
    assert result.text == "One of two."
    asked = {e.agent_id: e.description for e in events.of(ApprovalRequested)}
    assert sorted(asked.values()) == ["Make file A", "Make file B"] and set(asked) == {"sa-1", "sa-2"}
    assert all(e.parent_tool_use_id for e in events.of(ApprovalRequested))
    assert not (repo / "a.txt").exists() and (repo / "b.txt").exists()
    denied = [f for f in events.of(ToolCallFinished, name="bash") if f.is_error]
    assert len(denied) == 1 and "denied" in denied[0].output
    assert sorted(f.status for f in events.of(SubagentFinished)) == ["done", "done"]


async def test_children_follow_a_mode_change_and_share_session_rules(server, make_session, repo):
    server.when(
        lambda b: not is_child(b),
        tool_use("bash", {"command": "git status"}),
        tool_use("task", {"description": "Check status", "prompt": "Run git status."}),
        text("ok"),
    )
    server.when(
        is_child,
        tool_use("bash", {"command": "git status --porcelain"}),
        tool_use("write_file", {"path": "c.txt", "content": "c"}),
        text("child done"),
    )
    session, events = make_session(interactive=True)
    answer_with(session, events, [ALLOW_SESSION])
    session.permissions.set_mode("acceptEdits")  # what /permissions does
    await session.send("status, then delegate")
    assert len(events.of(ApprovalRequested)) == 1  # the child's git status was covered by the session rule
    assert (repo / "c.txt").exists()  # acceptEdits reached the child


# ---------------------------------------------------------------- secrets


async def test_bash_children_cannot_see_the_api_key(repo, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    ctx = ToolContext(workspace=Workspace.at(repo), emit=lambda e: None, permissions=Permissions(), settings=TOOLS)
    out = await Bash().run({"command": 'echo "[$ANTHROPIC_API_KEY][$GITHUB_TOKEN]"; env'}, ctx)
    assert out.splitlines()[0] == "[][]"
    assert API_KEY not in out and "ghp_secret" not in out and "PATH=" in out
    assert os.environ["ANTHROPIC_API_KEY"] == API_KEY  # only the child's environment lost it


async def test_the_api_key_is_in_no_session_file(server, make_session, repo, isolated_home, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    server.script(tool_use("bash", {"command": "env; echo key=$ANTHROPIC_API_KEY"}), text("done"))
    session, _ = make_session(permission_mode="bypassPermissions")
    await session.send("show the environment")
    session.close()
    files = [f for f in isolated_home.rglob("*") if f.is_file()]
    assert files and all(API_KEY not in f.read_text(errors="replace") for f in files)


async def test_headless_a_call_bound_to_fail_fails_as_such_not_as_one_to_approve(server, make_session, repo):
    """-p said an edit of a file that does not exist "needs approval"; as in the app, the tool's own check
    comes first (docs/permissions.md), and what it says is what the model gets."""
    server.script(
        reply(
            tool_use_block("edit_file", {"path": "nope.py", "old_string": "a", "new_string": "b"}),
            tool_use_block("edit_file", {"path": "README.md", "old_string": "Demo app", "new_string": "x"}),
        ),
        text("done"),
    )
    session, _ = make_session()
    await session.send("edit")
    (missing, missing_said), (unread, unread_said) = results_of(server)
    assert missing and "needs approval" not in missing_said and "nope.py" in missing_said, missing_said
    assert unread and "needs approval" not in unread_said, unread_said  # an edit needs a read of the file first
    server.assert_no_rejections()


async def test_an_approved_calls_time_leaves_out_the_wait_for_the_answer(server, make_session, repo, monkeypatch):
    """The call's line said how long the user took to answer plus the run; the run is the call's time. The
    clock of the loop and the registry is one the test moves: the user 'takes' 1000 s to answer."""
    import types

    from agentcli.core import tools as tools_package
    from agentcli.core.engine import loop

    now = [0.0]
    clock = types.SimpleNamespace(monotonic=lambda: now[0])
    monkeypatch.setattr(loop, "time", clock)
    monkeypatch.setattr(tools_package, "time", clock)

    def slow_yes(event: ApprovalRequested) -> str:
        now[0] += 1000.0  # the answer comes after a long wait
        return ALLOW_ONCE

    server.script(tool_use("write_file", {"path": "new.txt", "content": "x"}), text("ok"))
    session, events = make_session(interactive=True)
    answer_with(session, events, slow_yes)
    await session.send("write it")
    [finished] = events.of(ToolCallFinished, name="write_file")
    assert not finished.is_error and finished.seconds < 1000.0, finished.seconds
