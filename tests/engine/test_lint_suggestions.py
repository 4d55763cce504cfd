"""The delimiter patterns lint and a trace's warnings suggest (`engine.authoring.suggested_patterns`):
each literal written as the pattern that reads like it, the same wherever it is suggested."""

import regex

from engine import lint, trace
from engine.authoring.suggested_patterns import (
    close_or_lookahead,
    delimiter_pattern,
    json_safe_close,
)
from engine.delimiters import Delimiter


def literals(*texts: str) -> Delimiter:
    return Delimiter.from_literals("x", "close", "fields.x.close", list(texts))


def written(source: str) -> Delimiter:
    return Delimiter.from_pattern(
        "x", "close", "fields.x.close_pattern", regex.compile(source, regex.DOTALL)
    )


def test_a_delimiter_is_one_pattern_of_its_literals_or_its_source():
    assert delimiter_pattern(literals("</a>", "<|end|>")) == r"<\|end\|>|</a>"  # longest first
    assert delimiter_pattern(written(r"</a>\s*")) == r"</a>\s*"


def test_a_close_that_also_ends_before_a_tool_call():
    assert close_or_lookahead(literals("</think>"), literals("<tool-call>")) == (
        "</think>|(?=<tool-call>)"
    )
    assert close_or_lookahead(written(r"</think>\s*"), written(r"<tool_call>\s*\{")) == (
        r"</think>\s*|(?=<tool_call>\s*\{)"
    )
    assert close_or_lookahead(None, literals("[CALLS]")) == r"(?=\[CALLS\])"
    assert close_or_lookahead(literals("</r>"), ["<|call|>", "(", "<|call|>"]) == (
        r"</r>|(?=<\|call\|>|\()"
    )


def test_a_json_safe_close_fires_only_after_a_brace_or_bracket():
    close = json_safe_close("<|call|>")
    assert close == r"(?<=[}\]])\s*<\|call\|>"
    assert regex.search(close, '{"a": "<|call|>"}') is None
    assert regex.search(close, '{"a": 1} <|call|>').span() == (8, 17)


TOOL_CALLS = {
    "open": "<tool-call>",
    "close_pattern": r"(?<=\})\s*</tool-call>",
    "content": "json",
    "repeats": True,
    "transform": {"type": "function", "function": "{content}"},
}


def test_lint_writes_a_hyphen_as_itself():
    template = {
        "start_anchor": "<S>",
        "fields": {
            "reasoning_content": {"open": "<think>", "close": "</think>"},
            "tool_calls": TOOL_CALLS,
            "content": {},
        },
    }
    assert [(d.code, d.suggestion) for d in lint(template)] == [
        ("tool-call-swallowed-by-reasoning", "use close_pattern '</think>|(?=<tool-call>)'")
    ]


def test_a_trace_suggests_the_same_close_as_lint():
    template = {
        "start_anchor": "<S>",
        "fields": {
            "reasoning_content": {"open": "<think>", "close": "</think>"},
            "tool_calls": TOOL_CALLS,
            "content": {},
        },
    }
    generation = '<think>plan<tool-call>{"name": "f", "arguments": {}}</tool-call>'
    result = trace(generation, template, prefix="<S>")
    assert [(w.code, w.start, w.end, w.suggestion) for w in result.warnings] == [
        (
            "tool-call-open-swallowed",
            11,
            22,
            "close reasoning_content also before a tool call, e.g. close_pattern "
            "'</think>|(?=<tool-call>)'",
        )
    ]


def test_a_close_equal_to_an_open_is_suggested_as_a_lookahead_on_it():
    [literal] = lint(
        {
            "start_anchor": "<S>",
            "fields": {
                "a": {"open": "<a>", "close": "<|b|>"},
                "b": {"open": "<|b|>"},
                "content": {},
            },
        }
    )
    assert (literal.code, literal.suggestion) == (
        "close-equals-open",
        r"close a with a lookahead instead: close_pattern '(?=<\|b\|>)'",
    )
    # A pattern both write is suggested as written, never escaped a second time.
    [pattern] = lint(
        {
            "start_anchor": "<S>",
            "fields": {
                "a": {"open": "<a>", "close_pattern": r"<\|b\|>"},
                "b": {"open_pattern": r"<\|b\|>"},
                "content": {},
            },
        }
    )
    assert (pattern.code, pattern.suggestion) == (
        "close-equals-open",
        r"close a with a lookahead instead: close_pattern '(?=<\|b\|>)'",
    )


def test_an_anchor_written_inside_a_pattern_as_a_literal_is_found():
    assert [
        (d.code, d.path)
        for d in lint(
            {
                "start_anchor": "<|start-x|>",
                "fields": {"content": {"close_pattern": r"<\|start-x\|>to=\w+|<\|end\|>"}},
            }
        )
    ] == [("anchor-inside-delimiter", "start_anchor")]
