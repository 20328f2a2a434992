"""Bad command lines get one sentence in the user's words: a subcommand's own, and a near miss named."""

from __future__ import annotations

import pytest

from agentcli import UsageError
from agentcli.cli import build_subcommand_parser
from agentcli.config import ConfigError, load_settings


@pytest.mark.parametrize(
    "argv, said",
    [
        (
            ["sessions", "show"],
            "'sessions show' needs a session id (or a unique prefix of one); 'agentcli sessions "
            "list' shows them (see agentcli sessions show --help)",
        ),
        (
            ["sessions", "frob"],
            "'sessions frob' is not a subcommand; 'sessions' takes list, show, export (see agentcli sessions --help)",
        ),
        (["trust", "revoke"], "'trust revoke' needs a workspace's path (see agentcli trust revoke --help)"),
        (
            ["worktrees", "merge"],
            "'worktrees merge' needs a subagent id such as sa-3 (see agentcli worktrees merge --help)",
        ),
    ],
)
def test_a_subcommand_says_what_it_needs_in_its_own_words(argv, said):
    with pytest.raises(UsageError) as caught:
        build_subcommand_parser().parse_args(argv)
    assert str(caught.value) == said


def test_an_unknown_setting_names_the_one_it_resembles(tmp_path):
    settings = tmp_path / ".agentcli" / "settings.toml"
    settings.parent.mkdir()
    settings.write_text('modle = "claude-haiku-4-5"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path, env={})
    assert str(caught.value) == f"{settings}: unknown setting 'modle'; did you mean 'model'?"
    settings.write_text("zzzz = 1\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path, env={})
    assert str(caught.value) == f"{settings}: unknown setting 'zzzz'."


def test_review_help_is_reviews_own(capsys, tmp_path):
    """`agentcli review --help` printed the main help, whose first words are about prompts, not targets."""
    from agentcli.cli import run

    with pytest.raises(SystemExit) as done:
        run(["review", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert done.value.code == 0 and shown.startswith("usage: agentcli review [TARGET] [options]")
    assert "a base branch (BASE...HEAD), A...B, A..B, or a diff file" in shown and "--fail-on" in shown
    assert "[PROMPT]" not in shown and "--plain" not in shown
