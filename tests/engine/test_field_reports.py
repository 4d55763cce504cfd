"""The 13 field reports, each as a test of its exact message and of what the
playground must show a template author who meets the fault.

The reports live in `samples/field-reports.json` (one case per report, two where the
report gives an alternative template), so they also load in the playground. Each
value case is parsed one-shot, with its explicit chunking, one character at a time
and in 20 seeded random chunkings, always to the exact expected message. On top:
the error, lint warning, trace warning or OpenAI-view property its description asks for.
"""

import pytest

from engine import ResponseParseError, ResponseParser, lint, openai_view, parse_response, trace
from engine.authoring.samples import load_samples
from tests.support.stream_helpers import random_cuts, stream_events

REPORTS = {s.name: s for s in load_samples() if s.family == "field-reports"}
RANDOM_CHUNKINGS = 20

# Report name -> the sample case holding its expected message (the fixed template where
# the report gives an alternative one).
REPORT_NAMES = [
    "split-open-delimiter",
    "close-delimiter-inside-json-string",
    "reasoning-open-prefilled-by-prompt",
    "truncated-inside-reasoning",
    "several-tokens-in-one-chunk",
    "empty-arguments-object",
    "unbalanced-brace-inside-string",
    "non-ascii-arguments",
    "json-array-of-calls",
    "arguments-before-name",
    "tool-call-opened-inside-reasoning",
    "prose-before-xml-tool-call",
    "prefix-required-for-prefilled-reasoning",
]
VALUE_CASES = sorted(name for name, s in REPORTS.items() if s.expected is not None)


def chunkings(sample):
    """(label, chunks): one-shot, explicit, one character at a time, 20 seeded random."""
    yield "one-shot", [sample.generation]
    if sample.chunks is not None:
        yield "explicit", list(sample.chunks)
    yield "one-character", list(sample.generation)
    for seed in range(RANDOM_CHUNKINGS):
        yield f"random-{seed}", random_cuts(sample.generation, seed)


def stream(sample, chunks, prefix=None):
    return stream_events(
        sample.template, chunks, sample.prefix if prefix is None else prefix, tools=sample.tools
    )


def test_every_report_is_a_sample():
    assert set(REPORT_NAMES) <= set(REPORTS)
    assert len(REPORT_NAMES) == 13


@pytest.mark.parametrize("name", VALUE_CASES)
def test_exact_message_in_every_chunking(name):
    sample = REPORTS[name]
    assert (
        parse_response(sample.generation, sample.template, prefix=sample.prefix, tools=sample.tools)
        == sample.expected
    )
    for label, chunks in chunkings(sample):
        message, _ = stream(sample, chunks)
        assert message == sample.expected, f"{label}: {chunks!r}"


def test_split_open_delimiter_never_leaks():
    sample = REPORTS["split-open-delimiter"]
    for label, chunks in chunkings(sample):
        _, events = stream(sample, chunks)
        text = "".join(e.get("text", "") for e in events if e["type"] == "region_chunk")
        for fragment in ("<|action", "_start|>", "<|plu", "gin|>", "<|action_", "end|>"):
            assert fragment not in text, (
                f"{label}: delimiter fragment {fragment!r} emitted as chunk text"
            )


# -- close delimiter inside a JSON string --------------------------------------------------------


def test_close_inside_json_string_plain_template_fails_clearly():
    sample = REPORTS["close-delimiter-inside-json-string-plain-close"]
    for label, chunks in chunkings(sample):
        with pytest.raises(ResponseParseError) as caught:
            stream(sample, chunks)
        error = caught.value
        assert error.field == "tool_calls", label
        assert "fields.tool_calls" in str(error), label
        assert "A call block ends with " in str(error), f"{label}: the error must show the text"
        assert error.text.endswith('"body": "A call block ends with '), label


def test_close_inside_json_string_lint_and_trace():
    plain = REPORTS["close-delimiter-inside-json-string-plain-close"]
    fixed = REPORTS["close-delimiter-inside-json-string"]
    found = [(d.code, d.path) for d in lint(plain.template)]
    assert ("json-close-literal", "fields.tool_calls.close") in found
    assert "json-close-literal" not in {d.code for d in lint(fixed.template)}
    result = trace(plain.generation, plain.template, prefix=plain.prefix)
    assert result.error is not None and result.error.field == "tool_calls"
    assert [w.code for w in result.warnings] == ["close-inside-json-string"]
    assert trace(fixed.generation, fixed.template, prefix=fixed.prefix).warnings == []


# -- reasoning opened by the prompt --------------------------------------------------------------


def test_prefilled_reasoning_initial_events_show_the_region_opening():
    sample = REPORTS["reasoning-open-prefilled-by-prompt"]
    parser = ResponseParser(sample.template, prefix=sample.prefix)
    assert parser.initial_events == [
        {"type": "region_open", "field": "reasoning_content"},
        {"type": "region_chunk", "field": "reasoning_content", "text": "\n", "dirty": False},
    ]


def test_prefix_required_close_without_open_warning():
    sample = REPORTS["prefix-required-for-prefilled-reasoning"]
    missing = REPORTS["prefix-required-for-prefilled-reasoning-without-prefix"]
    assert missing.prefix == "" and missing.expected != sample.expected
    result = trace(sample.generation, sample.template, prefix="")
    assert [w.code for w in result.warnings] == ["close-without-open"]
    assert "</think>" in result.warnings[0].message and "prefix" in result.warnings[0].message
    assert trace(sample.generation, sample.template, prefix=sample.prefix).warnings == []


def test_truncated_inside_reasoning_has_no_content():
    sample = REPORTS["truncated-inside-reasoning"]
    for label, chunks in chunkings(sample):
        message, _ = stream(sample, chunks)
        assert "content" not in message, label


# -- tool call opened inside reasoning -----------------------------------------------------------


def test_tool_call_opened_inside_reasoning_is_visible():
    plain = REPORTS["tool-call-opened-inside-reasoning-plain-close"]
    fixed = REPORTS["tool-call-opened-inside-reasoning"]
    assert "tool_calls" not in plain.expected  # the fault as the author meets it
    assert "tool-call-swallowed-by-reasoning" in {d.code for d in lint(plain.template)}
    assert "tool-call-swallowed-by-reasoning" not in {d.code for d in lint(fixed.template)}
    codes = [w.code for w in trace(plain.generation, plain.template, prefix=plain.prefix).warnings]
    assert "tool-call-open-swallowed" in codes
    assert trace(fixed.generation, fixed.template, prefix=fixed.prefix).warnings == []


# -- OpenAI streaming view -----------------------------------------------------------------------


def _view(sample, chunks):
    return openai_view(
        sample.generation, sample.template, prefix=sample.prefix, tools=sample.tools, chunks=chunks
    )


def test_empty_arguments_stream_as_empty_object():
    sample = REPORTS["empty-arguments-object"]
    for label, chunks in chunkings(sample):
        result = _view(sample, chunks)
        assert result.arguments(0) == "{}", label
        assert result.ok, label


def test_non_ascii_is_never_escaped():
    sample = REPORTS["non-ascii-arguments"]
    for label, chunks in chunkings(sample):
        result = _view(sample, chunks)
        assert (
            result.arguments(0)
            == '{"title": "研究报告：大模型推理 🚀", "steps": ["检索资料", "生成图表"]}'
        ), label
        assert result.text("reasoning_content") == "用户需要一个计划。", label
        assert result.ok, label


def test_json_array_of_calls_arguments_only_append():
    sample = REPORTS["json-array-of-calls"]
    final = '{"city": "Boston", "days": 3}'
    for label, chunks in chunkings(sample):
        result = _view(sample, chunks)
        pieces = [
            call["function"]["arguments"]
            for delta in result.deltas
            for call in delta.get("tool_calls", ())
            if call["index"] == 0 and "arguments" in call.get("function", {})
        ]
        # Each piece extends what was sent: every running concatenation is a prefix of the final JSON.
        sent = ""
        for piece in pieces:
            sent += piece
            assert final.startswith(sent), (
                f"{label}: {sent!r} is not a prefix of the final arguments"
            )
        assert sent == final, label
        assert result.ok and not result.checks[0].retracted, label


@pytest.mark.parametrize(
    "name",
    ["unbalanced-brace-inside-string", "arguments-before-name", "several-tokens-in-one-chunk"],
)
def test_openai_view_arguments_join_to_final(name):
    sample = REPORTS[name]
    for label, chunks in chunkings(sample):
        result = _view(sample, chunks)
        assert result.ok and not any(c.retracted for c in result.checks), label


def test_prose_before_xml_call_is_typed():
    sample = REPORTS["prose-before-xml-tool-call"]
    arguments = sample.expected["tool_calls"][0]["function"]["arguments"]
    assert arguments["num_results"] == 5 and isinstance(arguments["num_results"], int)
    assert sample.expected["content"] == "Let me search for that."
