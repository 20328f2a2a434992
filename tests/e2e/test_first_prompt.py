"""`agentcli "question"` starts the app with that first message, as `claude "question"` does; `--plain` too.
Subcommand names still win as the first word; `--` makes one a prompt."""

from __future__ import annotations

import argparse
import os
import select
import signal
import subprocess
import sys
from typing import Literal

import pytest

from agentcli import UsageError, cli
from tests.fakes.anthropic_server import last_user_text, text
from tests.waiting import wait_until

QUESTION = "where is auth handled?"


@pytest.mark.parametrize("front_end", [[], ["--plain"]])
def test_a_prompt_on_the_command_line_is_the_first_message(server, api_env, repo, isolated_home, front_end):
    """On a real terminal (a pty): the app opens and sends it, with nothing typed."""
    import pty

    server.script(text("In src/app/auth.py."))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")} | api_env | {"TERM": "xterm"}
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentcli", *front_end, QUESTION],
        cwd=repo,
        env=env,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        start_new_session=True,
    )
    os.close(follower)
    drained = bytearray()

    def drain() -> Literal[False]:  # keep the terminal's buffer from filling up (False: a wait reads `drain() or x`)
        while select.select([leader], [], [], 0)[0]:
            try:
                drained.extend(os.read(leader, 65536))
            except OSError:
                return False
        return False

    def asked() -> bool:
        assert proc.poll() is None, bytes(drained[-3000:])
        drain()
        return any(last_user_text(body) == QUESTION for body in server.requests)

    try:
        wait_until(asked, "the first prompt to reach the model", detail=lambda: repr(bytes(drained[-3000:])))
        wait_until(
            lambda: drain() or b"auth.py" in drained,
            "the answer on screen",
            detail=lambda: repr(bytes(drained[-3000:])),
        )
        proc.send_signal(signal.SIGTERM)
        wait_until(lambda: drain() or proc.poll() is not None, "agentcli exiting")
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)
    assert [last_user_text(body) for body in server.requests] == [QUESTION]  # sent once


def parsed(*argv: str) -> argparse.Namespace:
    args = cli.build_parser().parse_args(list(argv))
    cli.first_prompt(args)
    return args


def test_the_prompt_goes_with_the_flags_and_with_p():
    assert parsed(QUESTION).first_prompt == QUESTION and parsed(QUESTION).prompt is None
    assert parsed("--plain", QUESTION, "--model", "m").first_prompt == QUESTION
    assert parsed("-p", QUESTION).prompt == QUESTION
    late = parsed(QUESTION, "-p")  # as claude takes it: the prompt, then -p
    assert late.prompt == QUESTION and late.first_prompt is None
    assert parsed("--", "sessions").first_prompt == "sessions"  # a subcommand's name, sent as a prompt
    assert parsed().first_prompt is None


@pytest.mark.parametrize(
    "argv, said",
    [
        (["where", "is", "auth"], 'put the prompt in quotes, as one argument: agentcli "where is auth"'),
        (["-p", "one", "two"], "give the prompt once"),
        (["--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "q"], "leave out PROMPT"),
    ],
)
def test_a_prompt_given_wrongly_gets_one_sentence(argv, said):
    with pytest.raises(UsageError, match=said):
        parsed(*argv)


def test_a_subcommand_name_as_the_first_word_runs_the_subcommand(repo, monkeypatch, capsys):
    monkeypatch.chdir(repo)
    assert cli.run(["sessions"]) == 0  # `agentcli sessions`: the list, not a prompt
    assert "session" in capsys.readouterr().out.lower()
