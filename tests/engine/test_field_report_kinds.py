"""One generalised test per kind of fault in the field reports.

Each test covers the class of inputs that breaks the same way as a report, over
every shipped template and its samples, or over generated values.
"""

import copy
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import (
    ResponseParseError,
    load_template,
    message_from_events,
    openai_view,
    parse_response,
    trace,
)
from engine.authoring.samples import load_samples
from engine.template_files import list_templates
from tests.support.stream_helpers import stream

SAMPLES = [s for s in load_samples() if s.expected is not None and s.template_name != "<inline>"]
TEMPLATES = {t.name: t.response_template for t in list_templates()}
FIELD_REPORTS = {s.name: s for s in load_samples() if s.family == "field-reports"}


def _events(template, prefix, chunks, tools=None):
    streamed = stream(template, chunks, prefix, tools=tools)
    return streamed.message, streamed.fed, streamed.final


def _regions(events):
    out, current = [], None
    for event in events:
        if event["type"] == "region_open":
            current = [event["field"], ""]
        elif event["type"] == "region_chunk":
            current[1] += event["text"]
        elif event["type"] == "region_close":
            out.append((*current, json.dumps(event["value"], sort_keys=True, default=str)))
    return out


def _delimiter_spans(sample):
    """(start, end) of every delimiter (open or close, literal or pattern) matched in the generation."""
    result = trace(sample.generation, sample.template, prefix=sample.prefix, tools=sample.tools)
    return [
        (s.start, s.end)
        for s in result.spans
        if s.source == "generation" and s.kind in ("open", "close") and s.end - s.start > 1
    ]


# -- kind: a delimiter split across chunks (split-open-delimiter) --------------------------------


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.id)
def test_every_split_of_every_delimiter(sample):
    text = sample.generation
    _, whole, final = _events(sample.template, sample.prefix, [text], sample.tools)
    expected_regions = _regions(whole + final)
    rng = random.Random(sample.id)
    for start, end in _delimiter_spans(sample):
        cuts = range(start + 1, end)
        splits = [[c] for c in cuts]
        pairs = [
            (a, b)
            for a in range(start, end)
            for b in range(a + 1, end + 1)
            if 0 < a and b < len(text)
        ]
        splits += [list(p) for p in rng.sample(pairs, min(len(pairs), 12))]
        for points in splits:
            bounds = [0, *points, len(text)]
            chunks = [text[a:b] for a, b in zip(bounds, bounds[1:])]
            message, events, final = _events(sample.template, sample.prefix, chunks, sample.tools)
            assert message == sample.expected, f"split at {points}: {chunks!r}"
            assert _regions(events + final) == expected_regions, f"split at {points}"


# -- kind: several tokens in one chunk (several-tokens-in-one-chunk) ------------------------------


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.id)
def test_large_random_chunks_equal_one_shot(sample):
    text = sample.generation
    _, whole, final = _events(sample.template, sample.prefix, [text], sample.tools)
    expected_regions = _regions(whole + final)
    for seed in range(5):
        rng = random.Random(seed)
        chunks, i = [], 0
        while i < len(text):
            size = rng.randint(8, 96)
            chunks.append(text[i : i + size])
            i += size
        message, events, final = _events(sample.template, sample.prefix, chunks, sample.tools)
        assert message == sample.expected, f"seed {seed}: {chunks!r}"
        assert _regions(events + final) == expected_regions


# -- kind: truncation (truncated-inside-reasoning) -----------------------------------------------


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.id)
def test_truncation_at_every_position(sample):
    """Cut anywhere: only ResponseParseError may be raised, and every region closed before the
    cut (by its own close delimiter) has exactly its value in the full parse, so no delimiter
    fragment can be in a closed field's value."""
    text = sample.generation
    _, full_events, full_final = _events(sample.template, sample.prefix, [text], sample.tools)
    full_closes = [e for e in full_events + full_final if e["type"] == "region_close"]
    stride = max(1, len(text) // 400)
    for cut in range(0, len(text) + 1, stride):
        try:
            message, events, final = _events(
                sample.template, sample.prefix, [text[:cut]], sample.tools
            )
        except ResponseParseError:
            continue
        closed = [e for e in events if e["type"] == "region_close"]
        assert closed == full_closes[: len(closed)], (
            f"cut {cut}: a region closed before the cut changed value"
        )
        assert message == message_from_events(events + final, sample.template), (
            f"cut {cut}: the events do not add up"
        )


# -- kind: a close delimiter inside a JSON string (close-delimiter-inside-json-string) -----------


def _safe_json_templates():
    names = []
    for name, template in TEMPLATES.items():
        field = template["fields"].get("tool_calls", {})
        if field.get("content") == "json" and field.get("close_pattern", "").startswith("(?<="):
            names.append(name)
    return sorted(names)


def _string_paths(value, path=()):
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _string_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _string_paths(item, (*path, index))


def _set(obj, path, value):
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


@pytest.mark.parametrize("name", _safe_json_templates())
def test_json_string_containing_every_delimiter(name):
    samples = [s for s in SAMPLES if s.template_name == name and s.expected.get("tool_calls")]
    literals = set()
    for sample in samples:
        result = trace(sample.generation, sample.template, prefix=sample.prefix)
        literals |= {
            s.text.strip() for s in result.spans if s.kind in ("open", "close") and s.text.strip()
        }
    checked = 0
    for sample in samples:
        arguments = sample.expected["tool_calls"][0]["function"]["arguments"]
        delims = (
            sample.template["fields"]["tool_calls"]
            .get("content_args", {})
            .get("string_delims", [['"', '"']])
        )
        for path, value in _string_paths(arguments):
            quoted = [(o, c) for o, c in delims if o + value + c in sample.generation]
            if len(value) < 2 or sample.generation.count(value) != 1 or not quoted:
                continue
            left, right = quoted[0]
            for literal in sorted(literals):
                new_value = f"{value[:1]} a {literal} b {value[1:]}"
                written = (
                    json.dumps(new_value, ensure_ascii=False)
                    if left == '"'
                    else left + new_value + right
                )
                generation = sample.generation.replace(left + value + right, written)
                expected = copy.deepcopy(sample.expected)
                _set(expected["tool_calls"][0]["function"]["arguments"], path, new_value)
                for chunks in ([generation], list(generation)):
                    message, _, _ = _events(sample.template, sample.prefix, chunks, sample.tools)
                    assert message == expected, f"{sample.id} with {literal!r} in {path}"
                checked += 1
            break
    assert checked, f"{name}: no sample has a JSON string argument to probe"


# -- kind: JSON argument values (unbalanced-brace, non-ascii, arguments-before-name) --------------

TEXT = st.text(st.sampled_from(list('ab {}[]"\\/\n\t:,<é中🚀ü') + ["\u2028", "\x00"]), max_size=12)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)
ARGUMENTS = st.dictionaries(TEXT, JSON_VALUES, max_size=5)
HERMES = TEMPLATES["hermes-2-pro"]
ARRAY = FIELD_REPORTS["json-array-of-calls"].template
ARRAY_PREFIX = FIELD_REPORTS["json-array-of-calls"].prefix


def _chunked(text, sizes):
    chunks, i = [], 0
    for size in sizes:
        if i >= len(text):
            break
        chunks.append(text[i : i + size])
        i += size
    if i < len(text):
        chunks.append(text[i:])
    return chunks


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    arguments=ARGUMENTS,
    ascii_only=st.booleans(),
    arguments_first=st.booleans(),
    array=st.booleans(),
    sizes=st.lists(st.integers(1, 40), max_size=30),
)
def test_json_arguments_round_trip(arguments, ascii_only, arguments_first, array, sizes):
    pairs = [("name", "do_it"), ("arguments", arguments)]
    call = dict(reversed(pairs) if arguments_first else pairs)  # key order must not matter
    body = json.dumps([call] if array else call, ensure_ascii=ascii_only)
    if array:
        template, prefix, generation = ARRAY, ARRAY_PREFIX, f"<|tool_call|>{body}<|end_of_text|>"
    else:
        template, prefix, generation = HERMES, "", f"<tool_call>\n{body}\n</tool_call><|im_end|>"
    expected = {
        "role": "assistant",
        "tool_calls": [{"type": "function", "function": {"name": "do_it", "arguments": arguments}}],
    }
    assert parse_response(generation, template, prefix=prefix) == expected
    chunks = _chunked(generation, sizes)
    message, _, _ = _events(template, prefix, chunks)
    assert message == expected
    view = openai_view(generation, template, prefix=prefix, chunks=chunks)
    assert json.loads(view.arguments(0)) == arguments
    assert view.arguments(0) == json.dumps(arguments, ensure_ascii=False)
    assert view.ok and not view.checks[0].retracted


# -- kind: empty arguments (empty-arguments-object) ----------------------------------------------


def _empty_argument_cases():
    """Every shipped-template sample whose first call is a JSON object under "arguments" or
    "parameters", rewritten with that object empty."""
    decoder = json.JSONDecoder()
    cases = []
    for sample in SAMPLES:
        calls = sample.expected.get("tool_calls")
        if not calls:
            continue
        for key in ('"arguments": ', '"arguments":', '"parameters": '):
            at = sample.generation.find(key)
            if at == -1:
                continue
            start = at + len(key)
            try:
                value, end = decoder.raw_decode(sample.generation, start)
            except ValueError:
                continue
            if value != calls[0]["function"]["arguments"]:
                continue
            expected = copy.deepcopy(sample.expected)
            expected["tool_calls"][0]["function"]["arguments"] = {}
            cases.append(
                (sample, sample.generation[:start] + "{}" + sample.generation[end:], expected)
            )
            break
    return cases


EMPTY_CASES = _empty_argument_cases()


def test_empty_argument_family_is_broad():
    assert len({sample.family for sample, _, _ in EMPTY_CASES}) >= 8


@pytest.mark.parametrize(
    "sample, generation, expected", EMPTY_CASES, ids=[s.id for s, _, _ in EMPTY_CASES]
)
def test_empty_arguments_stream_as_empty_object(sample, generation, expected):
    for chunks in (
        [generation],
        list(generation),
        _chunked(generation, [random.Random(s).randint(1, 9) for s in range(200)]),
    ):
        message, _, _ = _events(sample.template, sample.prefix, chunks, sample.tools)
        assert message == expected
        view = openai_view(
            generation, sample.template, prefix=sample.prefix, tools=sample.tools, chunks=chunks
        )
        assert view.arguments(0) == "{}" and view.ok


# -- kind: a tool call opened inside reasoning (tool-call-opened-inside-reasoning) ---------------


def _lookahead_templates():
    found = {"field-report": FIELD_REPORTS["tool-call-opened-inside-reasoning"].template}
    for name, template in TEMPLATES.items():
        reasoning = template["fields"].get("reasoning_content", {})
        tools = template["fields"].get("tool_calls", {})
        if (
            "(?=" in reasoning.get("close_pattern", "")
            and tools.get("open") == "<tool_call>"
            and reasoning.get("open") == "<think>"
        ):
            found[name] = template
    return found


LOOKAHEAD = _lookahead_templates()
REASONING_TEXT = st.text(st.sampled_from(list("ab <>/{}\n.é🚀")), max_size=30).filter(
    lambda t: "<think>" not in t and "</think>" not in t and "<tool_call>" not in t and t.strip()
)


def test_lookahead_templates_include_shipped_ones():
    assert len(LOOKAHEAD) >= 3, sorted(LOOKAHEAD)


@settings(max_examples=100, deadline=None)
@given(
    name=st.sampled_from(sorted(LOOKAHEAD)),
    reasoning=REASONING_TEXT,
    arguments=ARGUMENTS,
    gap=st.sampled_from(["", "\n", "\n\n"]),
    sizes=st.lists(st.integers(1, 12), max_size=60),
)
def test_tool_call_inside_reasoning_always_yields_the_call(name, reasoning, arguments, gap, sizes):
    template = LOOKAHEAD[name]
    call = json.dumps({"name": "f", "arguments": arguments}, ensure_ascii=False)
    generation = f"<think>{reasoning}{gap}<tool_call>\n{call}\n</tool_call>"
    expected = {
        "role": "assistant",
        "reasoning_content": reasoning.strip(),
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": arguments}}],
    }
    assert parse_response(generation, template, prefix="") == expected
    message, _, _ = _events(template, "", _chunked(generation, sizes))
    assert message == expected


def test_lookahead_templates_load():
    for template in LOOKAHEAD.values():
        load_template(template)
