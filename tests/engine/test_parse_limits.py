"""A parse's own limits, for a server that answers strangers: `max_regions` (what its events, spans
and views cost) and `max_value_chars` (what its message and event values hold, repeats counted)."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import (
    ParseDeadlineError,
    ParseLimitError,
    ResponseParseError,
    ResponseParser,
    parse_response,
    trace,
)
from engine.message import value_chars


def parsed(generation: str, template: dict, **limits) -> dict:
    """The message of one whole-text parse with `limits` (`ResponseParser` keywords)."""
    parser = ResponseParser(template, prefix="", **limits)
    parser.feed(generation)
    return parser.finalize()[0]


REPEATS = {
    "start_anchor": "<s>",
    "fields": {"x": {"open": "<x>", "close": "</x>", "repeats": True}, "content": {}},
}


def test_a_parse_stops_before_the_region_past_its_limit():
    parser = ResponseParser(REPEATS, prefix="", max_regions=3)
    events = parser.feed("a<x>1</x><x>2</x>")
    assert [(e["type"], e["field"]) for e in events if e["type"] != "region_chunk"] == [
        ("region_open", "content"),
        ("region_close", "content"),
        ("region_open", "x"),
        ("region_close", "x"),
        ("region_open", "x"),
        ("region_close", "x"),
    ]
    with pytest.raises(ParseLimitError) as caught:
        parser.feed("<x>3</x>")
    assert str(caught.value) == (
        "the parse stopped at stream offset 17: it has opened 3 regions, the most it may "
        "(max_regions); the text after it is not parsed"
    )
    assert caught.value.offset == 17


JSON_REPEATS = {
    "start_anchor": "<s>",
    "fields": {
        "x": {"open": "<x>", "close": "</x>", "repeats": True, "content": "json"},
        "content": {},
    },
}


def limited_opens(most: int) -> tuple[list[tuple[str, str]], ParseLimitError | None]:
    """The opens and closes of a kept parse of a failed region, fed piece by piece with
    `max_regions=most`, and the limit error it stopped with (or None)."""
    parser = ResponseParser(JSON_REPEATS, prefix="", max_regions=most, on_error="keep")
    seen = []
    try:
        for piece in ("a<x>{bad", "</x>", "b", "<x>{}</x>"):
            events = parser.feed(piece)
            seen += [(e["type"], e["field"]) for e in events if e["type"] != "region_chunk"]
    except ParseLimitError as error:
        return seen, error
    return seen, None


def test_the_stretch_that_keeps_a_failed_regions_text_counts_towards_the_limit():
    # Two regions: content, then x (its JSON fails). Keeping x's text would open a third.
    seen, error = limited_opens(2)
    assert seen == [("region_open", "content"), ("region_close", "content"), ("region_open", "x")]
    # The stretch keeps the body ("{bad", at 4): the delimiters are consumed.
    assert (error.offset, error.limit, error.allowed) == (4, "max_regions", 2)
    assert str(error) == (
        "the parse stopped at stream offset 4: it has opened 2 regions, the most it may "
        "(max_regions); the text after it is not parsed"
    )
    seen, error = limited_opens(3)
    assert [kind for kind in seen if kind[0] == "region_open"] == [
        ("region_open", "content"),
        ("region_open", "x"),
        ("region_open", "content"),
    ]
    assert (error.offset, error.limit, error.allowed) == (12, "max_regions", 3)


def test_the_value_limit_error_names_its_limit():
    template = {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "close": "</x>"}}}
    with pytest.raises(ParseLimitError) as caught:
        parsed("<x>" + "a" * 20 + "</x>", template, max_value_chars=10)
    assert (caught.value.limit, caught.value.allowed) == ("max_value_chars", 10)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 6), max_size=20), st.integers(1, 8))
def test_the_region_limit_stops_every_chunking_at_the_same_place(cuts, most):
    generation = "hi<x>a</x> <x>bb</x>text<x>c</x><x></x>end"
    try:
        parsed(generation, REPEATS, max_regions=most)
        whole = None
    except ParseLimitError as error:
        whole = error.offset
    parser = ResponseParser(REPEATS, prefix="", max_regions=most)
    at, stopped = 0, None
    try:
        for size in cuts:
            parser.feed(generation[at : at + size])
            at += size
        parser.feed(generation[at:])
        parser.finalize()
    except ParseLimitError as error:
        stopped = error.offset
    assert stopped == whole


def test_a_transform_that_repeats_a_large_value_stops_at_the_value_limit():
    template = {
        "start_anchor": "<s>",
        "fields": {"x": {"open": "<x>", "transform": ["{content}"] * 500}},
    }
    generation = "<x>" + "a" * 100_000
    assert len(parse_response(generation, template, prefix="")["x"]) == 500
    with pytest.raises(
        ParseLimitError, match="its region values would hold over 1,000,000 characters"
    ):
        parsed(generation, template, max_value_chars=1_000_000)


def test_closes_that_carry_the_value_so_far_stop_at_the_value_limit():
    template = {
        "start_anchor": "<s>",
        "fields": {
            "x": {"open": "<x>", "close": "</x>"},
            "content": {"transform": {"t": "{content}"}},
        },
    }
    generation = (
        "a" * 100 + "<x></x>"
    ) * 2000  # 2,000 closes of the content so far: 200 M characters
    result = trace(generation, template, prefix="", max_value_chars=2_000_000)
    assert result.error.type == "ParseLimitError"
    assert result.spans[-1].kind == "unparsed"


def test_value_chars_counts_what_json_writes_and_stops_past_the_limit():
    assert value_chars("abc", 100) == 5
    assert value_chars({"a": ["xy", 1, None]}, 100) == 2 + 5 + 2 + 3 + 4 + 8 + 8
    shared = "x" * 1000
    assert value_chars([shared] * 1000, 10**9) == 2 + 1000 + 1000 * 1002
    # Past the limit once the list is counted: none of its strings is visited.
    assert value_chars([shared] * 10**6, 5000) == 2 + 10**6


SLOW_OPEN = {
    "start_anchor": "<s>",
    "fields": {
        "x": {"open_pattern": "<x>(?=(?:(?:a|aa)+d)?)", "close": "</x>", "repeats": True},
        "content": {},
    },
}


def test_a_deadline_between_regex_calls_names_the_patterns_being_searched():
    parser = ResponseParser(SLOW_OPEN, prefix="", deadline=time.perf_counter() + 60)
    parser.deadline = time.perf_counter() - 1  # a server moves it between feeds
    with pytest.raises(ParseDeadlineError) as raised:
        parser.feed("<x>b</x>")
    assert str(raised.value) == (
        "the parse ran past its deadline at stream offset 0 while searching with "
        "fields.x.open_pattern: the template's patterns are too slow on this input; the text "
        "after it is not parsed"
    )
    assert (raised.value.key, raised.value.offset) == ("fields.x.open_pattern", 0)


def test_a_deadline_that_cuts_a_regex_call_names_its_pattern():
    # One call takes far longer than the time left (the regex budget alone would allow it).
    generation = "ok <x>" + "a" * 40 + "c</x>"
    with pytest.raises(ParseDeadlineError) as raised:
        parse_response(
            generation, SLOW_OPEN, prefix="", regex_timeout=30, deadline=time.perf_counter() + 0.3
        )
    assert str(raised.value).startswith(
        "the parse ran past its deadline at stream offset 0 while searching with "
        "fields.x.open_pattern: "
    )
    assert raised.value.key == "fields.x.open_pattern"


def test_the_events_settled_before_a_limit_stopped_a_feed_come_with_the_error():
    parser = ResponseParser(REPEATS, prefix="", max_regions=3)
    with pytest.raises(ParseLimitError) as caught:
        parser.feed("a<x>1</x><x>2</x><x>3</x>")
    assert caught.value.events == [
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": "a", "dirty": False},
        {"type": "region_close", "field": "content", "value": "a"},
        {"type": "region_open", "field": "x"},
        {"type": "region_chunk", "field": "x", "text": "1", "dirty": False},
        {"type": "region_close", "field": "x", "value": "1"},
        {"type": "region_open", "field": "x"},
        {"type": "region_chunk", "field": "x", "text": "2", "dirty": False},
        {"type": "region_close", "field": "x", "value": "2"},
    ]


def test_a_failed_finalize_hands_over_the_events_it_settled():
    required = {
        "start_anchor": "<s>",
        "fields": {"x": {"open": "<x>", "close": "</x>", "optional": False}, "content": {}},
    }
    parser = ResponseParser(required, prefix="")
    parser.feed("no x here")
    with pytest.raises(ResponseParseError) as caught:
        parser.finalize()
    assert caught.value.key == "fields.x.optional"
    assert caught.value.events == [
        {"type": "region_close", "field": "content", "value": "no x here"}
    ]
