"""What editor users expect beyond the protocol's core, driven with the ACP SDK's own client: the client's files
(``fs/read_text_file``, ``fs/write_text_file``: unsaved buffers), the model picker, titles, modes kept across
session/load. One more `agentcli acp` process serves this module, its client offering its files; each test has
its own session, repository, buffers and replies."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import acp
import pytest
import pytest_asyncio
from acp import schema as s

from tests.e2e.test_acp_support import (  # noqa: F401
    ROOT,
    Agent,
    Client,
    Router,
    acp_home,
    attach,
    plain,
    plain_process,
    serve,
    server,
    shared,
    shared_server,
)
from tests.fakes.anthropic_server import FakeAnthropic, text, tool_use
from tests.narrow import of


class Editor(Client):
    """A client with buffers: a read gets the buffer (unsaved text) or the disk, a write lands in the buffer
    only (as an editor that has not saved yet)."""

    def __init__(self, answers: list[str] | None = None) -> None:
        super().__init__(answers)
        self.buffers: dict[str, str] = {}
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.asked: list[tuple[str, Any]] = []  # the servers' questions (elicitation/create)

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> s.ReadTextFileResponse:
        self.reads.append(path)
        return s.ReadTextFileResponse(content=self.buffers[path] if path in self.buffers else Path(path).read_text())

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> s.WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        return s.WriteTextFileResponse()

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> s.AcceptElicitationResponse:
        self.asked.append((message, mode))
        return s.AcceptElicitationResponse(action="accept", content={"name": "Ada", "count": 2})


class EditorRouter(Router):
    async def read_text_file(self, **kwargs: Any) -> s.ReadTextFileResponse:
        return await of(Editor, self.current).read_text_file(**kwargs)

    async def write_text_file(self, **kwargs: Any) -> s.WriteTextFileResponse:
        return await of(Editor, self.current).write_text_file(**kwargs)

    async def create_elicitation(self, **kwargs: Any) -> s.AcceptElicitationResponse:
        return await of(Editor, self.current).create_elicitation(**kwargs)


OFFERS = s.ClientCapabilities(
    fs=s.FileSystemCapabilities(read_text_file=True, write_text_file=True),
    terminal=True,
    elicitation=s.ElicitationCapabilities(form=s.ElicitationFormCapabilities()),
)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def editor_process(acp_home: Path, shared_server: FakeAnthropic) -> AsyncIterator[Agent]:
    async for agent in serve(
        acp_home,
        shared_server,
        subagents=False,
        router=EditorRouter(),
        capabilities=OFFERS,
        name="editor",
        unstable=True,
    ):
        yield agent


@pytest_asyncio.fixture(loop_scope="session")
async def editor(editor_process: Agent, server: FakeAnthropic) -> AsyncIterator[tuple[Agent, Editor]]:
    async for pair in attach(editor_process, Editor()):
        yield pair  # type: ignore[misc]


def results(client: Client, sid: str) -> list[s.ToolCallProgress]:
    return [u for u in client.of(s.ToolCallProgress, sid) if u.status in ("completed", "failed")]


def first_text(call: s.ToolCallProgress) -> str:
    """The text of a tool call's first content (what the editor shows of its result)."""
    first = of(s.ContentToolCallContent, call.content[0] if call.content else None)
    return of(s.TextContentBlock, first.content).text


@shared
async def test_the_file_tools_read_the_editors_buffer_and_edit_in_it(server, editor, repo):
    agent, client = editor
    readme = str(repo.resolve() / "README.md")
    client.buffers[readme] = "# Demo app\n\nA tiny app for tests, unsaved.\n"
    client.answers += ["allow_once", "allow_once"]
    server.script(
        tool_use("read_file", {"path": "README.md"}),
        tool_use("edit_file", {"path": "README.md", "old_string": "unsaved", "new_string": "edited"}),
        tool_use("write_file", {"path": "docs/new.md", "content": "fresh\n"}),
        text("Done."),
    )
    sid = await agent.new(repo)
    assert (await agent.prompt(sid, "Reword the README")).stop_reason == "end_turn"
    read, edit, write = results(client, sid)
    assert read.status == "completed" and "unsaved" in first_text(read)  # the buffer, not the disk
    # edit_file found text only the buffer holds, and its change went to the editor, not to the disk
    assert edit.status == "completed", first_text(edit)
    assert client.buffers[readme] == "# Demo app\n\nA tiny app for tests, edited.\n"
    assert (repo / "README.md").read_text() == "# Demo app\n\nA tiny app for tests.\n"
    assert write.status == "completed" and client.writes[-1] == (str(repo.resolve() / "docs/new.md"), "fresh\n")
    assert (repo / "docs").is_dir() and not (repo / "docs/new.md").exists()  # its folder made by agentcli
    assert client.invalid == [] and any(m.get("method") == "fs/read_text_file" for m in client.raw)


@shared
async def test_a_path_out_of_the_workspace_never_reaches_the_editor(server, editor, repo, tmp_path):
    """The attack: a repository's link (or the model's ``..``) naming a file outside the workspace. agentcli
    refuses it before the client is asked, as it would without the client's files (the client is trusted to
    read anything; the model is not)."""
    agent, client = editor
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=hunter2\n")
    (repo / "notes.md").symlink_to(secret)
    server.script(
        tool_use("read_file", {"path": "notes.md"}),
        tool_use("read_file", {"path": "../secret.txt"}),
        tool_use("edit_file", {"path": "notes.md", "old_string": "hunter2", "new_string": "x"}),
        tool_use("write_file", {"path": "../secret.txt", "content": "owned\n"}),
        text("Could not."),
    )
    sid = await agent.new(repo)
    await agent.prompt(sid, "Read the notes")
    outcomes = results(client, sid)
    assert [u.status for u in outcomes] == ["failed"] * 4
    assert all("hunter2" not in (u.content[0].content.text if u.content else "") for u in outcomes)
    assert client.reads == [] and client.writes == []
    assert secret.read_text() == "TOKEN=hunter2\n"


class Swapping(Editor):
    """A repository's process that swaps a folder of the path for a link to elsewhere while the editor reads it
    (a read follows links: it is the editor's own)."""

    def __init__(self, folder: Path, elsewhere: Path) -> None:
        super().__init__()
        self.folder, self.elsewhere = folder, elsewhere

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> s.ReadTextFileResponse:
        self.folder.rename(self.folder.with_name("moved"))
        self.folder.symlink_to(self.elsewhere)
        return await super().read_text_file(session_id, path, **kwargs)


@shared
async def test_a_link_swapped_in_while_the_editor_reads_fails_the_call(server, editor_process, repo, tmp_path):
    """The attack: the path passes every check, then a folder of it becomes a link out of the workspace before
    the editor opens it. agentcli resolves the path again once the editor answered, so what it read is dropped."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "app").mkdir(parents=True)
    (elsewhere / "app" / "auth.py").write_text("TOKEN=hunter2\n")
    async for agent, client in attach(editor_process, Swapping(repo / "src", elsewhere)):
        server.script(tool_use("read_file", {"path": "src/app/auth.py"}), text("Read."))
        sid = await agent.new(repo)
        await agent.prompt(sid, "Read auth")
        [read] = results(client, sid)
        assert of(Editor, client).reads == [str(repo.resolve() / "src/app/auth.py")]
        assert read.status == "failed" and "symbolic link was swapped" in first_text(read)
        assert "hunter2" not in str(server.requests[-1])


@shared
async def test_the_model_picker_titles_and_a_mode_that_session_load_restores(server, plain, editor, repo):
    agent, client = plain
    server.script(text("On it."))
    new = await agent.conn.new_session(cwd=str(repo), mcp_servers=[])
    sid = new.session_id
    client.sessions.append(sid)
    [picker] = new.config_options
    assert (picker.id, picker.category, picker.current_value) == ("model", "model", "claude-sonnet-5-5")
    assert [o.name for o in picker.options] == ["Sonnet", "Opus", "Haiku"]
    picked = await agent.conn.set_config_option(config_id="model", session_id=sid, value="claude-haiku-5-5")
    assert picked.config_options[0].current_value == "claude-haiku-5-5"
    await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
    await agent.prompt(sid, "Fix the login bug\nin src/app/auth.py")
    assert server.requests[-1]["model"] == "claude-haiku-5-5"
    assert [u.title for u in client.of(s.SessionInfoUpdate, sid)] == ["Fix the login bug"]
    # Another process (an editor opened again) loads it: the mode it was left in, and its title
    other, later = editor
    loaded = await other.conn.load_session(cwd=str(repo), session_id=sid, mcp_servers=[])
    later.sessions.append(sid)
    assert loaded.modes.current_mode_id == "plan"
    assert [u.title for u in later.of(s.SessionInfoUpdate, sid)] == ["Fix the login bug"]
    with pytest.raises(acp.RequestError, match="no option"):
        await other.conn.set_config_option(config_id="effort", session_id=sid, value="high")
    assert client.invalid == [] and later.invalid == []


@shared
async def test_a_command_runs_in_agentclis_sandbox_even_when_the_client_offers_terminals(server, editor, repo):
    """ACP's terminal/create runs a command in the client, out of agentcli's sandbox, and no method lets an agent
    write a terminal's output itself; so bash runs where it always runs, and the client gets its output."""
    agent, client = editor
    client.answers.append("allow_once")
    server.script(tool_use("bash", {"command": "touch ~/outside.txt; echo ran"}), text("Ran."))
    sid = await agent.new(repo)
    await agent.prompt(sid, "Run it")
    [ran] = results(client, sid)
    assert "ran" in first_text(ran)
    assert "Read-only file system" in first_text(ran)  # the sandbox held: $HOME is not writable
    assert not (agent.home / "outside.txt").exists()
    assert not [m for m in client.raw if str(m.get("method", "")).startswith("terminal/")]


@shared
async def test_a_servers_question_is_asked_in_the_editor_as_a_form(server, editor, repo):
    agent, client = editor
    features = s.McpServerStdio(
        name="features",
        command=sys.executable,
        args=["-m", "tests.fakes.mcp_features"],
        env=[s.EnvVariable(name="PYTHONPATH", value=str(ROOT))],
    )
    client.answers.append("allow_once")
    server.script(tool_use("mcp__features__ask", {}), text("Asked."))
    sid = await agent.new(repo, mcp_servers=[features])
    await agent.prompt(sid, "Ask me")
    [(message, mode)] = client.asked
    assert "What name should the report use?" in message and mode.session_id == sid
    assert set(mode.requested_schema.properties) == {"name", "count"} and mode.requested_schema.required == ["name"]
    [answered] = results(client, sid)
    assert "accept: Ada x2" in first_text(answered)
    assert client.invalid == []


@shared
async def test_a_subagent_reads_the_editors_buffer_too(server, editor, repo):
    from tests.fakes.anthropic_server import offers_tool

    agent, client = editor
    auth = str(repo.resolve() / "src/app/auth.py")
    client.buffers[auth] = "def handle_auth():\n    return 'UNSAVED-MARK'\n"
    server.when(
        lambda b: offers_tool(b, "task"),
        tool_use("task", {"description": "Read auth", "prompt": "Read src/app/auth.py."}),
        text("Done."),
    )
    server.when(
        lambda b: not offers_tool(b, "task"),
        tool_use("read_file", {"path": "src/app/auth.py"}),
        text("It returns UNSAVED-MARK."),
    )
    sid = await agent.new(repo)
    await agent.prompt(sid, "Delegate it")
    assert client.reads == [auth]
    child_requests = [r for r in server.requests if not offers_tool(r, "task")]
    assert "UNSAVED-MARK" in str(child_requests[-1]["messages"])


class Watching(Editor):
    """An editor that lets the command go on once it has shown the command's first line while it ran."""

    def __init__(self, flag: Path) -> None:
        super().__init__(["allow_once"])
        self.flag = flag

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await super().session_update(session_id, update, **kwargs)
        if (
            isinstance(update, s.ToolCallProgress)
            and update.status == "in_progress"
            and update.content
            and ("first" in first_text(update))
        ):
            self.flag.touch()


@shared
async def test_a_running_commands_output_shows_in_its_call_as_it_comes(server, editor_process, repo):
    """The command waits (at most 20 s) for the editor to have shown its first line before it writes the second."""
    flag = repo / "shown.flag"
    command = (
        "echo first; for i in $(seq 400); do [ -e shown.flag ] && break; sleep 0.05; done; "
        "[ -e shown.flag ] && echo second || echo never-shown"
    )
    async for agent, client in attach(editor_process, Watching(flag)):
        server.script(tool_use("bash", {"command": command}), text("Ran."))
        sid = await agent.new(repo)
        await agent.prompt(sid, "Run it")
        live = [u.content[0].content.text for u in client.of(s.ToolCallProgress, sid) if u.status == "in_progress"]
        assert live and live[0].startswith("first") and "second" not in live[0]
        [ran] = results(client, sid)
        assert first_text(ran).split() == ["first", "second"]
        assert client.invalid == []
