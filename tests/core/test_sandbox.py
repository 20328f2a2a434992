"""The OS sandbox under bash: the attacks are made from inside commands that were allowed to run.

Each test runs a command that the permissions let through (the tool is called directly, as after
an allow rule or in bypassPermissions), and checks that the sandbox, not a rule, stopped it.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from pathlib import Path

import pytest

from agentcli.core.errors import ToolError
from agentcli.core.system.sandbox import Sandbox, SandboxError
from agentcli.core.system.workspace import Workspace
from agentcli.core.tools.base import ToolContext
from agentcli.core.tools.shell import Bash
from tests.conftest import TOOLS
from tests.core.test_processes import allow_all, gone, running
from tests.waiting import until


def _why_not() -> str:
    try:
        return "" if Sandbox("on").usable() else "bwrap is not usable"
    except SandboxError as exc:
        return str(exc)


WHY_NOT = _why_not()
needs_bwrap = pytest.mark.skipif(
    bool(WHY_NOT),
    reason=f"no working bubblewrap here ({WHY_NOT}); `make test` installs it where it runs as root on Debian",
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path) -> Path:
    """A temporary $HOME holding a planted SSH key, a cloud credential and a harmless file."""
    home = Path(os.environ["HOME"])
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("PLANTED-SSH-KEY\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("[default]\naws_secret_access_key = PLANTED-AWS\n")
    (home / ".netrc").write_text("machine example.com password PLANTED-NETRC\n")
    (home / "notes.txt").write_text("just notes\n")
    isolated_home.mkdir(parents=True, exist_ok=True)  # agentcli's own data folder ($AGENTCLI_HOME)
    (isolated_home / "config").mkdir(exist_ok=True)
    (isolated_home / "config" / "config.toml").write_text('api_key_helper = "echo PLANTED-CONFIG"\n')
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def make_ctx(root: Path, sandbox: Sandbox | None, extra: tuple[Path, ...] = ()) -> ToolContext:
    return ToolContext(
        workspace=Workspace.at(root, extra_dirs=extra),
        emit=lambda e: None,
        permissions=allow_all(),
        sandbox=sandbox,
        settings=TOOLS,
    )


@pytest.fixture
def sandbox(home: Path):
    box = Sandbox("on")
    yield box
    box.close()


async def bash(ctx: ToolContext, command: str) -> tuple[bool, str]:
    """(whether it succeeded, its result text)."""
    try:
        return True, await Bash().run({"command": command}, ctx)
    except ToolError as exc:
        return False, str(exc)


@needs_bwrap
async def test_a_write_outside_the_workspace_fails(sandbox, home, workspace, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (home / ".bashrc").write_text("# mine\n")
    ctx = make_ctx(workspace, sandbox)
    ok, out = await bash(
        ctx,
        f"echo in > inside.txt && echo pwned >> ~/.bashrc; echo pwned > {outside}/f; "
        "echo pwned > /etc/agentcli-sandbox-test; exit 1",
    )
    assert (workspace / "inside.txt").read_text() == "in\n"  # the workspace is writable
    assert (home / ".bashrc").read_text() == "# mine\n"
    assert not (outside / "f").exists()
    assert not Path("/etc/agentcli-sandbox-test").exists()
    assert not ok and "Read-only file system" in out
    # The result names each place it needed to write, and how the user can allow it (nobody is asked here).
    # (the host's /tmp, where `outside` lies, is not even visible: the sandbox's /tmp is the session's own)
    assert f"needed write access to {home / '.bashrc'} and /etc/," in out and "--add-dir" in out


@needs_bwrap
async def test_add_dir_folders_are_writable_too(sandbox, workspace, tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    ok, out = await bash(make_ctx(workspace, sandbox, (extra,)), f"echo more > {extra}/f")
    assert ok, out
    assert (extra / "f").read_text() == "more\n"


@needs_bwrap
async def test_secrets_and_agentcli_s_own_files_cannot_be_read(sandbox, home, workspace, isolated_home):
    ctx = make_ctx(workspace, sandbox)
    _, out = await bash(
        ctx,
        f"cat ~/notes.txt; cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.netrc "
        f"{isolated_home}/config/config.toml; ls -A ~/.ssh; echo HOME=$HOME",
    )
    assert "just notes" in out and f"HOME={home}" in out  # ~ is the user's $HOME
    assert "PLANTED" not in out
    assert (home / ".ssh" / "id_ed25519").read_text() == "PLANTED-SSH-KEY\n"  # hidden, not harmed


@needs_bwrap
async def test_the_usual_agentcli_folders_histories_and_token_stores_are_hidden_too(sandbox, home, workspace):
    """AGENTCLI_HOME moves agentcli's folders for this session only: the usual ones hold the user's others."""
    planted = {
        ".config/agentcli/config.toml": 'api_key_helper = "echo PLANTED"\n',
        ".local/share/agentcli/sessions/s.jsonl": '{"text": "PLANTED"}\n',
        ".bash_history": "export GITHUB_TOKEN=PLANTED\n",
        ".python_history": "key = 'PLANTED'\n",
        ".pgpass": "db:5432:*:me:PLANTED\n",
        ".my.cnf": "[client]\npassword=PLANTED\n",
        ".config/composer/auth.json": '{"github-oauth": "PLANTED"}\n',
        ".m2/settings.xml": "<p>PLANTED</p>\n",
    }
    for name, text in planted.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    _, out = await bash(make_ctx(workspace, sandbox), "cd ~ && cat " + " ".join(planted) + "; cat notes.txt")
    assert "just notes" in out
    assert "PLANTED" not in out


@needs_bwrap
async def test_a_secret_inside_the_workspace_stays_hidden(sandbox, home):
    """With the workspace at $HOME, the workspace is writable but ~/.ssh is still hidden and unwritable."""
    ok, out = await bash(
        make_ctx(home, sandbox), "cat .ssh/id_ed25519; echo ssh-rsa AAAA >> .ssh/authorized_keys; echo mine > notes.txt"
    )
    assert "PLANTED" not in out
    assert not (home / ".ssh" / "authorized_keys").exists()
    assert (home / "notes.txt").read_text() == "mine\n"


@needs_bwrap
async def test_claude_codes_folder_where_claude_config_dir_moves_it_is_hidden(home, monkeypatch):
    """The attack: with CLAUDE_CONFIG_DIR moving Claude Code's folder (here inside a workspace the user keeps
    their dotfiles in), a command reads Claude Code's login and plants a hook in its settings.json, which agentcli
    runs as the user's own, outside the sandbox, at its next start. The folder is hidden as ~/.claude is."""
    workspace = home / "dotfiles"
    config = workspace / "claude"
    config.mkdir(parents=True)
    (config / ".credentials.json").write_text('{"claudeAiOauth": {"accessToken": "PLANTED-OAUTH"}}\n')
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))  # as the user's shell gave it, before the session
    plant = '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "id"}]}]}}'
    sandbox = Sandbox("on")
    try:
        _, out = await bash(
            make_ctx(workspace, sandbox),
            f"cat claude/.credentials.json; echo '{plant}' > claude/settings.json; echo mine > notes.txt",
        )
    finally:
        sandbox.close()
    assert "PLANTED" not in out
    assert not (config / "settings.json").exists()
    assert (workspace / "notes.txt").read_text() == "mine\n"  # the rest of the workspace is as writable as ever


def connect_script(port: int) -> str:
    return (
        f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=30); "
        f"print('connected')\""
    )


@needs_bwrap
async def test_no_network_not_even_to_a_loopback_port_of_the_host(sandbox, workspace):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        ok, out = await bash(make_ctx(workspace, sandbox), connect_script(port))
        assert not ok and "connected" not in out.split("\n")
        assert "needed network access" in out and "sandbox_network = true" in out  # the result names what it needed
        with pytest.raises(BlockingIOError):  # nothing ever reached the port
            listener.accept()
    finally:
        listener.close()


@needs_bwrap
async def test_sandbox_network_lets_the_same_command_connect(home, workspace):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    box = Sandbox("on", network=True)
    try:
        ok, out = await bash(make_ctx(workspace, box), connect_script(port))
        assert ok and "connected" in out, out
    finally:
        listener.close()
        box.close()


DAEMON = (
    '{python} -c "import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n'
    "        os.execve('/bin/sleep', ['sleep', '{n}'], {{}})\n    os._exit(0)\n\"\n"
    "until pgrep -fx 'sleep {n}' > /dev/null; do sleep 0.05; done; echo up"
)


@pytest.mark.parametrize("boxed", [True, False], ids=["sandbox", "no sandbox"])
async def test_a_daemon_with_an_empty_environment_dies_with_the_call(home, workspace, boxed):
    """fork, setsid, fork again, execve with an empty environment, the middle process gone at once:
    the sandbox's PID namespace ends it with the call; without one, the orphan is found all the same."""
    if boxed and WHY_NOT:
        pytest.skip(f"no working bubblewrap here ({WHY_NOT})")
    n = "7791" if boxed else "7792"
    box = Sandbox("on") if boxed else None
    try:
        ok, out = await bash(make_ctx(workspace, box), DAEMON.format(python=sys.executable, n=n))
        assert ok and out.startswith("up\n[Stopped 1 process"), out
        await gone(["sleep", n])
    finally:
        for pid in running(["sleep", n]):  # where it failed: not left to trouble the next run
            os.kill(pid, 9)
        if box is not None:
            box.close()


@needs_bwrap
async def test_the_session_s_calls_share_a_private_tmp(sandbox, workspace):
    ctx = make_ctx(workspace, sandbox)
    ok, out = await bash(ctx, "echo kept > /tmp/agentcli-sandbox-note && ls /tmp")
    assert ok, out
    assert not Path("/tmp/agentcli-sandbox-note").exists()  # not the host's /tmp
    ok, out = await bash(ctx, "cat /tmp/agentcli-sandbox-note")
    assert ok and out == "kept", out
    private = sandbox.tmp()
    sandbox.close()
    assert not private.exists()


@needs_bwrap
async def test_the_sandbox_holds_for_background_shells(sandbox, home, workspace):
    ctx = make_ctx(workspace, sandbox)
    await Bash().run({"command": "cat ~/.ssh/id_ed25519; ls -A ~/.ssh; echo done", "run_in_background": True}, ctx)
    [shell] = ctx.shells.shells.values()
    await until(lambda: shell.status != "running", "the background shell ending")
    text = ctx.shells.read_new(shell)
    assert "done" in text and "PLANTED" not in text
    await ctx.shells.stop_all()


async def test_on_without_bwrap_refuses_with_one_sentence(workspace):
    box = Sandbox("on")
    box.bwrap = None  # as where bwrap is not installed
    ok, out = await bash(make_ctx(workspace, box), "echo ran > ran.txt")
    assert not ok and not (workspace / "ran.txt").exists()
    assert 'sandbox = "on"' in out and "bubblewrap" in out and "apt-get install bubblewrap" in out
    assert "not installed" in box.startup_notice() or not sys.platform.startswith("linux")


async def test_auto_without_bwrap_runs_unsandboxed_after_a_startup_notice(workspace):
    box = Sandbox("auto")
    box.bwrap = None
    assert "apt-get install bubblewrap" in box.startup_notice()
    ok, out = await bash(make_ctx(workspace, box), "echo ran > ran.txt")
    assert ok and (workspace / "ran.txt").exists()


async def test_the_kernel_kills_the_sandbox_when_agentcli_is_killed(tmp_path, home):
    """SIGKILL of the process that ran bash (here a small agentcli stand-in: the real tool in a child
    Python) leaves no command running, with the sandbox and without it."""
    import signal
    import subprocess

    for boxed, n in ((True, "7793"), (False, "7794")):
        if boxed and WHY_NOT:
            continue
        script = (
            "import asyncio, sys\n"
            "from pathlib import Path\n"
            "from agentcli.core.system.sandbox import Sandbox\n"
            "from tests.core.test_sandbox import make_ctx, bash\n"
            f"box = Sandbox('on') if {boxed} else None\n"
            f"asyncio.run(bash(make_ctx(Path({str(tmp_path)!r}), box), 'sleep {n}'))\n"
        )
        proc = await asyncio.to_thread(
            subprocess.Popen, [sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[2]
        )
        try:
            await until(lambda: running(["sleep", n]) or proc.poll() is not None, f"`sleep {n}` starting")
            assert proc.poll() is None
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        finally:
            if proc.poll() is None:
                proc.kill()
        try:
            await until(lambda: not running(["sleep", n]), f"`sleep {n}` ending after SIGKILL ({boxed=})")
        finally:
            for pid in running(["sleep", n]):
                os.kill(pid, 9)


@needs_bwrap
async def test_a_workspace_s_hooks_run_in_the_sandbox_and_the_user_s_do_not(home, workspace, isolated_home):
    """A trusted workspace's hook is still confined; the user's own hook (their config file) is not."""
    from agentcli.config import load_settings
    from agentcli.core.policy.hooks import Hooks, parse_hooks

    reader = "cat ~/.ssh/id_ed25519 >&2; exit 2"
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [{"command": reader}]}]}})
    )
    user_config = isolated_home / "config" / "config.toml"
    user_config.write_text(f'[[hooks.Stop]]\nhooks = [{{ command = "{reader}" }}]\n')
    settings = load_settings(workspace, env={}, trusted=True)
    box = Sandbox("on")
    try:
        hooks = Hooks(parse_hooks(settings.hooks, "hooks"), root=workspace, emit=lambda e: None, sandbox=box)
        workspace_says = await hooks.prompt_submitted("hi")
        user_says = await hooks.stopping(False, False, "")
    finally:
        box.close()
    assert workspace_says.blocked and "PLANTED" not in workspace_says.blocked
    assert "PLANTED-SSH-KEY" in user_says.blocked


@needs_bwrap
async def test_a_workspace_s_stdio_mcp_server_runs_in_the_sandbox(home, workspace):
    """A server from the workspace's .mcp.json writes where it may (the workspace) and nowhere else."""
    from agentcli.core.mcp.config import parse
    from agentcli.core.mcp.session_servers import McpServers
    from agentcli.core.system.secret_env import command_env
    from tests.core.test_mcp import stdio

    inside, outside = workspace / "inside.pid", home / "outside.pid"
    configs = parse(
        {"mcpServers": {"inside": stdio("--touch", str(inside)), "evil": stdio("--touch", str(outside))}},
        str(workspace / ".mcp.json"),
        project=True,
    )
    box = Sandbox("on")
    servers = McpServers(
        configs,
        root=workspace,
        env=command_env(),
        startup_timeout=60.0,
        tool_timeout=60.0,
        on_ready=lambda server: None,
        on_trouble=lambda text: None,
        sandbox=box,
    )
    try:
        await servers.wait_started()
        assert servers.servers["inside"].state == "ready" and inside.exists()
        assert not outside.exists()
    finally:
        await servers.stop()
        box.close()
