"""`agentcli review` for CI: the findings array in json, and --fail-on's exit status counting verified findings only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.core.test_review import findings, plant_bug, reviewer
from tests.fakes.anthropic_server import error, tool_use

NONE = ("security", "tests", "fit")


def review(repo: Path, api_env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")} | api_env
    return subprocess.run(
        [sys.executable, "-m", "agentcli", "review", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_fail_on_high_exits_1_for_a_verified_finding_and_0_for_an_unverified_one(server, api_env, repo):
    plant_bug(repo)
    bug = {"severity": "high", "location": "src/app/auth.py:10", "problem": "The check is inverted.", "fix": "Use ==."}
    server.when(reviewer("correctness"), tool_use("read_file", {"path": "src/app/auth.py"}), findings(bug))
    for concern in NONE:
        server.when(reviewer(concern), findings())
    found = review(repo, api_env, "--output-format", "json", "--fail-on", "high")
    assert found.returncode == 1, found.stderr
    assert "1 verified finding at or above --fail-on high" in found.stderr
    out = json.loads(found.stdout)
    [finding] = out["findings"]
    assert (finding["location"], finding["severity"], finding["verified"]) == ("src/app/auth.py:10", "high", True)
    assert finding["reviewers"] == ["review-correctness"] and out["review"]["unverified"] == 0
    assert out["is_error"] is False and len(out["subagents"]) == 4

    # The same finding from a reviewer that never opened the file: unverified, so it fails nothing.
    server.when(reviewer("correctness"), findings(bug))
    for concern in NONE:
        server.when(reviewer(concern), findings())
    passed = review(repo, api_env, "--fail-on", "high")
    assert passed.returncode == 0, passed.stderr
    assert "1 finding (1 unverified), from 4 reviewers." in passed.stdout
    assert "never read src/app/auth.py" in passed.stdout
    server.assert_no_rejections()


def test_a_target_that_names_nothing_is_one_sentence_and_exit_1(server, api_env, repo):
    proc = review(repo, api_env, "no-such-branch", "--fail-on", "low")
    assert proc.returncode == 1
    assert proc.stderr == "agentcli: 'no-such-branch' is not a commit of this repository, nor a diff file.\n"
    assert server.requests == []


def test_fail_on_fails_a_review_a_reviewer_could_not_do(server, api_env, repo):
    """Fail closed: the security reviewer's requests are refused, so nobody looked for a hole, and a CI gate that
    passed here would pass a review that never happened (it said "no findings" and exited 0)."""
    plant_bug(repo)
    server.when(reviewer("security"), error(400, "invalid_request_error", "Refused."))
    for concern in ("correctness", *NONE[1:]):
        server.when(reviewer(concern), findings())
    proc = review(repo, api_env, "--output-format", "json", "--fail-on", "high")
    assert proc.returncode == 1, proc.stderr
    assert "1 reviewer failed, so the review cannot show that no finding at or above --fail-on high" in proc.stderr
    out = json.loads(proc.stdout)
    assert out["findings"] == [] and len(out["review"]["failed"]) == 1
    assert "from 4 reviewers (1 failed)." in out["result"]
