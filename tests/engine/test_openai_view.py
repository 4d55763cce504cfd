"""OpenAI streaming view: append-only argument pieces that join to the final arguments."""

import pytest

from engine import openai_view
from engine.authoring.stream_checks import random_chunks
from tests.support.shared_inputs import field_reports, needs_field_reports

FIELD_REPORTS = field_reports()
pytestmark = needs_field_reports


def view(name, chunks=None):
    case = FIELD_REPORTS[name]
    return openai_view(
        case["output"],
        case["template"],
        prefix=case["prefix"],
        tools=case.get("tools"),
        chunks=chunks,
    )


def test_non_ascii_arguments_one_character_at_a_time():
    result = view(
        "non-ascii-arguments", chunks=list(FIELD_REPORTS["non-ascii-arguments"]["output"])
    )
    calls = [d["tool_calls"][0] for d in result.deltas if "tool_calls" in d]
    assert calls[0] == {
        "index": 0,
        "id": "call_0",
        "type": "function",
        "function": {"name": "planning", "arguments": ""},
    }
    assert [c["function"]["arguments"] for c in calls[1:]] == [
        "{",
        '"title": "研究报告：大模型推理 🚀"',
        ', "steps": [',
        '"检索资料"',
        ', "生成图表"',
        "]}",
    ]
    assert result.text("reasoning_content") == "用户需要一个计划。"
    assert result.deltas[0] == {"role": "assistant"}
    assert result.ok


def test_empty_arguments_stream_as_empty_object():
    for chunks in (None, list(FIELD_REPORTS["empty-arguments-object"]["output"])):
        result = view("empty-arguments-object", chunks)
        assert result.arguments(0) == "{}" and result.ok
        assert result.checks[0].expected == "{}"


def test_json_array_of_calls():
    case = FIELD_REPORTS["json-array-of-calls"]
    result = view("json-array-of-calls", chunks=random_chunks(case["output"], 1))
    assert result.arguments(0) == '{"city": "Boston", "days": 3}'
    assert [(c.index, c.name, c.ok) for c in result.checks] == [(0, "get_forecast", True)]


def test_several_calls_in_one_array_get_their_own_indices():
    template = FIELD_REPORTS["json-array-of-calls"]["template"]
    output = '<|tool_call|>[{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]<|end_of_text|>'
    result = openai_view(output, template, prefix="", chunks=list(output))
    assert [(c.index, c.name, c.streamed) for c in result.checks] == [
        (0, "a", '{"x": 1}'),
        (1, "b", "{}"),
    ]
    assert [
        d["tool_calls"][0]["id"] for d in result.deltas if "id" in d.get("tool_calls", [{}])[0]
    ] == ["call_0", "call_1"]


@pytest.mark.parametrize("seed", range(5))
def test_unbalanced_brace_inside_string(seed):
    case = FIELD_REPORTS["unbalanced-brace-inside-string"]
    result = view("unbalanced-brace-inside-string", random_chunks(case["output"], seed))
    assert result.arguments(0) == '{"command": "mkdir -p test/{test1,test2"}'
    assert result.ok and not result.checks[0].retracted


def test_text_deltas_and_xml_call_at_close():
    result = view(
        "prose-before-xml-tool-call",
        chunks=list(FIELD_REPORTS["prose-before-xml-tool-call"]["output"]),
    )
    assert result.text("content") == "Let me search for that."
    assert result.arguments(0) == '{"keyword": "diffusion models", "num_results": 5}'
    assert result.ok
