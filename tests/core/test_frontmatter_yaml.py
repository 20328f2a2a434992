"""Agent and command files' frontmatter is YAML, as in Claude Code's files: what YAML allows is read, what a
hostile file can make of YAML (alias bombs, deep nesting, object tags) is refused with one sentence."""

from __future__ import annotations

import pytest

from agentcli.core.engine.agents import load_agent_types, parse_agent_file
from agentcli.core.engine.custom_commands import load_commands
from agentcli.core.engine.frontmatter import MAX_DEPTH, MAX_VALUES, FrontmatterError, split_frontmatter


def test_anchors_aliases_and_merge_keys_are_read():
    meta, _ = split_frontmatter(
        "---\n"
        "base: &base\n  model: sonnet\n  tools: [grep, read_file]\n"
        "first: *base\n"
        "second:\n  <<: *base\n  model: opus\n"
        "---\nBody\n"
    )
    assert meta["first"] == {"model": "sonnet", "tools": ["grep", "read_file"]}
    assert meta["second"] == {"model": "opus", "tools": ["grep", "read_file"]}  # its own key wins


def test_multi_line_quoted_strings_are_read_as_yaml_folds_them():
    agent = parse_agent_file(
        "---\n"
        "name: reviewer\n"
        'description: "Reviews code after a change.\n'
        "  Use it proactively,\n"
        "\n"
        '  and before a commit."\n'
        "tools: 'grep,\n  read_file'\n"
        "---\nReview.\n",
        source="reviewer.md",
    )
    assert agent.description == "Reviews code after a change. Use it proactively, and before a commit."
    assert agent.tools == ("grep", "read_file")


def test_a_plain_value_with_a_colon_is_the_text_claude_code_files_mean():
    meta, _ = split_frontmatter("---\nname: x\ndescription: Use when: the user asks  # why\ntools: [grep]\n---\n")
    assert meta == {"name": "x", "description": "Use when: the user asks", "tools": ["grep"]}


def test_keys_are_the_text_written():
    meta, _ = split_frontmatter("---\n1: one\ntrue: yes\n---\n")
    assert meta == {"1": "one", "true": True}


@pytest.mark.parametrize(
    "text, problem",
    [
        ('---\nname: x\ndescription: "open\n---\n', "line 3: a double-quoted string is not closed"),
        ("---\nname: x\ntools: {a: b\n---\n", "line 3: a '{' mapping is not closed with '}'"),
        ("---\nname: x\nmodel: *nowhere\n---\n", "line 3: the alias 'nowhere' names no anchor"),
        ("---\nname: x\ng:\n  a: 1\n  a: 2\n---\n", "line 5: the key 'a' appears twice"),
        ("---\nname: x\ntools:\n\t- grep\n---\n", "line 4: tabs are not allowed for indentation"),
        ("---\n- a\n- b\n---\n", "line 2: the frontmatter must be 'key: value' lines, not a list"),
        ("---\nname: x\n? [a, b]\n: c\n---\n", "line 3: a key must be plain text, not a list or mapping"),
    ],
)
def test_what_does_not_parse_is_one_sentence_naming_the_line(text, problem):
    with pytest.raises(FrontmatterError) as caught:
        split_frontmatter(text)
    assert str(caught.value) == problem


def test_an_object_tag_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "ran"
    text = f"---\nname: x\ndescription: !!python/object/apply:os.system ['touch {marker}']\n---\n"
    with pytest.raises(
        FrontmatterError,
        match=r"^line 3: the tag 'tag:yaml.org,2002:python/object/apply:os.system'"
        r" is not allowed: only plain values are read$",
    ):
        split_frontmatter(text)
    assert not marker.exists()


BILLION_LAUGHS = (
    "---\nname: lol\ndescription: d\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))
    + "---\nPrompt.\n"
)


def test_an_alias_bomb_is_refused_before_anything_walks_it(repo):
    with pytest.raises(FrontmatterError) as caught:
        split_frontmatter(BILLION_LAUGHS)
    assert str(caught.value).endswith(f"it holds more than {MAX_VALUES} values, counting what each alias stands for")
    folder = repo / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "lol.md").write_text(BILLION_LAUGHS)
    warnings: list[str] = []
    assert "lol" not in load_agent_types(repo, warnings)
    [warning] = warnings
    assert warning.startswith("Skipped agent file .claude/agents/lol.md: line ")


def test_an_alias_inside_the_value_it_names_is_refused():
    with pytest.raises(FrontmatterError, match=r"^line 2: an alias stands for the value that holds it$"):
        split_frontmatter("---\nloop: &me [a, *me]\n---\n")


@pytest.mark.parametrize(
    "nesting, line",
    [
        ("[" * 100_000 + "]" * 100_000, 4),  # flow lists, on one line
        (
            "".join(f"\n{' ' * depth}- " for depth in range(0, 200, 2)) + "x",
            4 + MAX_DEPTH,
        ),  # block lists, a level a line
    ],
    ids=["flow", "block"],
)
def test_deep_nesting_is_refused_in_one_sentence(repo, nesting, line):
    text = "---\nname: deep\ndescription: d\ntools: " + nesting + "\n---\nPrompt.\n"
    with pytest.raises(FrontmatterError, match=rf"^line {line}: values nest more than {MAX_DEPTH} deep$"):
        split_frontmatter(text)
    folder = repo / ".claude" / "commands"
    folder.mkdir(parents=True)
    (folder / "deep.md").write_text(text)
    warnings: list[str] = []
    assert load_commands(repo, warnings) == {}
    assert warnings == [
        f"Skipped command file .claude/commands/deep.md: line {line}: values nest more than {MAX_DEPTH} deep."
    ]


def test_aliases_cannot_nest_values_deeper_than_written_ones():
    chain = "a0: &a0 {x: 1}\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 3000))
    with pytest.raises(FrontmatterError, match=rf"^line \d+: values nest more than {MAX_DEPTH} deep$"):
        split_frontmatter("---\n" + chain + "---\n")
