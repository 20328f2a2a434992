"""A reply cut before ``message_stop`` and asked for again whole: the caller gets only the attempt that completed.

The draft (a text block that completed before the stream broke) once stayed in the history, the model was told to
go on from it, and `-p` reported both: ``result`` was "almost complete answer\\n\\nthe whole answer". Here the
stand-in server cuts the stream after the draft's text block, or inside a second one, and the retry sends the
whole answer; every output format, the next request and the session file hold the whole answer only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_headless import agentcli
from tests.fakes.anthropic_server import FakeAnthropic, reply, sse_events, text

DRAFT = "almost complete answer"
WHOLE = "the whole answer"


def cut_reply(where: str):
    """The draft as the server sends it, cut ``where``: after its one block, or inside a second block."""
    if where == "after a whole block":
        base = reply(DRAFT)
        names = [name for name, _ in sse_events(base, {"model": "m", "messages": []})]
        return base.with_options(end_after_events=names.index("content_block_stop") + 1)
    base = reply(DRAFT, "and a second paragraph that never arrives whole")
    names = [name for name, _ in sse_events(base, {"model": "m", "messages": []})]
    return base.with_options(end_after_events=names.index("content_block_stop") + 3)


CUTS = ["after a whole block", "inside a second block"]
FORMATS = ["json", "text", "stream-json"]


@pytest.mark.parametrize("where", CUTS)
@pytest.mark.parametrize("output_format", FORMATS)
def test_only_the_attempt_that_completed_is_the_result(
    server: FakeAnthropic, api_env, repo: Path, isolated_home: Path, where: str, output_format: str
):
    server.script(cut_reply(where), text(WHOLE))
    extra = ["--verbose"] if output_format == "stream-json" else []
    proc = agentcli("-p", "question", "--output-format", output_format, *extra, cwd=repo, env=api_env)
    assert proc.returncode == 0, proc.stderr
    assert "Retrying in" in proc.stderr and DRAFT not in proc.stdout, proc.stdout
    if output_format == "json":
        assert json.loads(proc.stdout)["result"] == WHOLE
    elif output_format == "text":
        assert proc.stdout == WHOLE + "\n"
    else:
        lines = [json.loads(line) for line in proc.stdout.splitlines()]
        said = [
            block["text"]
            for line in lines
            if line["type"] == "assistant"
            for block in line["message"]["content"]
            if block["type"] == "text"
        ]
        assert said == [WHOLE] and lines[-1]["result"] == WHOLE
    first, second = server.requests
    assert second["messages"] == first["messages"]  # the question again, without the draft
    [stored] = [p.read_text() for p in isolated_home.rglob("*.jsonl")]
    assert WHOLE in stored and DRAFT not in stored
    server.assert_no_rejections()
