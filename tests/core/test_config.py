"""Settings files as users write them: wrong types and shapes are one ConfigError naming the file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.config import ConfigError, load_settings
from tests.narrow import found


def write_settings(root: Path, text: str) -> Path:
    path = root / ".agentcli" / "settings.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_agent_type_tables_are_read(tmp_path):
    write_settings(tmp_path, '[agents.explore]\nmodel = "claude-haiku-4-5"\n')
    assert load_settings(tmp_path, env={}).agents == {"explore": {"model": "claude-haiku-4-5"}}


def test_agent_tables_from_two_files_add_up(tmp_path, isolated_home):
    user = isolated_home / "config" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[agents.explore]\nmodel = "claude-haiku-4-5"\n')
    write_settings(tmp_path, '[agents.reviewer]\nmodel = "claude-opus-4-1"\n')
    assert load_settings(tmp_path, env={}).agents == {
        "explore": {"model": "claude-haiku-4-5"},
        "reviewer": {"model": "claude-opus-4-1"},
    }


@pytest.mark.parametrize(
    "text, key, words",
    [
        ('[agents]\nexplore = "claude-haiku-4-5"\n', "agents.explore", "must be a table"),
        ('agents = "explore"\n', "agents", "must be a table"),
        ('[agents.explore]\nmodle = "claude-haiku-4-5"\n', "agents.explore.modle", "unknown setting"),
        ("[agents.explore]\nmodel = 4\n", "agents.explore.model", "must be a string"),
        ('[agents.explore]\nmodel = ""\n', "agents.explore.model", "must not be empty"),
        ("model = 123\n", "model", "must be a string"),
        ("theme = true\n", "theme", "must be a string"),
        ("permission_mode = 1\n", "permission_mode", "must be a string"),
        ("max_turns = true\n", "max_turns", "must be a number"),
    ],
)
def test_wrong_shapes_name_the_file_and_key(tmp_path, text, key, words):
    path = write_settings(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path, env={})
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and f"'{key}'" in message and words in message
    assert "\n" not in message


def test_an_empty_model_on_the_command_line_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="command line: 'model' must not be empty"):
        load_settings(tmp_path, {"model": ""}, env={})


def test_compact_threshold_is_a_share_of_the_window(tmp_path):
    from agentcli.config import ConfigError, Settings

    settings = Settings()
    settings.merge({"compact_threshold": 0.5}, "test")
    assert settings.compact_threshold == 0.5
    try:
        settings.merge({"compact_threshold": 85}, "settings.toml")
    except ConfigError as exc:
        assert "at most 1" in str(exc) and "settings.toml" in str(exc)
    else:
        raise AssertionError("85 was accepted")


def test_the_documented_example_shows_each_declared_default():
    """docs/README.md's example settings file says each setting's default, as Settings declares it once;
    a default changed in one place and not the other fails here."""
    import re
    import tomllib

    from agentcli.config import SETTINGS, Settings

    readme = (Path(__file__).parents[2] / "docs" / "README.md").read_text()
    example = tomllib.loads(found(re.compile(r"```toml\n(model = .*?)```", re.DOTALL), readme).group(1))
    examples_not_defaults = {"max_thinking_tokens", "api_key_helper", "agents", "permissions"}  # their comments say
    defaults = Settings()
    assert set(example) <= set(SETTINGS)
    shown = {key: value for key, value in example.items() if key not in examples_not_defaults}
    assert shown == {key: getattr(defaults, key) for key in shown}
    assert len(shown) >= 15
