"""Secrets held in memory: the handover between the two images of the process, the command environment,
credential resolution and where api_key_helper may come from."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentcli import paths
from agentcli.config import load_settings
from agentcli.core.model import key_helper
from agentcli.core.model.llm import PLACEHOLDER_KEY, Credentials, MissingCredentials, resolve_credentials
from agentcli.core.system import secret_env
from agentcli.core.system.secret_env import command_env


def closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def test_the_handover_pipe_carries_the_secrets_once_and_is_closed():
    secrets = {"ANTHROPIC_API_KEY": "sk-ant-1", "GITHUB_TOKEN": "ghp_2"}
    fd = secret_env._pipe_holding(json.dumps(secrets).encode())
    assert os.get_inheritable(fd)
    assert secret_env._take_handover(f"{os.getpid()}:{fd}") == secrets
    assert closed(fd)


def test_a_handover_larger_than_a_pipe_buffer():
    secrets = {f"BIG_KEY_{n}": "x" * 1000 for n in range(100)}  # about 100 KB
    fd = secret_env._pipe_holding(json.dumps(secrets).encode())
    assert secret_env._take_handover(f"{os.getpid()}:{fd}") == secrets


@pytest.mark.parametrize(
    "value",
    ["", "nonsense", "1:", f"{os.getpid()}:1", f"{os.getpid()}:987654", f"{os.getpid() + 1}:3"],
    ids=["empty", "nonsense", "no-fd", "our-pid-stdout", "our-pid-no-such-fd", "other-pid"],
)
def test_a_handover_variable_that_is_not_ours_gives_nothing(value):
    assert secret_env._take_handover(value) == {}


def test_a_handover_from_another_process_is_left_alone():
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, b'{"A_KEY": "v"}')
        assert secret_env._take_handover(f"{os.getpid() + 1}:{read_fd}") == {}
        assert not closed(read_fd)
    finally:
        os.close(read_fd)
        os.close(write_fd)


def test_a_pipe_still_open_for_writing_or_holding_garbage_gives_nothing_and_never_blocks():
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b'{"A_KEY": "v"')  # the writer is still there: not a finished handover
    assert secret_env._take_handover(f"{os.getpid()}:{read_fd}") == {}
    os.close(write_fd)
    fd = secret_env._pipe_holding(b"[1, 2]")
    assert secret_env._take_handover(f"{os.getpid()}:{fd}") == {}


def test_a_regular_file_is_no_handover(tmp_path):
    path = tmp_path / "f"
    path.write_text('{"A_KEY": "v"}')
    fd = os.open(path, os.O_RDONLY)
    try:
        assert secret_env._take_handover(f"{os.getpid()}:{fd}") == {}
    finally:
        os.close(fd)


def test_what_counts_as_a_secret():
    assert secret_env.is_secret("ANTHROPIC_API_KEY", "x") and secret_env.is_secret("session_token", "x")
    assert secret_env.is_secret("ANTHROPIC_BASE_URL", "https://me:pw@proxy.example/v1")
    assert not secret_env.is_secret("ANTHROPIC_BASE_URL", "http://127.0.0.1:8080/a@b")
    assert not secret_env.is_secret("PATH", "/bin")
    for name in (
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        "ANTHROPIC_CUSTOM_HEADERS",
        "MYSQL_PWD",
        "SMTP_PASS",
        "REDISCLI_AUTH",
        "DOCKER_AUTH_CONFIG",
        "GPG_PASSPHRASE",
        "SESSION_COOKIE",
    ):
        assert secret_env.is_secret(name, "x"), name
    for name in ("PWD", "OLDPWD", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "XAUTHORITY", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        assert not secret_env.is_secret(name, "x"), name


def test_commands_get_held_secrets_only_with_keep_secrets(monkeypatch):
    monkeypatch.setattr(secret_env, "_held", {"ANTHROPIC_API_KEY": "sk-held"})
    monkeypatch.setenv(secret_env.HANDOVER_VAR, "1:3")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://me:pw@proxy.example")
    scrubbed = command_env()
    assert "ANTHROPIC_API_KEY" not in scrubbed and "ANTHROPIC_BASE_URL" not in scrubbed
    assert secret_env.HANDOVER_VAR not in scrubbed
    kept = command_env(keep_secrets=True)
    assert kept["ANTHROPIC_API_KEY"] == "sk-held" and secret_env.HANDOVER_VAR not in kept


def test_credentials_come_from_held_secrets_and_the_helper(monkeypatch):
    monkeypatch.setattr(secret_env, "_held", {"ANTHROPIC_API_KEY": "sk-held"})
    assert resolve_credentials() == Credentials(api_key="sk-held", base_url=None)
    monkeypatch.setattr(key_helper, "_key", "sk-helper")
    assert resolve_credentials().api_key == "sk-helper"


def test_an_auth_token_alone_is_a_credential_and_a_key_wins_over_it():
    assert resolve_credentials({"ANTHROPIC_AUTH_TOKEN": "t"}) == Credentials(
        api_key=None, base_url=None, auth_token="t"
    )
    assert resolve_credentials({"ANTHROPIC_AUTH_TOKEN": "t", "ANTHROPIC_API_KEY": "k"}).auth_token is None
    assert resolve_credentials({"ANTHROPIC_BASE_URL": "http://h"}).api_key == PLACEHOLDER_KEY
    with pytest.raises(MissingCredentials):
        resolve_credentials({})


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_api_key_helper_comes_from_the_user_config_or_environment_never_the_workspace(tmp_path, monkeypatch):
    root = tmp_path / "ws"
    write(paths.project_config_file(root), 'api_key_helper = "touch pwned"\n')
    assert load_settings(root, env={}).api_key_helper == ""
    write(paths.user_config_file(), 'api_key_helper = "pass show anthropic"\n')
    assert load_settings(root, env={}).api_key_helper == "pass show anthropic"
    monkeypatch.setattr(secret_env, "_held", {"AGENTCLI_API_KEY_HELPER": "op read op://k"})
    assert load_settings(root).api_key_helper == "op read op://k"


def test_the_helper_runs_with_the_scrubbed_environment(monkeypatch):
    monkeypatch.setenv("SOME_TOKEN", "t0ken")
    monkeypatch.setenv("VISIBLE", "yes")
    assert key_helper.run_helper('echo "k-$SOME_TOKEN-$VISIBLE"') == "k--yes"
    with pytest.raises(key_helper.KeyHelperError, match="more than one line"):
        key_helper.run_helper("echo a; echo b")


def test_redact_hides_every_secret_held_or_met_and_url_passwords(monkeypatch):
    monkeypatch.setattr(secret_env, "_held", {"GITHUB_TOKEN": "ghp_held_0123456789", "SHORT_KEY": "abc"})
    monkeypatch.setattr(secret_env, "_met", set())
    secret_env.remember("sk-ant-from-a-helper-42")
    secret_env.remember(None)
    text = "401: key sk-ant-from-a-helper-42, token ghp_held_0123456789, proxy http://me:pw1234@host/ and abc stays"
    assert secret_env.redact(text) == "401: key ***, token ***, proxy http://me:***@host/ and abc stays"
