"""Tokenizer integration with a real byte-level BPE tokenizer trained in the test (nothing downloaded)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from engine import (
    IncrementalDecoder,
    ResponseParser,
    TemplateError,
    attach_response_template,
    get_response_parser,
    parse_response,
)
from tests.support.templates_for_tests import SMOLLM3 as TEMPLATE

SPECIAL_TOKENS = [
    "<|im_start|>",
    "<|im_end|>",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
]
PROMPT = "<|im_start|>user\nWeather in São Paulo?<|im_end|>\n<|im_start|>assistant\n<think>\n"
GENERATION = (
    "The user asks about São Paulo, 東京 too? No.\n</think>\nLet me check.\n"
    '<tool_call>{"name": "get_weather", "arguments": {"city": "São Paulo"}}</tool_call><|im_end|>'
)
EXPECTED = {
    "role": "assistant",
    "reasoning_content": "The user asks about São Paulo, 東京 too? No.",
    "content": "Let me check.",
    "tool_calls": [
        {
            "type": "function",
            "function": {"name": "get_weather", "arguments": {"city": "São Paulo"}},
        }
    ],
}


@pytest.fixture(scope="module")
def tokenizer():
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    backend.train_from_iterator(
        ["The user asks about the weather.", "Let me check the weather in Paris."] * 20, trainer
    )
    return PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|im_end|>")


def ids(tokenizer, text):
    return tokenizer.encode(text, add_special_tokens=False)


def test_template_round_trips_through_tokenizer_config(tokenizer, tmp_path):
    attach_response_template(tokenizer, TEMPLATE)
    tokenizer.save_pretrained(tmp_path)
    config = (tmp_path / "tokenizer_config.json").read_text(encoding="utf-8")
    assert '"response_template"' in config
    assert not (tmp_path / "response_template.json").exists()
    reloaded = AutoTokenizer.from_pretrained(tmp_path)
    assert reloaded.response_template == TEMPLATE


def test_attach_rejects_a_broken_template(tokenizer):
    with pytest.raises(TemplateError, match=r"^fields\.content\.clos: unknown key"):
        attach_response_template(
            tokenizer, {"start_anchor": "x", "fields": {"content": {"clos": "y"}}}
        )


def test_parse_token_ids_keeps_special_tokens(tokenizer):
    attach_response_template(tokenizer, TEMPLATE)
    message = parse_response(
        ids(tokenizer, GENERATION), prefix=ids(tokenizer, PROMPT), tokenizer=tokenizer
    )
    assert message == EXPECTED
    assert parse_response(GENERATION, TEMPLATE, prefix=PROMPT) == EXPECTED


def test_batches_of_ids_from_lists_numpy_and_torch(tokenizer):
    attach_response_template(tokenizer, TEMPLATE)
    first = ids(tokenizer, GENERATION)
    second = ids(tokenizer, "Hello!<|im_end|>")
    width = max(len(first), len(second))
    pad = tokenizer.convert_tokens_to_ids("<|im_end|>")
    rows = [first + [pad] * (width - len(first)), second + [pad] * (width - len(second))]
    prompt = ids(tokenizer, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
    expected_second = {"role": "assistant", "content": "Hello!"}
    expected_first = {
        "role": "assistant",
        "content": "The user asks about São Paulo, 東京 too? No.\n</think>\nLet me check.",
        "tool_calls": EXPECTED["tool_calls"],
    }
    for batch in (rows, np.array(rows), torch.tensor(rows)):
        assert parse_response(batch, prefix=prompt, tokenizer=tokenizer) == [
            expected_first,
            expected_second,
        ]
    assert parse_response([second], prefix=prompt, tokenizer=tokenizer) == [expected_second]
    assert (
        parse_response(torch.tensor(second), prefix=prompt, tokenizer=tokenizer) == expected_second
    )


def test_ids_without_tokenizer_is_a_clear_error():
    with pytest.raises(ValueError, match="got token ids but no tokenizer"):
        parse_response([1, 2, 3], TEMPLATE, prefix="")


def test_tokenizer_without_template_is_a_clear_error(tokenizer):
    bare = PreTrainedTokenizerFast(tokenizer_object=tokenizer.backend_tokenizer)
    with pytest.raises(ValueError, match="has no response_template"):
        get_response_parser(bare, prefix="")
    with pytest.raises(ValueError, match="no response template"):
        parse_response("x", prefix="", tokenizer=bare)


def test_streaming_token_by_token_equals_one_shot(tokenizer):
    attach_response_template(tokenizer, TEMPLATE)
    parser = get_response_parser(tokenizer, prefix=ids(tokenizer, PROMPT))
    assert parser.initial_events == [{"type": "region_open", "field": "reasoning_content"}] + [
        {"type": "region_chunk", "field": "reasoning_content", "text": "\n", "dirty": False}
    ]
    events = []
    for token in ids(tokenizer, GENERATION):
        events += parser.feed_ids([token])
    message, final_events = parser.finalize()
    assert message == EXPECTED
    reasoning = "".join(
        e["text"]
        for e in events
        if e["type"] == "region_chunk" and e["field"] == "reasoning_content"
    )
    assert reasoning == "The user asks about São Paulo, 東京 too? No.\n"


def test_incremental_decoder_never_splits_a_character(tokenizer):
    text = "東京 São Paulo 🌧"
    decoder = IncrementalDecoder(tokenizer)
    pieces = [decoder.push([token]) for token in ids(tokenizer, text)] + [decoder.flush()]
    assert "".join(pieces) == text
    assert all("\ufffd" not in piece for piece in pieces)
    assert len([p for p in pieces if p]) > 1


def test_invalid_bytes_come_through_as_replacement_characters(tokenizer):
    broken = ids(tokenizer, "東")[:1]  # first byte(s) of a three-byte character only
    decoder = IncrementalDecoder(tokenizer)
    assert decoder.push(broken) == ""
    assert decoder.flush() == "\ufffd"
    parser = ResponseParser(TEMPLATE, prefix="")
    parser.feed("a\ufffdb")
    assert parser.finalize()[0] == {"role": "assistant", "content": "a\ufffdb"}
