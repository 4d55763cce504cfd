"""The template's own text out of place (`engine.strays`), as lenient parsing reads it.

* a close with no open and a control token of the tokenizer that is no delimiter never land
  in content: consumed, each with an error; strict parsing keeps them where they stand;
* as a property, for any mix of text, delimiters and control tokens fed as token ids: lenient
  parsing never raises, gives the same message and errors in one shot, one id at a time and
  in random chunks, its events add up to the message, and content holds no close text of the
  template and no control token;
* the pieces lenient reading derives from a template: number variants, an open without its
  leading marker.
"""

from __future__ import annotations

import random

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import ResponseParser, load_template, message_from_events
from engine.pattern_shapes import after_leading_marker
from engine.strays import close_texts, is_markup, lenient_watch, number_variants
from tests.support.tokenizers import DEMO_MODEL

PROMPT = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
# Control tokens of other families' vocabularies, which the demo template closes on nowhere.
FOREIGN_CONTROLS = ["<|eot_id|>", "</s>"]


@pytest.fixture(scope="module")
def tokenizer():
    import transformers

    loaded = transformers.AutoTokenizer.from_pretrained(str(DEMO_MODEL))
    loaded.add_tokens(FOREIGN_CONTROLS, special_tokens=True)
    return loaded


def ids_of(tokenizer, text: str) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False)


def id_chunkings(ids: list[int], seed: int) -> list[list[list[int]]]:
    """One shot, one id at a time, random chunks of 1 to 5 ids."""
    rng, chunks, at = random.Random(seed), [], 0
    while at < len(ids):
        size = rng.randint(1, 5)
        chunks.append(ids[at : at + size])
        at += size
    return [[ids], [[token_id] for token_id in ids], chunks]


def parsed(tokenizer, ids_chunks, on_error="keep"):
    parser = ResponseParser(
        tokenizer.response_template, prefix=PROMPT, tokenizer=tokenizer, on_error=on_error
    )
    events = list(parser.initial_events)
    for chunk in ids_chunks:
        events += parser.feed(chunk)
    message, final = parser.finalize()
    return message, events + final, parser


def test_a_foreign_control_token_is_consumed_leniently_and_kept_strictly(tokenizer):
    ids = ids_of(tokenizer, "Sunny.<|eot_id|><|im_end|>")
    for chunks in id_chunkings(ids, 1):
        message, events, parser = parsed(tokenizer, chunks)
        assert message == {"role": "assistant", "content": "Sunny."}
        assert [(e.key, e.start, e.end, e.text) for e in parser.errors] == [
            ("tokenizer.control_tokens", 6, 16, "<|eot_id|>")
        ]
        assert message_from_events(events, tokenizer.response_template) == message
        strict, _, _ = parsed(tokenizer, chunks, on_error="raise")
        assert strict == {"role": "assistant", "content": "Sunny.<|eot_id|>"}


def test_a_spelled_out_control_token_stays_text(tokenizer):
    ids = tokenizer.encode("Type </s> to end.", add_special_tokens=False, split_special_tokens=True)
    message, _, parser = parsed(tokenizer, [ids])
    assert message == {"role": "assistant", "content": "Type </s> to end."}
    assert parser.errors == []


def test_a_control_token_after_a_call_is_consumed_with_the_call_read(tokenizer):
    text = '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</s></tool_call><|im_end|>'
    for chunks in id_chunkings(ids_of(tokenizer, text), 2):
        message, _, parser = parsed(tokenizer, chunks)
        assert message == {
            "role": "assistant",
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}],
        }
        assert [e.key for e in parser.errors] == ["fields.tool_calls.content"]


def test_a_close_with_no_open_is_consumed_leniently_and_kept_strictly(tokenizer):
    ids = ids_of(tokenizer, "Done.</tool_call>\n</think><|im_end|>")
    for chunks in id_chunkings(ids, 3):
        message, _, parser = parsed(tokenizer, chunks)
        assert message == {"role": "assistant", "content": "Done."}
        assert [(e.key, e.start) for e in parser.errors] == [
            ("fields.tool_calls.close_pattern", 5),
            ("fields.reasoning_content.close_pattern", 18),
        ]
        assert [e.lenient for e in parser.errors] == [True, True]  # no region was kept as text
        strict, _, _ = parsed(tokenizer, chunks, on_error="raise")
        assert strict == {"role": "assistant", "content": "Done.</tool_call>\n</think>"}


PIECES = [
    "Hello ",
    "<|eot_id|>",
    "</s>",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    '{"name": "f", "arguments": {"a": 1}}',
    '{"a": 1}',
    "}",
    "\n",
    "<|im_end|>",
    "é🚀",
]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=10), seed=st.integers(0, 10**6))
def test_no_close_and_no_control_token_lands_in_content_in_any_chunking(tokenizer, pieces, seed):
    template = load_template(tokenizer.response_template)
    forbidden = {text for spec in template.fields.values() for text in close_texts(spec.close)}
    forbidden = {text for text in forbidden if is_markup(text)} | set(FOREIGN_CONTROLS)
    ids = ids_of(tokenizer, "".join(pieces))
    results = []
    for chunks in id_chunkings(ids, seed):
        message, events, parser = parsed(tokenizer, chunks)
        assert message_from_events(events, tokenizer.response_template) == message
        content = message.get("content") or ""
        assert [text for text in forbidden if text in content] == [], (pieces, message)
        results.append((message, [(str(e), e.start, e.end) for e in parser.errors]))
    assert results[1] == results[0] and results[2] == results[0], pieces


def test_number_variants_change_one_word_of_four_letters_or_more():
    assert number_variants("<|tool_calls_section_begin|>") == [
        "<|tools_calls_section_begin|>",
        "<|tool_call_section_begin|>",
        "<|tool_calls_sections_begin|>",
        "<|tool_calls_section_begins|>",
    ]
    assert number_variants("[TOOL_CALLS]") == ["[TOOLS_CALLS]", "[TOOL_CALL]"]
    assert number_variants("<|im_end|>") == []
    assert number_variants("calls") == []


def test_an_open_without_its_leading_marker_keeps_its_named_groups():
    inner = after_leading_marker(regex.compile(r"<tool_call>\s*<function=(?P<name>\w+)>"))
    assert inner.pattern == "<function=(?P<name>\\w+)>"
    assert after_leading_marker(regex.compile(r"<tool_call>(?=\s*\{)")) is None
    assert after_leading_marker(regex.compile(r"<tool_call>\s*(?P<name>[^\s<]+)")) is None
    assert after_leading_marker(regex.compile(r"ab\s*<x>")) is None


def test_what_lenient_parsing_watches_is_derived_from_the_template():
    watch = lenient_watch(load_template("qwen3-coder"))
    added = sorted(
        (d.side, d.field, d.source) for d in watch.outside.delimiters if d in watch.notes
    )
    assert added == [
        ("open", "tool_calls", "<function=(?P<name>[^>\\s]+)>"),
        ("stray", "tool_calls", "</tool_call>"),
        ("stray", "tool_calls", "</tools_call> | </tool_calls>"),
    ]
