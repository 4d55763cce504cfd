"""The slips real models make (tests/support/slip_cases.json), read with the shipped templates.

Each case holds what strict parsing gives (unchanged: the reference's semantics) and what
lenient parsing (`on_error="keep"`) gives: the exact message and the errors it reports, as
(template key, stream position), the same in one shot, in random chunks and one character
at a time; the events add up to the message; and, but for the classes lenient parsing
no delimiter of the template in content. A slip the template itself misreads (a call drafted
in the reasoning) is named by a warning in strict parsing.
"""

from __future__ import annotations

import json
import random
import re

import pytest

from engine import ResponseParseError, load_template, message_from_events, parse_response
from engine.pattern_shapes import alternative_endings
from tests.support.paths import ROOT
from tests.support.stream_helpers import stream

CASES = json.loads((ROOT / "tests" / "support" / "slip_cases.json").read_text(encoding="utf-8"))[
    "cases"
]


def chunkings(output: str) -> list[list[str]]:
    """One shot, random chunks of 1 to 9 characters (seeded by the text), one character at a time."""
    rng = random.Random(len(output))
    chunks, at = [], 0
    while at < len(output):
        size = rng.randint(1, 9)
        chunks.append(output[at : at + size])
        at += size
    return [[output], chunks, list(output)]


def delimiter_texts(template) -> set[str]:
    """The literal delimiters of a loaded template, and the texts its close patterns end with."""
    texts = set()
    for spec in template.fields.values():
        for delimiter in (spec.open, spec.close):
            if delimiter is None:
                continue
            if delimiter.literals:
                texts.update(delimiter.literals)
            else:
                texts.update(alternative_endings(delimiter.pattern.pattern))
    return {text for text in texts if text.strip()}


def test_every_class_has_a_case():
    assert sorted({case["class"] for case in CASES}) == list(range(1, 9))
    assert len({case["name"] for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_lenient_reads_the_slip_in_every_chunking(case):
    template = case["template"]
    for chunks in chunkings(case["output"]):
        streamed = stream(template, chunks, case["prefix"], on_error="keep", tools=case["tools"])
        assert streamed.message == case["expected"], chunks
        assert [[e.key, e.position] for e in streamed.parser.errors] == case["errors"]
        assert message_from_events(streamed.events, template) == streamed.message


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_strict_parsing_is_unchanged(case):
    strict = case["strict"]
    run = lambda: parse_response(  # noqa: E731
        case["output"], case["template"], prefix=case["prefix"], tools=case["tools"]
    )
    if "error" in strict:
        with pytest.raises(ResponseParseError, match=re.escape(strict["error"])):
            run()
    else:
        assert run() == strict["expected"]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["name"])
def test_no_delimiter_lands_in_content(case):
    content = case["expected"].get("content") or ""
    texts = delimiter_texts(load_template(case["template"]))
    assert [text for text in texts if text in content] == []


def test_a_slip_lenient_reads_differently_is_always_reported():
    for case in CASES:
        if case["part"] == "lenient" and "expected" in case["strict"]:
            assert case["expected"] == case["strict"]["expected"] or case["errors"], case["name"]


def test_what_lenient_reads_is_said_with_offsets():
    case = next(case for case in CASES if case["name"] == "prose-after-the-call")
    streamed = stream(case["template"], [case["output"]], case["prefix"], on_error="keep")
    [error] = streamed.parser.errors
    assert str(error).endswith(
        "(kept leniently: the json value at 24-43 is the region's value; the text after it "
        "(43-68) is read as outside any region)"
    )
    assert case["output"][24:43] == '{"pattern": "TODO"}'
    assert case["output"][43:68] == "\n\nLet me search for that."
    assert (error.start, error.end) == (0, 72)


@pytest.mark.parametrize(
    "case", [case for case in CASES if "warnings" in case], ids=lambda case: case["name"]
)
def test_a_slip_the_template_misreads_is_named_by_a_warning(case):
    for chunks in chunkings(case["output"]):
        streamed = stream(case["template"], chunks, case["prefix"], tools=case["tools"])
        warned = [[w.code, w.start, w.end] for w in streamed.parser.warnings]
        assert warned == case["warnings"], chunks
        assert streamed.message == case["strict"]["expected"], chunks


def test_lenient_reading_reads_every_class_but_the_drafted_call_right():
    """Each class has a case lenient reading gets right; a call drafted in the reasoning is the
    one it cannot: a streamed call is never taken back (the draft stays the call, once)."""
    right = {case["class"] for case in CASES if "correct" not in case}
    assert right == set(range(1, 9)) - {5}
    for case in CASES:
        if case["class"] == 5:
            calls = case["expected"]["tool_calls"]
            assert calls[-1] == case["correct"]["tool_calls"][-1], case["name"]
            assert len(calls) == len({json.dumps(call) for call in calls}), case["name"]
