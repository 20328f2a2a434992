"""The SDK import thread also parses one event of each kind, so the first reply does not pay for it."""

from __future__ import annotations

from typing import cast

from anthropic._models import construct_type
from anthropic.types import RawMessageStreamEvent

from agentcli.core.model.accumulator import RAW_EVENT_TYPES
from agentcli.core.model.sdk_import import SAMPLE_EVENTS


def test_every_sample_event_parses_as_the_sdk_parses_a_streamed_one():
    # construct_type is typed to return object; it builds the type it is given
    parsed = [
        cast(RawMessageStreamEvent, construct_type(type_=RawMessageStreamEvent, value=event)) for event in SAMPLE_EVENTS
    ]
    assert [event.type for event in parsed] == [event["type"] for event in SAMPLE_EVENTS]
    assert {event.type for event in parsed} == RAW_EVENT_TYPES  # every kind the API streams is warmed
    deltas = {event.delta.type for event in parsed if event.type == "content_block_delta"}
    assert deltas == {"text_delta", "input_json_delta", "thinking_delta", "signature_delta"}
    blocks = {event.content_block.type for event in parsed if event.type == "content_block_start"}
    assert blocks == {"text", "tool_use", "thinking"}
