"""Trace: spans tile the prefix tail and the generation; warnings for the field-report faults."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Tracer, trace
from engine.authoring.trace import RECORDS_MERGED
from engine.template_files import load_template_file
from tests.support.shared_inputs import field_reports, needs_field_reports
from tests.support.strategies import template_and_generation

FIELD_REPORTS = field_reports()
QWEN3 = load_template_file("qwen3").response_template


def _tiles(result):
    return "".join(span.text for span in result.spans)


def test_spans_events_and_anchor():
    result = trace(
        "hi</think>\n\nHello<|im_end|>",
        QWEN3,
        prefix="<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n<think>\n",
    )
    assert result.anchor.offset == 51 and result.anchor.found
    assert result.anchor.dropped == "<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n"
    rows = [(s.source, s.start, s.end, s.kind, s.field, s.region, s.text) for s in result.spans]
    assert rows == [
        ("prefix", 51, 58, "open", "reasoning_content", 0, "<think>"),
        ("prefix", 58, 59, "body", "reasoning_content", 0, "\n"),
        ("generation", 0, 2, "body", "reasoning_content", 0, "hi"),
        ("generation", 2, 10, "close", "reasoning_content", 0, "</think>"),
        ("generation", 10, 17, "body", "content", 1, "\n\nHello"),
        ("generation", 17, 27, "close", "content", 1, "<|im_end|>"),
    ]
    assert (
        result.spans[3].side == "close"
        and result.spans[3].delimiter == "</think>|(?=<tool_call>\\s*\\{)"
    )
    assert result.spans[3].delimiter_path == "fields.reasoning_content.close_pattern"
    assert [(e.event["type"], e.spans, e.stage) for e in result.events] == [
        ("region_open", [0], "prefix"),
        ("region_chunk", [1], "prefix"),
        ("region_chunk", [2], "feed"),
        ("region_close", [3], "feed"),
        ("region_open", [4], "feed"),
        ("region_chunk", [4], "feed"),
        ("region_close", [5], "feed"),
    ]
    assert result.events[0].event == {"type": "region_open", "field": "reasoning_content"}
    assert result.message == {"role": "assistant", "reasoning_content": "hi", "content": "Hello"}
    assert result.error is None and result.warnings == []
    json.dumps(result.to_dict())


def test_positions_are_opt_in():
    result = trace("<think>a</think>", QWEN3, prefix="", positions=True)
    assert result.events[0].event == {
        "type": "region_open",
        "field": "reasoning_content",
        "start": 0,
        "end": 7,
    }


def test_span_crossing_the_boundary_is_split():
    # "<thi" ends the prefix undecided; it becomes content text with the generation's "s".
    result = trace("s", QWEN3, prefix="<|im_start|>assistant\n<thi")
    rows = [(s.source, s.start, s.end, s.kind, s.text) for s in result.spans]
    assert rows == [("prefix", 22, 26, "body", "<thi"), ("generation", 0, 1, "body", "s")]
    assert result.events[1].spans == [0, 1]
    assert result.message["content"] == "<this"


def test_captures_recorded():
    template = load_template_file("qwen3-coder").response_template
    result = trace(
        "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
        template,
        prefix="",
    )
    opens = [s for s in result.spans if s.kind == "open"]
    assert opens[0].captures == {"name": "f"}


@needs_field_reports
def test_snapshots_hold_undecided_text():
    case = FIELD_REPORTS["split-open-delimiter"]
    result = trace(case["output"], case["template"], prefix=case["prefix"], chunks=case["chunks"])
    assert [
        (s.offset, [(x.kind, x.text) for x in s.spans if x.kind == "held"])
        for s in result.snapshots
    ] == [
        (0, [("held", "<|action")]),
        (0, [("held", "<|action_start|><|plu")]),
        (51, []),
        (83, [("held", "<|action_")]),
        (108, []),
    ]
    assert [len(s.events) for s in result.snapshots] == [0, 0, 2, 3, 7]
    for snapshot, upto in zip(result.snapshots, [8, 21, 51, 92, 108]):
        assert "".join(x.text for x in snapshot.spans) == case["output"][:upto]
    assert all(span.kind != "held" for span in result.spans)


@needs_field_reports
def test_error_keeps_every_character_and_warns_json_string():
    case = FIELD_REPORTS["close-delimiter-inside-json-string"]
    result = trace(case["output"], case["template"], prefix=case["prefix"])
    assert result.message is None
    assert (result.error.field, result.error.source, result.error.offset) == (
        "tool_calls",
        "generation",
        11,
    )
    assert _tiles(result) == case["output"]
    assert [(s.kind, s.start, s.end) for s in result.spans][-2:] == [
        ("close", 101, 113),
        ("unparsed", 113, 156),
    ]
    assert [(w.code, w.start, w.end) for w in result.warnings] == [
        ("close-inside-json-string", 101, 113)
    ]
    assert (
        result.warnings[0].suggestion
        == "use a close_pattern like '(?<=[}\\\\]])\\\\s*</tool_call>'"
    )


@needs_field_reports
def test_warns_close_without_open_when_prefix_missing():
    case = FIELD_REPORTS["prefix-required-for-prefilled-reasoning"]
    result = trace(case["output"], case["template"], prefix="")
    assert [(w.code, w.source, w.start, w.end) for w in result.warnings] == [
        ("close-without-open", "generation", 20, 28)
    ]
    assert trace(case["output"], case["template"], prefix=case["prefix"]).warnings == []


@needs_field_reports
def test_warns_tool_call_swallowed_by_reasoning():
    case = FIELD_REPORTS["tool-call-opened-inside-reasoning"]
    result = trace(case["output"], case["template"], prefix=case["prefix"])
    assert [(w.code, w.start, w.end) for w in result.warnings] == [
        ("close-without-open", 100, 110),
        ("tool-call-open-swallowed", 23, 34),
    ]
    assert (
        result.warnings[1].suggestion
        == "close reasoning_content also before a tool call, e.g. close_pattern '</think>|(?=<tool_call>)'"
    )
    fixed = trace(case["output"], case["alt_template"], prefix=case["prefix"])
    assert fixed.message == case["expected"] and fixed.warnings == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(template_and_generation())
def test_spans_tile_prefix_tail_and_generation(case):
    template, prefix, generation = case
    result = trace(generation, template, prefix=prefix, chunks=[generation[:3], generation[3:]])
    assert _tiles(result) == prefix[result.anchor.offset :] + generation
    position = {"prefix": result.anchor.offset, "generation": 0}
    for span in result.spans:
        assert span.start == position[span.source] and span.end - span.start == len(span.text)
        position[span.source] = span.end
        if span.source == "generation":
            position["prefix"] = None
    for snapshot in result.snapshots:
        received = len(generation[:3]) if snapshot.chunk == 0 else len(generation)
        assert (
            "".join(s.text for s in snapshot.spans)
            == prefix[result.anchor.offset :] + generation[:received]
        )


def test_discarded_text_is_a_warning():
    template = {
        "start_anchor": "<S>",
        "fields": {"tool_calls": {"open": "<call>", "close": "</call>", "repeats": True}},
    }
    result = trace("Sure thing. <call>x</call>", template, prefix="")
    assert result.message == {"tool_calls": ["x"]}
    assert [(w.code, w.source, w.start, w.end) for w in result.warnings] == [
        ("text-discarded", "generation", 0, 12)
    ]
    assert result.warnings[0].message == (
        "12 characters were outside every region and the template has no implicit field, so they are not "
        "in the message (first at generation offset 0: 'Sure thing. ')"
    )
    assert trace(" <call>x</call>\n", template, prefix="").warnings == []


# -- the incremental tracer ---------------------------------------------------------------


def _chunked(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(template_and_generation(contents=("text", "json")), st.data())
def test_a_tracer_fed_any_chunking_ends_with_the_whole_trace(case, data):
    """Spans are one a stretch however the text came in; diagnoses, warnings and failures alike."""
    template, prefix, generation = case
    cuts = data.draw(st.lists(st.integers(0, len(generation)), max_size=8))
    whole = trace(generation, template, prefix=prefix, on_error="keep")
    tracer = Tracer(template, prefix, on_error="keep")
    for chunk in _chunked(generation, cuts):
        tracer.feed(chunk)
    tracer.finalize()
    streamed = tracer.result()
    assert streamed.spans == whole.spans
    assert [span.text for span in streamed.spans] == [span.text for span in whole.spans]
    assert streamed.diagnoses == whole.diagnoses and streamed.warnings == whole.warnings
    assert (streamed.errors, streamed.error) == (whole.errors, whole.error)
    assert streamed.message == whole.message


def test_a_stream_fed_a_character_at_a_time_keeps_one_span_a_stretch():
    body = "word " * 40_000  # 200,000 characters of reasoning, then an answer
    generation = f"{body}</think>\n\nThe answer.<|im_end|>"
    tracer = Tracer(QWEN3, "<|im_start|>assistant\n<think>\n", on_error="keep")
    for character in generation:
        tracer.feed(character)
        assert len(tracer.parser.spans) < RECORDS_MERGED  # the parser's records are merged in
    assert tracer.span_count == 6  # one a stretch, never one a feed
    tracer.finalize()
    assert [(s.source, s.kind, s.field, s.end - s.start) for s in tracer.spans()] == [
        ("prefix", "open", "reasoning_content", 7),
        ("prefix", "body", "reasoning_content", 1),
        ("generation", "body", "reasoning_content", 200_000),
        ("generation", "close", "reasoning_content", 8),
        ("generation", "body", "content", 13),
        ("generation", "close", "content", 10),
    ]


def test_a_tracer_shows_held_text_and_its_error_marks_while_streaming():
    tracer = Tracer(QWEN3, "", on_error="keep")
    tracer.feed('<tool_call>\n{"name": "f", "arguments": {"a": 1}')
    assert [(s.kind, s.text) for s in tracer.spans()] == [
        ("open", "<tool_call>"),
        ("body", '\n{"name": "f", "arguments": {"a": 1}'),
    ]
    tracer.feed("\n</tool")
    assert [(s.kind, s.text) for s in tracer.spans()][-1] == ("held", "\n</tool")
    tracer.feed("_call>after")
    [failure] = tracer.failures()
    assert (failure.field, failure.stream_start, failure.stream_end) == ("tool_calls", 0, 60)
    assert [(s.kind, s.error) for s in tracer.spans()] == [
        ("open", 0),
        ("body", 0),
        ("close", 0),
        ("body", None),
    ]
    assert tracer.diagnoses == [] and tracer.message is None  # worked out when the parse ends
    tracer.finalize()
    assert tracer.message == {
        "role": "assistant",
        "content": '{"name": "f", "arguments": {"a": 1}after',  # its delimiters consumed
    }


def test_a_close_without_open_names_the_real_cause_never_a_prefix_already_passed():
    template = {
        "start_anchor": "<|assistant|><think>",
        "fields": {
            "reasoning_content": {"open": "<think>", "close": "</think>"},
            "content": {"close": "<|user|>"},
        },
    }
    generation = "hmm</think>Sunny.<|user|>"

    def advice(prefix: str) -> tuple[str, str]:
        [warning] = trace(generation, template, prefix=prefix).warnings
        assert (warning.code, warning.source, warning.start, warning.end) == (
            "close-without-open",
            "generation",
            3,
            11,
        )
        return warning.message.split("is not open. ")[1], warning.suggestion

    # The prompt ends with the opener, and the anchor cut past it.
    assert advice("<|user|>Hi<|assistant|><think>") == (
        "The prefix does end with '<think>', reasoning_content's open delimiter, but the start anchor "
        "cut the prefix after it, so reasoning_content never opened.",
        "end the start anchor before '<think>', so the prompt's '<think>' opens reasoning_content",
    )
    # No prefix passed: pass it.
    assert advice("") == (
        "This usually means the prefix is missing the text that opened it (a chat template that "
        "pre-writes the open delimiter).",
        "pass the prompt text (with any pre-written open delimiter) as prefix",
    )
    # A prefix without the opener: never "pass the prefix" again.
    template["start_anchor"] = "<|assistant|>"
    assert advice("<|user|>Hi<|assistant|>") == (
        "The prefix does not end with '<think>' either, so the model wrote the close without the open.",
        "if the model starts its turn inside reasoning_content, let reasoning_content open at the start "
        "of the turn; if '</think>' is only a stray marker, add it to the implicit field's closes",
    )


def test_a_delimiter_of_the_template_left_in_content_is_a_warning():
    template = {
        "start_anchor": "<|assistant|>",
        "fields": {
            "tool_calls": {
                "open_pattern": r"<call>(?=\s*\{)",
                "close": "</call>",
                "content": "json",
            },
            "content": {"close": "<|end|>"},
        },
    }
    # The open's context did not fit (no JSON after it): the call is in content.
    result = trace(
        "Sure.<call>get_weather(city=Paris)</call><|end|>", template, prefix="<|assistant|>"
    )
    assert result.message == {"content": "Sure.<call>get_weather(city=Paris)</call>"}
    warnings = [(w.code, w.start, w.end, w.message) for w in result.warnings]
    assert warnings[-1] == (
        "delimiter-in-content",
        5,
        11,
        "'<call>', the text of fields.tool_calls.open_pattern, is in content: no tool_calls region "
        "opened there, so what follows it is content, not tool_calls.",
    )
    # The model running on into a new turn: the start anchor in content.
    [warning] = trace("Hi.<|assistant|>Hi again.", template, prefix="<|assistant|>").warnings
    assert (warning.code, warning.start, warning.suggestion) == (
        "delimiter-in-content",
        3,
        "end content at the end of the turn (add the turn's end to its closes)",
    )
    # Plain words of a pattern are never looked for; a parse that reads the call has no warning.
    assert trace('<call>{"a": 1}</call>', template, prefix="<|assistant|>").warnings == []


def test_a_tracer_stopped_by_a_limit_keeps_the_events_settled_before_it():
    repeats = {
        "start_anchor": "<s>",
        "fields": {"x": {"open": "<x>", "close": "</x>", "repeats": True}, "content": {}},
    }
    tracer = Tracer(repeats, "", max_regions=2)
    events = tracer.feed("a<x>1</x><x>2</x>")
    assert [(e["type"], e["field"], e["start"], e["end"]) for e in events] == [
        ("region_open", "content", 0, 0),
        ("region_chunk", "content", 0, 1),
        ("region_close", "content", 1, 1),
        ("region_open", "x", 1, 4),
        ("region_chunk", "x", 4, 5),
        ("region_close", "x", 5, 9),
    ]
    assert tracer.error is not None and tracer.error.offset == 9
    assert tracer.feed("more") == []


def test_a_key_written_twice_in_one_json_call_is_a_warning():
    generation = (
        '<tool_call>\n{"name": "f", "arguments": {"city": "Paris", "city": "Tokyo"}}\n</tool_call>'
    )
    result = trace(generation, "qwen3", prefix="", on_error="keep")
    assert result.message["tool_calls"][0]["function"]["arguments"] == {"city": "Tokyo"}
    [warning] = [w for w in result.warnings if w.code == "key-repeated"]
    assert warning.message.startswith(
        "the key 'city' appears 2 times in one tool_calls call's arguments: only the last value is kept"
    )
    once = generation.replace('"city": "Tokyo"', '"days": 2')
    assert [w.code for w in trace(once, "qwen3", prefix="", on_error="keep").warnings] == []
