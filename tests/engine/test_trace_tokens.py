"""The tracer reading token ids: spans, events and failures in characters of the decoded text,
a control token spelled out with ordinary tokens left as text, the same message as the parser's."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import ResponseParser
from engine.authoring.trace import Tracer
from tests.support.token_parity import demo_tokenizer

PROMPT = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
QUOTED = "Use the <tool_call> tag."
CALL = '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call><|im_end|>'


@pytest.fixture(scope="module")
def tokenizer():
    return demo_tokenizer()


def generated(tokenizer) -> list[int]:
    """The quoted tag with ordinary tokens, then a real call with its control tokens."""
    plain = tokenizer.encode(QUOTED, add_special_tokens=False, split_special_tokens=True)
    return plain + tokenizer.encode(CALL, add_special_tokens=False)


@pytest.mark.parametrize("chunk", [1, 3, 1000])
def test_spans_tile_the_decoded_text_and_the_quoted_tag_stays_content(tokenizer, chunk):
    ids = generated(tokenizer)
    tracer = Tracer(tokenizer.response_template, PROMPT, tokenizer=tokenizer, on_error="keep")
    for at in range(0, len(ids), chunk):
        tracer.feed(ids[at : at + chunk])
    tracer.finalize()
    assert tracer.stream == QUOTED + CALL
    assert [(s.kind, s.field, s.stream_start, s.stream_end) for s in tracer.spans()] == [
        ("body", "content", 0, 24),
        ("open", "tool_calls", 24, 35),
        ("body", "tool_calls", 35, 71),
        ("close", "tool_calls", 71, 83),
        ("close", "content", 83, 93),
    ]
    assert tracer.tokens.spelled_out() == [(8, 19)]
    assert tracer.tokens.matched_by(24, 35) == "control token"
    assert tracer.message == {
        "role": "assistant",
        "content": QUOTED,
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}],
    }
    parser = ResponseParser(tokenizer.response_template, PROMPT, tokenizer=tokenizer)
    parser.feed(ids)
    assert tracer.message == parser.finalize()[0]


def test_events_carry_character_and_token_positions(tokenizer):
    ids = generated(tokenizer)
    tracer = Tracer(tokenizer.response_template, PROMPT, tokenizer=tokenizer)
    events = tracer.feed(ids) + tracer.finalize()
    opens = [e for e in events if e["type"] == "region_open"]
    assert [(e["field"], e["start"], e["end"], e["tokens"]) for e in opens] == [
        ("content", 0, 0, (10, 10)),  # token indices count the prompt's 10 first
        ("tool_calls", 24, 35, (20, 21)),
    ]
    assert tracer.tokens.prefix_tokens == 10
    assert "\ufdd2" not in "".join(e.get("text", "") for e in events)


def test_text_is_refused_with_a_tokenizer(tokenizer):
    tracer = Tracer(tokenizer.response_template, PROMPT, tokenizer=tokenizer)
    with pytest.raises(TypeError, match="reads token ids, not text"):
        tracer.feed("hello")


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cuts=st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=20))
def test_spans_tile_the_stream_and_the_message_is_the_parsers_in_any_chunking(tokenizer, cuts):
    ids = generated(tokenizer)
    tracer = Tracer(tokenizer.response_template, PROMPT, tokenizer=tokenizer, on_error="keep")
    at = 0
    for size in cuts:
        tracer.feed(ids[at : at + size])
        at += size
    tracer.feed(ids[at:])
    tracer.finalize()
    spans = tracer.spans()
    assert spans[0].stream_start == 0 and spans[-1].stream_end == len(tracer.stream)
    assert all(a.stream_end == b.stream_start for a, b in zip(spans, spans[1:]))
    assert "".join(span.text for span in spans) == QUOTED + CALL
    parser = ResponseParser(tokenizer.response_template, PROMPT, tokenizer=tokenizer)
    parser.feed(ids)
    assert tracer.message == parser.finalize()[0]
