"""What an editor shows of a session beside the conversation: its model picker and its title.

- The model is a session config option (``configOptions`` of ``session/new`` and ``session/load``, category
  ``model``), as the SDK's schema defines the picker (it has no ``session/set_model``): the aliases agentcli
  knows, each as the model it stands for, and the session's model if it is none of them.
  ``session/set_config_option`` switches it, as ``/model`` does, and answers with the options as they now are.
- The title is the session's first prompt, as ``session/list`` names it: ``session_info_update`` says it once
  it is known (the first prompt, or a loaded session's).
"""

from __future__ import annotations

from acp import RequestError
from acp import schema as s

from ...core.door import MODEL_ALIASES

MODEL = "model"
TITLE_CHARS = 80


def model_option(current: str) -> s.SessionConfigOptionSelect:
    known = [
        s.SessionConfigSelectOption(value=model, name=alias.capitalize(), description=model)
        for alias, model in MODEL_ALIASES.items()
    ]
    if current not in MODEL_ALIASES.values():
        known.append(s.SessionConfigSelectOption(value=current, name=current))
    return s.SessionConfigOptionSelect(
        type="select",
        id=MODEL,
        name="Model",
        category="model",
        description="The main agent's model (subagents of type `inherit` too).",
        current_value=current,
        options=known,
    )


def options(model: str) -> list[s.SessionConfigOptionSelect | s.SessionConfigOptionBoolean]:
    return [model_option(model)]


def chosen_model(config_id: str, value: object) -> str:
    """The model a ``session/set_config_option`` picks; a RequestError with one sentence for anything else."""
    if config_id != MODEL:
        raise RequestError(-32602, f"agentcli has no option {config_id!r}; it has {MODEL!r}.")
    if not isinstance(value, str) or not value.strip():
        raise RequestError(-32602, "The model must be a model's name, such as claude-sonnet-5-5 or sonnet.")
    return value.strip()


def title_of(prompt: str) -> str | None:
    """A session's title: its first prompt's first line, cut to TITLE_CHARS."""
    line = next((line.strip() for line in prompt.splitlines() if line.strip()), "")
    return (line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…") or None


def title_update(title: str) -> s.SessionInfoUpdate:
    return s.SessionInfoUpdate(session_update="session_info_update", title=title)
