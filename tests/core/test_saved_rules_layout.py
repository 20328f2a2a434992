"""An "Always" answer adds its rule to the settings file and leaves everything else of the file as the user wrote it."""

from __future__ import annotations

import tomllib

import pytest

from agentcli.core.policy.rules import RuleError, save_allow_rule

ODD = """\
# My settings for this workspace.
model = "claude-sonnet-4-5"   # the fast one

[permissions]    # rules I trust
ask = [ "bash(git push *)" ]
allow = [ "read_file",   # always fine
\t\t"bash(npm test *)" ,

  # the linter, too
  'bash(ruff check *)',
]   # end of allow
deny=["bash(rm -rf *)"]

[agents]
# nothing here yet
"""


def test_a_rule_added_keeps_the_comments_and_the_odd_layout(tmp_path):
    path = tmp_path / "settings.toml"
    path.write_text(ODD)
    save_allow_rule(path, "bash(make test)")
    assert path.read_text() == ODD.replace(
        "  'bash(ruff check *)',\n", "  'bash(ruff check *)',\n  \"bash(make test)\",\n"
    )
    assert tomllib.loads(path.read_text())["permissions"]["allow"] == [
        "read_file",
        "bash(npm test *)",
        "bash(ruff check *)",
        "bash(make test)",
    ]


@pytest.mark.parametrize(
    "before, after",
    [
        # a dotted key and an inline table stay what they were
        ('permissions.allow = ["a"]  # mine\n', 'permissions.allow = ["a", "bash(x)"]  # mine\n'),
        ('permissions = { allow = ["a"], ask = [] }\n', 'permissions = { allow = ["a", "bash(x)"], ask = [] }\n'),
        # a [permissions] table without an allow list gets one, after what it has
        (
            '[permissions]\n# none yet\nask = ["z"]\n\n[b]\nc = 1\n',
            '[permissions]\n# none yet\nask = ["z"]\nallow = ["bash(x)"]\n\n[b]\nc = 1\n',
        ),
        # a file without [permissions] gets the table at its end
        ('# just a comment\nmodel = "m"\n', '# just a comment\nmodel = "m"\n\n[permissions]\nallow = ["bash(x)"]\n'),
        # a one-line list that grows past three rules is laid out a rule a line
        (
            '[permissions]\nallow = ["a", "b", "c"]  # all\n',
            '[permissions]\nallow = [\n    "a",\n    "b",\n    "c",\n    "bash(x)",\n]  # all\n',
        ),
    ],
)
def test_where_the_rule_goes(tmp_path, before, after):
    path = tmp_path / "settings.toml"
    path.write_text(before)
    save_allow_rule(path, "bash(x)")
    assert path.read_text() == after


@pytest.mark.parametrize(
    "text", ['permissions = "all"\n', "[[permissions]]\nallow = []\n", '[permissions]\nallow = "a"\n']
)
def test_a_file_it_cannot_extend_is_left_alone_with_one_sentence(tmp_path, text):
    path = tmp_path / "settings.toml"
    path.write_text(text)
    with pytest.raises(
        RuleError,
        match=r"^cannot add the rule to .* without rewriting it; add 'bash\(x\)' to "
        r"permissions.allow by hand$",
    ):
        save_allow_rule(path, "bash(x)")
    assert path.read_text() == text
