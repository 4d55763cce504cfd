"""The compact event store of a streamed parse, and a live parse viewed while it streams."""

from __future__ import annotations

import pytest

from engine import ResponseParser
from engine.authoring.samples import load_samples
from engine.template_files import load_template_file
from playground.parse.event_store import (
    FINALIZE,
    PREFIX,
    EventStore,
    chunks_overlapping,
    event_numbered,
    without_chunks,
)
from playground.parse.parse_view import LiveParse, traced_view

QWEN3 = load_template_file("qwen3").response_template
BAD_ARGUMENTS = (
    'Let me look.<tool_call>\n{"name": "get_weather", "arguments": {"city": Paris}}\n</tool_call>'
)


def _streamed_events(sample) -> tuple[list[tuple[int, dict]], str]:
    parser = ResponseParser(
        sample.template, prefix=sample.prefix, tools=sample.tools, positions=True, on_error="keep"
    )
    logged = [(PREFIX, event) for event in parser.initial_events]
    for index, character in enumerate(sample.generation):
        logged += [(index + 1, event) for event in parser.feed(character)]
    _, final_events = parser.finalize()
    logged += [(FINALIZE, event) for event in final_events]
    return logged, sample.prefix[parser.prefix_cut :] + sample.generation


@pytest.mark.parametrize("sample", load_samples()[::7], ids=lambda sample: sample.id)
def test_the_store_gives_back_every_event_as_the_engine_gave_it(sample):
    logged, stream = _streamed_events(sample)
    store = EventStore()
    for phase, event in logged:
        store.append([event], phase)
    events = store.view(stream)
    assert [logged_event.event for logged_event in events] == [event for _, event in logged]
    assert [e.number for e in events] == list(range(1, len(logged) + 1))
    assert events[-1] == events[len(logged) - 1]
    assert [e.event for e in without_chunks(events)] == [
        event for _, event in logged if event["type"] != "region_chunk"
    ]


def test_phases_are_labelled_and_a_view_is_frozen_at_its_length():
    store = EventStore()
    store.append([{"type": "region_open", "field": "content"}], PREFIX)
    store.append(
        [
            {
                "type": "region_chunk",
                "field": "content",
                "text": "ab",
                "dirty": True,
                "start": 0,
                "end": 2,
            }
        ],
        1,
    )
    early = store.view("ab")
    store.append([{"type": "region_close", "field": "content"}], FINALIZE)
    late = store.view("ab")
    assert len(early) == 2 and len(late) == 3
    assert [e.phase for e in late] == ["prefix", "feed 1", "finalize"]
    assert late[1].event == {
        "type": "region_chunk",
        "field": "content",
        "text": "ab",
        "dirty": True,
        "start": 0,
        "end": 2,
    }
    assert event_numbered(late, 3).event == {"type": "region_close", "field": "content"}
    assert event_numbered(early, 3) is None and event_numbered(late, 0) is None


def test_a_chunk_that_is_not_the_stream_between_its_offsets_is_kept_as_given():
    odd = {
        "type": "region_chunk",
        "field": "content",
        "text": "changed",
        "dirty": False,
        "start": 0,
        "end": 2,
    }
    no_positions = {"type": "region_chunk", "field": "content", "text": "ab", "dirty": False}
    store = EventStore()
    store.append([odd, no_positions], 1)
    assert [e.event for e in store.view("ab")] == [odd, no_positions]
    assert [e.number for e in chunks_overlapping(store.view("ab"), "content", 1, 2)] == [1]


def _replayed(generation: str, view_every_step: bool):
    live = LiveParse(QWEN3, "", None)
    for character in generation:
        live.feed(character)
        if view_every_step:
            live.view()
    live.finalize()
    return live.view()


def test_viewing_a_replay_at_every_step_ends_with_the_view_of_one_look_at_the_end():
    """The region map is merged between views; an error found at the close marks spans merged before it."""
    stepped, once = _replayed(BAD_ARGUMENTS, True), _replayed(BAD_ARGUMENTS, False)
    assert [(s.start, s.end, s.kind, s.error) for s in stepped.spans] == [
        (0, 12, "body", None),
        (12, 23, "open", 0),
        (23, 77, "body", 0),
        (77, 90, "close", 0),
    ]
    assert stepped.spans == once.spans
    assert list(stepped.events) == list(once.events)
    assert stepped.errors == once.errors and stepped.errors[0].field == "tool_calls"
    # The failed call's delimiters are consumed; its body is kept as text.
    assert stepped.message == {
        "role": "assistant",
        "content": 'Let me look.\n{"name": "get_weather", "arguments": {"city": Paris}}',
    }


def test_the_parse_button_and_a_replay_to_the_end_show_one_picture():
    """One tracer under both: the same spans, errors, warnings and diagnoses (worked out once)."""
    parsed = traced_view(QWEN3, "", BAD_ARGUMENTS, None)
    replayed = _replayed(BAD_ARGUMENTS, False)
    assert parsed.spans == replayed.spans and parsed.errors == replayed.errors
    assert parsed.diagnoses == replayed.diagnoses and parsed.warnings == replayed.warnings
    assert [s.kind for s in parsed.spans] == ["body", "open", "body", "close"]
