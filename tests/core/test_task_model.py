"""A model and effort per errand: the task tool's ``model`` (an alias or an id, within ``task_models``) and
``effort`` reach the child's requests, and its record, report and usage name the model it ran on."""

from __future__ import annotations

import pytest

from agentcli.config import ConfigError, Settings
from agentcli.core.events import SubagentStarted
from agentcli.core.model.catalogue import MODEL_ALIASES
from agentcli.ui.slash import unknown_cost_note
from tests.fakes.anthropic_server import offers_tool, text, tool_result_text, tool_results, tool_use


def is_child(body):
    return not offers_tool(body, "task")


def is_main(body):
    return offers_tool(body, "task")


async def test_a_task_on_haiku_sends_the_childs_requests_to_haiku_at_its_effort(server, make_session):
    server.when(
        is_main,
        tool_use(
            "task",
            {"description": "Count files", "prompt": "How many files are there?", "model": "haiku", "effort": "low"},
        ),
        text("Two."),
        tool_use("task", {"description": "Count again", "prompt": "And now?", "resume": "sa-1"}),
        text("Still two."),
    )
    server.when(is_child, tool_use("glob", {"pattern": "*"}), text("There are two files."), text("Still two files."))
    session, events = make_session()
    await session.send("count the files with a cheap subagent")
    children = [b for b in server.requests if is_child(b)]
    parents = [b for b in server.requests if is_main(b)]
    assert [b["model"] for b in children] == [MODEL_ALIASES["haiku"]] * 2
    assert {b["model"] for b in parents} == {session.model} != {MODEL_ALIASES["haiku"]}
    assert all(b.get("output_config") == {"effort": "low"} for b in children)  # Haiku 5 takes the API's effort
    assert all("output_config" not in b for b in parents)  # the session's own effort is unchanged
    [started] = events.of(SubagentStarted)
    assert (started.model, started.effort) == (MODEL_ALIASES["haiku"], "low")
    record = session.subagents.records["sa-1"]
    assert record.to_dict()["model"] == MODEL_ALIASES["haiku"]
    # agentcli has no price for Haiku 5: /cost says so, and that the total leaves the child out
    assert record.usage.cost is None and session.main.usage.cost is not None
    assert unknown_cost_note(session) == [
        f"Cost unknown for {MODEL_ALIASES['haiku']}, which agentcli has no price "
        "for: the total leaves those subagents out."
    ]
    [result] = tool_results(parents[1])  # the footer names the model, since it is not the parent's
    assert tool_result_text(result).splitlines()[-1].endswith(f" · {MODEL_ALIASES['haiku']}]")
    await session.send("count them again")  # a resumed child keeps its model and effort
    resumed = [b for b in server.requests if is_child(b)][2:]
    assert [(b["model"], b.get("output_config")) for b in resumed] == [(MODEL_ALIASES["haiku"], {"effort": "low"})]
    server.assert_no_rejections()


async def test_a_model_outside_task_models_is_refused_with_what_may_be_chosen(server, make_session):
    server.when(
        is_main,
        tool_use("task", {"description": "Plan", "prompt": "Plan the refactor.", "model": "opus"}),
        text("I will do it myself."),
    )
    session, _ = make_session(task_models=["haiku", "claude-sonnet-5-5"])
    await session.send("plan it with opus")
    assert not [b for b in server.requests if is_child(b)] and not session.subagents.records
    [result] = tool_results(server.requests[1])
    said = tool_result_text(result)
    assert result.get("is_error") is True
    assert "'opus'" in said and "haiku, claude-sonnet-5-5" in said and "task_models" in said


def test_task_models_must_be_a_list_of_models():
    settings = Settings()
    assert settings.task_models == ["haiku", "sonnet", "opus"]
    settings.merge({"task_models": [" haiku ", "claude-opus-5-5"]}, "settings.toml")
    assert settings.task_models == ["haiku", "claude-opus-5-5"]
    with pytest.raises(ConfigError, match=r"^settings.toml: 'task_models' must be a list of models, such as"):
        Settings().merge({"task_models": "haiku"}, "settings.toml")
