"""Lenient parsing (`on_error="keep"`): a region that fails never takes the rest of the message with it.

The failed region's raw text, delimiters included, becomes unclaimed text for the
implicit field; every other field keeps its value; `parser.errors` says what failed
and where, to the character; the failed region's `region_close` carries `error` and no
`value`. One-shot equals streaming, in every chunking, and the events add up to the message.
"""

from __future__ import annotations

import json

import pytest

from engine import (
    ResponseParseError,
    ResponseParser,
    check_stream,
    get_response_parser,
    message_from_events,
    openai_view,
    parse_response,
    trace,
)
from engine.cli import main as cli
from engine.errors import UndefinedPlaceholderError
from tests.support.paths import ROOT as REPO_ROOT
from tests.support.stream_helpers import random_cuts, stream, stream_events
from tests.support.templates_for_tests import SMOLLM3

PREFIX = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
TEMPLATE = SMOLLM3  # literal <think>, <tool_call> JSON, content closed by <|im_end|>
PARIS = {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
BROKEN_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Lyon"</tool_call>'
GENERATION = (
    "<think>\nTwo cities.\n</think>\n\nLet me check.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
    + BROKEN_CALL
    + "\n"
)
BROKEN_BODY = '\n{"name": "get_weather", "arguments": {"city": "Lyon"'
KEPT_MESSAGE = {
    "role": "assistant",
    "reasoning_content": "Two cities.",
    "content": "Let me check.\n\n" + BROKEN_BODY,  # its delimiters consumed
    "tool_calls": [PARIS],
}
JSON_ERROR = (
    "fields.tool_calls: json: Expecting ',' delimiter (line 2, column 53, offset 53): "
    '\'\\n{"name": "get_weather", "arguments": {"city": "Lyon"\' (region at offset 136)'
)
KEPT_ERROR = (
    JSON_ERROR + " (kept leniently: its body (136-189) is kept as text, its delimiters consumed)"
)


def keep(chunks, template=TEMPLATE, prefix=PREFIX, **options):
    """(message, events, errors) of a keep-mode parse fed `chunks`."""
    streamed = stream(template, chunks, prefix, on_error="keep", **options)
    return streamed.message, streamed.events, streamed.parser.errors


def test_a_broken_call_keeps_the_reasoning_the_text_and_the_other_call():
    message, events, errors = keep([GENERATION])
    assert message == KEPT_MESSAGE
    assert [
        (str(e), e.field, e.key, e.start, e.end, e.offset, e.position, e.region, e.lenient)
        for e in errors
    ] == [(KEPT_ERROR, "tool_calls", "fields.tool_calls.content", 125, 201, 136, 189, 4, False)]
    assert errors[0].text == BROKEN_CALL
    stream = (
        PREFIX[len(PREFIX) :] + GENERATION
    )  # the prefix ends with the anchor: the stream is the generation
    assert (
        stream[125:201] == BROKEN_CALL and stream[189:201] == "</tool_call>"
    )  # JSON failed at the body's end
    failed = [e for e in events if e["type"] == "region_close" and e["field"] == "tool_calls"][1]
    assert failed == {"type": "region_close", "field": "tool_calls", "error": KEPT_ERROR}
    assert message_from_events(events, TEMPLATE) == message


def test_the_failed_text_arrives_as_a_content_stretch_of_its_own():
    _, events, _ = keep([GENERATION])
    after_failure = events[[e.get("error") for e in events].index(KEPT_ERROR) + 1 :]
    assert after_failure[:3] == [
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": BROKEN_BODY, "dirty": False},
        {
            "type": "region_close",
            "field": "content",
            "value": "\n\n" + BROKEN_BODY,
        },  # after "Let me check."
    ]


@pytest.mark.parametrize("seed", range(12))
def test_every_chunking_keeps_the_same_message_and_errors(seed):
    expected = keep([GENERATION])
    chunks = list(GENERATION) if seed == 0 else random_cuts(GENERATION, seed)
    message, events, errors = keep(chunks)
    assert message == expected[0]
    assert [(str(e), e.start, e.end, e.position) for e in errors] == [
        (str(e), e.start, e.end, e.position) for e in expected[2]
    ]
    assert message_from_events(events, TEMPLATE) == message


def test_raise_stays_the_default_and_the_error_says_where():
    with pytest.raises(ResponseParseError) as raised:
        parse_response(GENERATION, TEMPLATE, prefix=PREFIX)
    error = raised.value
    assert str(error) == JSON_ERROR
    assert (error.field, error.key, error.start, error.end, error.position) == (
        "tool_calls",
        "fields.tool_calls.content",
        125,
        201,
        189,
    )
    assert (
        error.text == '\n{"name": "get_weather", "arguments": {"city": "Lyon"'
    )  # raised: the body


def test_parse_response_keeps_too():
    assert parse_response(GENERATION, TEMPLATE, prefix=PREFIX, on_error="keep") == KEPT_MESSAGE
    assert parse_response([GENERATION, "Hi"], TEMPLATE, prefix=PREFIX, on_error="keep") == [
        KEPT_MESSAGE,
        {"role": "assistant", "content": "Hi"},
    ]


def test_an_unknown_mode_is_refused():
    with pytest.raises(
        ValueError, match=r"^on_error must be one of \('raise', 'keep'\), got 'ignore'$"
    ):
        ResponseParser(TEMPLATE, prefix="", on_error="ignore")
    with pytest.raises(
        ValueError, match=r"^on_error must be one of \('raise', 'keep'\), got 'skip'$"
    ):
        parse_response("x", TEMPLATE, prefix="", on_error="skip")


def test_a_call_cut_off_by_the_end_of_the_generation():
    generation = 'Checking.\n<tool_call>\n{"name": "get_weather", "argu'
    for chunks in ([generation], list(generation)):
        message, events, errors = keep(chunks)
        assert message == {
            "role": "assistant",
            "content": 'Checking.\n\n{"name": "get_weather", "argu',
        }
        assert [(e.key, e.start, e.end, e.position) for e in errors] == [
            ("fields.tool_calls.content", 10, 51, 46)
        ]
        assert generation[46:] == '"argu'  # the unterminated string starts there
        assert errors[0].text == '<tool_call>\n{"name": "get_weather", "argu'  # no close delimiter
        assert message_from_events(events, TEMPLATE) == message


def test_a_transform_path_that_does_not_resolve():
    template = {
        "start_anchor": "A",
        "fields": {
            "tool_calls": {
                "open": "<call>",
                "close": "</call>",
                "repeats": True,
                "content": "json",
                "transform": {"name": "{content.name}", "arguments": "{content.args}"},
            },
            "content": {},
        },
    }
    generation = '<call>{"name": "a", "args": {}}</call><call>{"name": "b"}</call>'
    message, events, errors = keep([generation], template=template, prefix="")
    assert message == {
        "tool_calls": [{"name": "a", "arguments": {}}],
        "content": '{"name": "b"}',
    }
    assert [(e.key, e.start, e.end, e.position) for e in errors] == [
        ("fields.tool_calls.transform", 38, 64, None)
    ]
    assert "'content' is missing key 'args'" in str(errors[0])
    assert message_from_events(events, template) == message


def test_an_undefined_placeholder_is_a_key_error_too():
    template = {
        "start_anchor": "A",
        "fields": {"x": {"open": "<x>", "close": "</x>", "transform": {"a": "{missing}"}}},
    }
    with pytest.raises(KeyError) as raised:
        parse_response("<x>1</x>", template, prefix="")
    assert isinstance(raised.value, UndefinedPlaceholderError) and isinstance(
        raised.value, ValueError
    )
    assert (
        str(raised.value)
        == "fields.x: transform placeholder '{missing}': 'missing' is not defined; in scope: ['content']; region body: '1' (region at offset 3)"
    )


def test_typed_content_points_at_the_value():
    template = {
        "start_anchor": "A",
        "fields": {"n": {"open": "<n>", "close": "</n>", "content": "int"}, "content": {}},
    }
    message, events, errors = keep(["a<n>  x7 </n>b"], template=template, prefix="")
    assert message == {"content": "a  x7 b"}
    assert [(e.key, e.start, e.end, e.position) for e in errors] == [("fields.n.content", 1, 13, 6)]
    assert message_from_events(events, template) == message


def test_without_an_implicit_field_the_text_stays_on_the_error():
    template = {
        "start_anchor": "A",
        "fields": {"n": {"open": "<n>", "close": "</n>", "content": "int", "repeats": True}},
    }
    message, events, errors = keep(["<n>1</n><n>x</n><n>3</n>"], template=template, prefix="")
    assert message == {"n": [1, 3]}
    assert [(e.text, e.start, e.end) for e in errors] == [("<n>x</n>", 8, 16)]
    assert [e for e in events if e["type"] == "region_close"] == [
        {"type": "region_close", "field": "n", "value": 1},
        {
            "type": "region_close",
            "field": "n",
            "error": "fields.n: int: not an integer: 'x' (region at offset 11)",
        },
        {"type": "region_close", "field": "n", "value": 3},
    ]


def test_an_implicit_field_that_fails_keeps_its_earlier_value():
    template = {
        "start_anchor": "A",
        "fields": {"t": {"open": "<t>", "close": "</t>"}, "content": {"content": "int"}},
    }
    message, events, errors = keep(["12<t>x</t>"], template=template, prefix="")
    assert message == {"content": 12, "t": "x"}
    message, events, errors = keep(["12<t>x</t>3"], template=template, prefix="")
    # Stretches join as written: "123" is an int.
    assert message == {"content": 123, "t": "x"}
    message, events, errors = keep(["12<t>x</t>z"], template=template, prefix="")
    assert message == {"content": 12, "t": "x"}
    assert [(e.field, e.key, e.position) for e in errors] == [
        ("content", "fields.content.content", None)
    ]
    assert message_from_events(events, template) == message


def test_join_with_a_non_string_value():
    template = {
        "start_anchor": "A",
        "fields": {
            "r": {"open": "<r>", "close": "</r>", "repeats": True, "join": "|", "content": "json"},
            "content": {},
        },
    }
    message, events, errors = keep(
        ['<r>"a"</r><r>{"b": 1}</r><r>"c"</r>'], template=template, prefix=""
    )
    assert message == {"r": "a|c", "content": '{"b": 1}'}
    assert [(e.key, e.start, e.end) for e in errors] == [("fields.r.join", 10, 25)]
    assert message_from_events(events, template) == message


def test_a_missing_required_field_is_recorded_not_raised():
    template = {
        "start_anchor": "A",
        "fields": {"answer": {"open": "<a>", "close": "</a>", "optional": False}, "content": {}},
    }
    message, _, errors = keep(["no answer"], template=template, prefix="")
    assert message == {"content": "no answer"}
    assert [(str(e), e.field, e.key) for e in errors] == [
        (
            "required field(s) ['answer'] not found in the generation (they are marked 'optional': false)",
            "answer",
            "fields.answer.optional",
        )
    ]
    with pytest.raises(ResponseParseError, match=r"required field\(s\) \['answer'\]"):
        parse_response("no answer", template, prefix="")


def test_trace_marks_the_failed_region_and_the_failing_character():
    result = trace(GENERATION, TEMPLATE, prefix=PREFIX, on_error="keep")
    assert result.error is None and result.message == KEPT_MESSAGE
    [kept] = result.errors
    assert (
        kept.field,
        kept.key,
        kept.source,
        kept.offset,
        kept.position_source,
        kept.position,
    ) == ("tool_calls", "fields.tool_calls.content", "generation", 136, "generation", 189)
    marked = [(span.kind, span.text) for span in result.spans if span.error == 0]
    assert marked == [
        ("open", "<tool_call>"),
        ("body", '\n{"name": "get_weather", "arguments": {"city": "Lyon"'),
        ("close", "</tool_call>"),
    ]
    assert all(span.error is None for span in result.spans if span.region != kept.region)


def test_trace_in_raise_mode_gives_the_position_too():
    result = trace(GENERATION, TEMPLATE, prefix=PREFIX)
    assert result.message is None and result.errors == []
    assert (result.error.key, result.error.position_source, result.error.position) == (
        "fields.tool_calls.content",
        "generation",
        189,
    )


def test_check_stream_compares_kept_errors_across_chunkings():
    report = check_stream(
        GENERATION, TEMPLATE, prefix=PREFIX, on_error="keep", seeds=range(3), truncation_step=0
    )
    assert report.ok and report.baseline.error is None
    assert report.baseline.message == KEPT_MESSAGE
    assert report.baseline.kept_errors == [KEPT_ERROR]


def test_openai_view_falls_back_to_content_and_reports_the_announced_call():
    view = openai_view(
        GENERATION, TEMPLATE, prefix=PREFIX, on_error="keep", chunks=list(GENERATION)
    )
    assert view.text("content") == "Let me check.\n\n" + BROKEN_BODY
    assert view.text("reasoning_content") == "Two cities."
    assert [(c.index, c.name, c.ok, c.error) for c in view.checks] == [
        (0, "get_weather", True, None),
        (1, "get_weather", False, KEPT_ERROR),  # its name was streamed before the JSON broke
    ]
    with pytest.raises(ResponseParseError):
        openai_view(GENERATION, TEMPLATE, prefix=PREFIX)


def test_token_ids_with_a_real_tokenizer():
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(REPO_ROOT / "samples" / "demo-model")
    parser = get_response_parser(tokenizer, TEMPLATE, prefix=PREFIX, on_error="keep")
    events = list(parser.initial_events)
    for token in tokenizer(GENERATION, add_special_tokens=False).input_ids:
        events += parser.feed_ids([token])
    message, final = parser.finalize()
    assert message == KEPT_MESSAGE
    assert [e.position for e in parser.errors] == [189]
    assert message_from_events(events + final, TEMPLATE) == message


def test_the_command_line_keeps_with_on_error(tmp_path, capsys):
    template_file = tmp_path / "template.json"
    template_file.write_text(json.dumps(TEMPLATE))
    (tmp_path / "prefix.txt").write_text(PREFIX)
    (tmp_path / "generation.txt").write_text(GENERATION)
    arguments = [
        str(template_file),
        str(tmp_path / "generation.txt"),
        "--prefix",
        str(tmp_path / "prefix.txt"),
    ]
    assert cli(["parse", *arguments, "--on-error", "keep"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == KEPT_MESSAGE
    assert captured.err == f"kept: {KEPT_ERROR}\n"
    assert cli(["parse", *arguments]) == 1
    assert capsys.readouterr().out.startswith(
        "error: fields.tool_calls: json: Expecting ',' delimiter"
    )


# -- events add up to the message --------------------------------------------------------------


def test_a_trailing_newline_after_the_last_call_does_not_blank_the_content():
    # No end token, a newline after </tool_call>: the whitespace stretch's close adds nothing.
    generation = 'Let me check.\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>\n'
    message, events = stream_events(TEMPLATE, [generation], PREFIX)
    closes = [e for e in events if e["type"] == "region_close" and e["field"] == "content"]
    assert closes == [
        {"type": "region_close", "field": "content", "value": "Let me check."},
        {"type": "region_close", "field": "content", "value": ""},
    ]
    assert (
        message_from_events(events, TEMPLATE)
        == message
        == {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {}}}],
        }
    )


def test_a_later_stretch_carries_its_own_text_with_the_whitespace_before_it():
    generation = 'Checking.\n<tool_call>{"name": "f", "arguments": {}}</tool_call>\nDone.<|im_end|>'
    message, events = stream_events(TEMPLATE, [generation], PREFIX)
    assert [
        e["value"] for e in events if e["type"] == "region_close" and e["field"] == "content"
    ] == ["Checking.", "\n\nDone."]
    assert message["content"] == "Checking.\n\nDone."


def test_a_blank_stretch_of_a_repeating_implicit_field_adds_nothing():
    template = {
        "start_anchor": "A",
        "fields": {"x": {"open": "<x>", "close": "</x>"}, "content": {"repeats": True}},
    }
    message, events = stream_events(template, ["a<x>1</x>  <x>2</x>b"])
    assert [e for e in events if e["type"] == "region_close" and e["field"] == "content"] == [
        {"type": "region_close", "field": "content", "value": "a"},
        {"type": "region_close", "field": "content", "blank": True},
        {"type": "region_close", "field": "content", "value": "b"},
    ]
    assert message_from_events(events, template) == message == {"content": ["a", "b"], "x": "2"}
