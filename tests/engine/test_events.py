"""Streaming: exact event sequences, dirty flags, positions, tool typing, batches, and the
deliberate differences from transformers (docs/template-language.md): every stretch
of unclaimed text is kept ("D1" below), and streaming equals one-shot ("D2" below).
"""

import numpy as np
import pytest
import torch
from transformers.utils.chat_parsing import ResponseParser as ReferenceParser
from transformers.utils.chat_parsing import parse_response as reference_parse_response

from engine import ResponseParser, parse_response
from tests.support.stream_helpers import stream_events as run
from tests.support.templates_for_tests import SMOLLM3


def run_reference(template, chunks, prefix=""):
    return run(template, chunks, prefix, parser_class=ReferenceParser)


def open_(field):
    return {"type": "region_open", "field": field}


def chunk(field, text, dirty=False):
    return {"type": "region_chunk", "field": field, "text": text, "dirty": dirty}


def close(field, value):
    return {"type": "region_close", "field": field, "value": value}


# -- exact event sequences ------------------------------------------------------------------


def test_smollm3_stream_exact_events():
    chunks = [
        "<think>\nI should",
        " greet the user\n</th",
        "ink>\n\n<tool_",
        'call>{"name": "greet_user", ',
        '"arguments": {}}</tool_call>',
    ]
    message, events = run(SMOLLM3, chunks)
    call = {"type": "function", "function": {"name": "greet_user", "arguments": {}}}
    assert events == [
        open_("reasoning_content"),
        chunk("reasoning_content", "\nI should"),
        chunk("reasoning_content", " greet the user\n"),
        close("reasoning_content", "I should greet the user"),
        open_("content"),
        chunk("content", "\n\n"),
        close("content", ""),
        open_("tool_calls"),
        chunk("tool_calls", '{"name": "greet_user", ', True),
        chunk("tool_calls", '"arguments": {}}', True),
        close("tool_calls", call),
    ]
    assert message == {
        "role": "assistant",
        "reasoning_content": "I should greet the user",
        "tool_calls": [call],
    }
    assert run_reference(SMOLLM3, chunks) == (message, events)


def test_feed_returns_events_per_chunk():
    parser = ResponseParser(SMOLLM3, prefix="<|im_start|>assistant\n")
    assert parser.initial_events == []
    assert parser.feed("Hel") == [open_("content"), chunk("content", "Hel")]
    assert parser.feed("lo<|im_") == [chunk("content", "lo")]
    assert parser.feed("end|>") == [close("content", "Hello")]
    assert parser.feed("") == []
    assert parser.finalize() == ({"role": "assistant", "content": "Hello"}, [])


def test_region_open_in_the_prefix_stays_open_for_the_generation():
    parser = ResponseParser(
        SMOLLM3, prefix="<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    )
    assert parser.initial_events == [open_("reasoning_content"), chunk("reasoning_content", "\n")]
    assert parser.feed("ok</think>Hi<|im_end|>") == [
        chunk("reasoning_content", "ok"),
        close("reasoning_content", "ok"),
        open_("content"),
        chunk("content", "Hi"),
        close("content", "Hi"),
    ]
    assert parser.finalize() == (
        {"role": "assistant", "reasoning_content": "ok", "content": "Hi"},
        [],
    )


def test_finalize_closes_the_open_region():
    message, events = run(SMOLLM3, ["<think>unfinished"])
    assert events == [
        open_("reasoning_content"),
        chunk("reasoning_content", "unfinished"),
        close("reasoning_content", "unfinished"),
    ]
    assert message == {"role": "assistant", "reasoning_content": "unfinished"}


def test_delimiter_never_emitted_as_chunk_text():
    message, events = run(SMOLLM3, list("a<think>b</think>c<|im_end|>"))
    texts = "".join(e["text"] for e in events if e["type"] == "region_chunk")
    assert texts == "abc"
    assert message == {"role": "assistant", "reasoning_content": "b", "content": "ac"}


# -- dirty flags -----------------------------------------------------------------------------

DIRTY_CASES = [
    ("text", None, "a b", "a b", False),
    ("int", None, " 42 ", 42, False),
    ("float", None, "2.5", 2.5, False),
    ("bool", None, "true", True, False),
    ("json", None, '{"a": 1}', {"a": 1}, True),
    (
        "xml-inline",
        {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>"},
        "<k>v</k>",
        {"k": "v"},
        True,
    ),
    ("kv-lines", None, "k: v", {"k": "v"}, True),
    ("python-call-list", None, "[f(a=1)]", [{"name": "f", "arguments": {"a": 1}}], True),
]


@pytest.mark.parametrize(
    "content, args, body, expected, dirty", DIRTY_CASES, ids=[c[0] for c in DIRTY_CASES]
)
def test_dirty_flags(content, args, body, expected, dirty):
    spec = {"open": "<v>", "close": "</v>", "content": content}
    if args:
        spec["content_args"] = args
    template = {"start_anchor": "A", "fields": {"v": spec}}
    half = len(body) // 2
    message, events = run(template, ["<v>" + body[:half], body[half:] + "</v>"])
    assert events == [
        open_("v"),
        chunk("v", body[:half], dirty),
        chunk("v", body[half:], dirty),
        close("v", expected),
    ]
    assert message == {"v": expected}


# -- join -------------------------------------------------------------------------------------


def test_join_region_close_carries_each_block_message_has_joined_string():
    template = {
        "start_anchor": "A",
        "fields": {
            "r": {"open": "<t>", "close": "</t>", "repeats": True, "join": "\n"},
            "content": {},
        },
    }
    message, events = run(template, ["<t> a </t>x<t>b</t>"])
    assert events == [
        open_("r"),
        chunk("r", " a "),
        close("r", "a"),
        open_("content"),
        chunk("content", "x"),
        close("content", "x"),
        open_("r"),
        chunk("r", "b"),
        close("r", "b"),
    ]
    assert message == {"r": "a\nb", "content": "x"}


def test_repeats_region_close_values():
    template = {
        "start_anchor": "A",
        "fields": {"n": {"open": "<n>", "close": "</n>", "repeats": True, "content": "int"}},
    }
    message, events = run(template, ["<n>1</n><n>", "2</n>"])
    assert events == [
        open_("n"),
        chunk("n", "1"),
        close("n", 1),
        open_("n"),
        chunk("n", "2"),
        close("n", 2),
    ]
    assert message == {"n": [1, 2]}


# -- positions --------------------------------------------------------------------------------


def test_positions_opt_in():
    template = {
        "start_anchor": "A",
        "fields": {"reasoning_content": {"open": "<think>", "close": "</think>"}, "content": {}},
    }
    message, events = run(template, ["<think>ab", "c</think>", "hi"], positions=True)
    assert events == [
        {"type": "region_open", "field": "reasoning_content", "start": 0, "end": 7},
        {
            "type": "region_chunk",
            "field": "reasoning_content",
            "text": "ab",
            "dirty": False,
            "start": 7,
            "end": 9,
        },
        {
            "type": "region_chunk",
            "field": "reasoning_content",
            "text": "c",
            "dirty": False,
            "start": 9,
            "end": 10,
        },
        {
            "type": "region_close",
            "field": "reasoning_content",
            "value": "abc",
            "start": 10,
            "end": 18,
        },
        {"type": "region_open", "field": "content", "start": 18, "end": 18},
        {
            "type": "region_chunk",
            "field": "content",
            "text": "hi",
            "dirty": False,
            "start": 18,
            "end": 20,
        },
        {"type": "region_close", "field": "content", "value": "hi", "start": 20, "end": 20},
    ]
    assert message == {"reasoning_content": "abc", "content": "hi"}
    # off by default: exactly the reference's dicts
    assert all("start" not in e for e in run(template, ["<think>ab", "c</think>", "hi"])[1])


def test_positions_count_from_the_prefix_cut():
    template = {
        "start_anchor": "<|a|>",
        "fields": {"reasoning_content": {"open": "<think>", "close": "</think>"}},
    }
    parser = ResponseParser(template, prefix="<|u|>q<|a|><think>x", positions=True)
    assert parser.initial_events == [
        {"type": "region_open", "field": "reasoning_content", "start": 0, "end": 7},
        {
            "type": "region_chunk",
            "field": "reasoning_content",
            "text": "x",
            "dirty": False,
            "start": 7,
            "end": 8,
        },
    ]
    assert parser.feed("y</think>") == [
        {
            "type": "region_chunk",
            "field": "reasoning_content",
            "text": "y",
            "dirty": False,
            "start": 8,
            "end": 9,
        },
        {
            "type": "region_close",
            "field": "reasoning_content",
            "value": "xy",
            "start": 9,
            "end": 17,
        },
    ]


# -- tool typing -------------------------------------------------------------------------------

QWEN = {
    "defaults": {"role": "assistant"},
    "start_anchor": "A",
    "fields": {
        "tool_calls": {
            "open_pattern": "<tool_call>\\s*<function=(?P<name>\\w+)>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": "<parameter=(?P<key>\\w+)>\\s*(?P<value>.*?)\\s*</parameter>"
            },
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
        "content": {},
    },
}

SCHEMA = {
    "type": "function",
    "function": {
        "name": "f",
        "description": "d",
        "parameters": {
            "type": "object",
            "properties": {
                "i": {"type": "integer"},
                "n": {"type": "number"},
                "n2": {"type": "number"},
                "b": {"type": "boolean"},
                "b0": {"type": "boolean"},
                "z": {"type": "null"},
                "o": {"type": "object"},
                "a": {"type": "array"},
                "u": {"type": ["integer", "string"]},
                "u2": {"type": ["integer", "string"]},
                "ao": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                "on": {"oneOf": [{"type": "null"}, {"type": "integer"}]},
                "nl": {"type": "integer", "nullable": True},
                "nl2": {"type": "integer", "nullable": True},
                "bad": {"type": "integer"},
                "bado": {"type": "object"},
                "s": {"type": "string"},
            },
        },
    },
}

RAW_ARGUMENTS = [
    ("i", "7"),
    ("n", "2.5"),
    ("n2", "3"),
    ("b", "true"),
    ("b0", "0"),
    ("z", "null"),
    ("o", '{"a": 1}'),
    ("a", "[1, 2]"),
    ("u", "5"),
    ("u2", "abc"),
    ("ao", "7"),
    ("on", "null"),
    ("nl", "8"),
    ("nl2", "null"),
    ("bad", "x7"),
    ("bado", "[1]"),
    ("s", "42"),
    ("extra", "9"),
]
TYPED_ARGUMENTS = {
    "i": 7,
    "n": 2.5,
    "n2": 3,
    "b": True,
    "b0": False,
    "z": None,
    "o": {"a": 1},
    "a": [1, 2],
    "u": 5,
    "u2": "abc",
    "ao": 7,
    "on": None,
    "nl": 8,
    "nl2": None,
    "bad": "x7",
    "bado": "[1]",
    "s": "42",
    "extra": "9",
}


def qwen_call(name, arguments):
    return (
        f"<tool_call><function={name}>"
        + "".join(f"<parameter={k}>{v}</parameter>" for k, v in arguments)
        + "</function></tool_call>"
    )


def test_tool_typing_json_schema():
    text = qwen_call("f", RAW_ARGUMENTS)
    expected = {
        "role": "assistant",
        "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": TYPED_ARGUMENTS}}
        ],
    }
    assert parse_response(text, QWEN, prefix="", tools=[SCHEMA]) == expected
    assert (
        parse_response(text, QWEN, prefix="", tools=[SCHEMA["function"]]) == expected
    )  # bare function dict
    assert reference_parse_response(text, QWEN, prefix="", tools=[SCHEMA]) == expected


def test_tool_typing_only_for_the_named_tool_and_only_with_tools():
    text = qwen_call("other", [("i", "7")])
    assert parse_response(text, QWEN, prefix="", tools=[SCHEMA])["tool_calls"][0]["function"][
        "arguments"
    ] == {"i": "7"}
    text = qwen_call("f", [("i", "7")])
    assert parse_response(text, QWEN, prefix="")["tool_calls"][0]["function"]["arguments"] == {
        "i": "7"
    }


def set_alarm(hour: int, enabled: bool, label: str | None = None, ratio: float = 1.0) -> dict:
    """Set an alarm.

    Args:
        hour: The hour of the day.
        enabled: Whether the alarm rings.
        label: A label to show.
        ratio: Volume ratio.
    """
    return {}


def test_tool_typing_python_function():
    text = qwen_call(
        "set_alarm", [("hour", "7"), ("enabled", "true"), ("label", "9"), ("ratio", "0.5")]
    )
    expected = {
        "role": "assistant",
        "tool_calls": [
            {
                "type": "function",
                "function": {
                    "name": "set_alarm",
                    "arguments": {"hour": 7, "enabled": True, "label": "9", "ratio": 0.5},
                },
            }
        ],
    }
    assert parse_response(text, QWEN, prefix="", tools=[set_alarm]) == expected
    assert reference_parse_response(text, QWEN, prefix="", tools=[set_alarm]) == expected


def test_tool_typing_failed_cast_keeps_the_string():
    text = qwen_call("set_alarm", [("hour", "seven"), ("enabled", "maybe")])
    message = parse_response(text, QWEN, prefix="", tools=[set_alarm])
    assert message["tool_calls"][0]["function"]["arguments"] == {
        "hour": "seven",
        "enabled": "maybe",
    }


def test_tool_typing_visible_in_region_close():
    text = qwen_call("set_alarm", [("hour", "7"), ("enabled", "true")])
    cut = text.index("<parameter=") + 5
    message, events = run(QWEN, [text[:cut], text[cut:]], tools=[set_alarm])
    typed = {
        "type": "function",
        "function": {"name": "set_alarm", "arguments": {"hour": 7, "enabled": True}},
    }
    assert events[-1] == close("tool_calls", typed)
    assert [e["type"] for e in events] == [
        "region_open",
        "region_chunk",
        "region_chunk",
        "region_close",
    ]
    assert message == {"role": "assistant", "tool_calls": [typed]}


def test_tool_typing_with_json_tool_calls():
    text = '<tool_call>{"name": "set_alarm", "arguments": {"hour": "7", "enabled": "true"}}</tool_call>'
    message = parse_response(text, SMOLLM3, prefix="", tools=[set_alarm])
    assert message["tool_calls"] == [
        {
            "type": "function",
            "function": {"name": "set_alarm", "arguments": {"hour": 7, "enabled": True}},
        }
    ]


# -- batches ----------------------------------------------------------------------------------

SIMPLE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "content": {"close": "<|im_end|>"},
    },
}


def test_batch_of_strings():
    assert parse_response(["<think>a</think>b", "c"], SIMPLE, prefix="") == [
        {"role": "assistant", "reasoning_content": "a", "content": "b"},
        {"role": "assistant", "content": "c"},
    ]


def test_batch_of_one_returns_a_list_of_one():
    assert parse_response(["c"], SIMPLE, prefix="") == [{"role": "assistant", "content": "c"}]


def test_batch_with_one_prefix_per_item():
    assert parse_response(["a</think>b", "c"], SIMPLE, prefix=["<think>", ""]) == [
        {"role": "assistant", "reasoning_content": "a", "content": "b"},
        {"role": "assistant", "content": "c"},
    ]


def _ids(tokenizer, texts):
    rows = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]
    assert len({len(row) for row in rows}) == 1, rows  # rectangular, for the 2-D array cases
    return rows


BATCH_TEXTS = ["<think>a</think>b<|im_end|>", "<think>c</think>d<|im_end|>"]
BATCH_MESSAGES = [
    {"role": "assistant", "reasoning_content": "a", "content": "b"},
    {"role": "assistant", "reasoning_content": "c", "content": "d"},
]


def test_batch_numpy_ids_with_tokenizer(small_tokenizer):
    ids = np.array(_ids(small_tokenizer, BATCH_TEXTS))
    assert ids.ndim == 2
    assert parse_response(ids, SIMPLE, prefix="", tokenizer=small_tokenizer) == BATCH_MESSAGES


def test_batch_torch_ids_with_tokenizer(small_tokenizer):
    ids = torch.tensor(_ids(small_tokenizer, BATCH_TEXTS))
    assert parse_response(ids, SIMPLE, prefix="", tokenizer=small_tokenizer) == BATCH_MESSAGES
    assert (
        parse_response(ids[:1], SIMPLE, prefix="", tokenizer=small_tokenizer) == BATCH_MESSAGES[:1]
    )


def test_batch_list_of_id_lists_with_tokenizer(small_tokenizer):
    ids = _ids(small_tokenizer, BATCH_TEXTS)
    assert parse_response(ids, SIMPLE, prefix="", tokenizer=small_tokenizer) == BATCH_MESSAGES
    assert (
        parse_response([ids[1]], SIMPLE, prefix="", tokenizer=small_tokenizer) == BATCH_MESSAGES[1:]
    )


def test_single_sequence_of_ids_returns_a_dict(small_tokenizer):
    ids = _ids(small_tokenizer, BATCH_TEXTS[:1])[0]
    assert parse_response(ids, SIMPLE, prefix="", tokenizer=small_tokenizer) == BATCH_MESSAGES[0]
    assert (
        parse_response(torch.tensor(ids), SIMPLE, prefix="", tokenizer=small_tokenizer)
        == BATCH_MESSAGES[0]
    )
    assert (
        parse_response(np.array(ids), SIMPLE, prefix="", tokenizer=small_tokenizer)
        == BATCH_MESSAGES[0]
    )


def test_prefix_as_ids_keeps_special_tokens(small_tokenizer):
    prefix = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>"
    prefix_ids = small_tokenizer(prefix, add_special_tokens=False)["input_ids"]
    ids = small_tokenizer("a</think>b<|im_end|>", add_special_tokens=False)["input_ids"]
    assert (
        parse_response(ids, SIMPLE, prefix=prefix_ids, tokenizer=small_tokenizer)
        == BATCH_MESSAGES[0]
    )


def test_ids_without_tokenizer_is_an_error(small_tokenizer):
    ids = np.array(_ids(small_tokenizer, BATCH_TEXTS))
    with pytest.raises(
        ValueError, match="^text: got token ids but no tokenizer; pass tokenizer= to decode them$"
    ):
        parse_response(ids, SIMPLE, prefix="")


def test_batch_size_mismatch_is_an_error():
    with pytest.raises(ValueError, match=r"^got 2 generation\(s\) but 3 prefixes"):
        parse_response(["a", "b"], SIMPLE, prefix=["", "", ""])


# -- D1: the implicit field never loses text and never gains noise ---------------------------------

TOOLS_AND_CONTENT = {
    "defaults": {"role": "assistant"},
    "start_anchor": "A",
    "fields": {
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
        },
        "content": {},
    },
}


def test_d1_text_before_and_after_a_tool_call_both_kept():
    text = 'Let me check.\n<tool_call>{"a": 1}</tool_call>\nDone.'
    expected = {"role": "assistant", "content": "Let me check.\n\nDone.", "tool_calls": [{"a": 1}]}
    assert parse_response(text, TOOLS_AND_CONTENT, prefix="") == expected
    assert run(TOOLS_AND_CONTENT, list(text))[0] == expected
    # the reference keeps only the last stretch
    assert reference_parse_response(text, TOOLS_AND_CONTENT, prefix="")["content"] == "Done."


def test_d1_text_before_a_tool_call_kept():
    text = 'Let me check.\n<tool_call>{"a": 1}</tool_call>\n'
    assert parse_response(text, TOOLS_AND_CONTENT, prefix="") == {
        "role": "assistant",
        "content": "Let me check.",
        "tool_calls": [{"a": 1}],
    }


def test_d1_whitespace_stretch_does_not_overwrite_and_its_close_adds_nothing():
    message, events = run(TOOLS_AND_CONTENT, ['Hi\n<tool_call>{"a": 1}</tool_call>', "\n  "])
    assert message == {"role": "assistant", "content": "Hi", "tool_calls": [{"a": 1}]}
    assert events == [
        open_("content"),
        chunk("content", "Hi\n"),
        close("content", "Hi"),
        open_("tool_calls"),
        chunk("tool_calls", '{"a": 1}', True),
        close("tool_calls", {"a": 1}),
        open_("content"),
        chunk("content", "\n  "),
        close("content", ""),  # adds nothing to the concatenated closes, as in the reference
    ]


def _implicit(**content):
    return {
        "start_anchor": "A",
        "fields": {"x": {"open": "<x>", "close": "</x>"}, "content": content},
    }


@pytest.mark.parametrize(
    "content, text, expected",
    [
        ({}, "a<x>1</x> \n <x>2</x>b  ", {"content": "a \n b", "x": "2"}),
        ({}, " <x>1</x> ", {"x": "1"}),
        ({"repeats": True}, "a<x>1</x> \n <x>2</x>b  ", {"content": ["a", "b"], "x": "2"}),
        ({"repeats": True}, " <x>1</x> ", {"x": "1"}),
        ({"repeats": True, "join": "|"}, "a<x>1</x> \n <x>2</x>b  ", {"content": "a|b", "x": "2"}),
        ({"repeats": True, "join": "|"}, " <x>1</x> ", {"x": "1"}),
    ],
)
def test_d1_whitespace_only_stretch_does_not_append_or_join(content, text, expected):
    template = _implicit(**content)
    assert parse_response(text, template, prefix="") == expected
    assert run(template, list(text))[0] == expected


# -- D2: streaming equals one-shot, for every chunking ---------------------------------------------


def _regions(events):
    """[(field, concatenated chunk text)] per region, in order."""
    regions = []
    for event in events:
        if event["type"] == "region_open":
            regions.append([event["field"], ""])
        elif event["type"] == "region_chunk":
            assert regions and regions[-1][0] == event["field"]
            regions[-1][1] += event["text"]
    return [tuple(region) for region in regions]


def _chunkings(text):
    n = len(text)
    yield [text]
    yield list(text)
    for i in range(n + 1):
        yield [text[:i], text[i:]]
    for i in range(1, n):
        for j in range(i + 1, n):
            yield [text[:i], text[i:j], text[j:]]


def check_every_chunking(template, text, expected_message, expected_regions, reference=True):
    assert parse_response(text, template, prefix="") == expected_message
    for chunks in _chunkings(text):
        message, events = run(template, chunks)
        assert (message, _regions(events)) == (expected_message, expected_regions), chunks
    if reference:
        assert reference_parse_response(text, template, prefix="") == expected_message


def test_d2_optional_trailing_group_inside_delimiter():
    template = {
        "start_anchor": "A",
        "fields": {
            "b": {
                "open_pattern": r"<b(?P<n>\d+)?>",
                "close": "</b>",
                "repeats": True,
                "transform": {"n": "{n}", "body": "{content}"},
            },
            "content": {},
        },
    }
    check_every_chunking(
        template,
        "x<b1>hi</b>y<b12>yo</b>",
        {"content": "xy", "b": [{"n": "1", "body": "hi"}, {"n": "12", "body": "yo"}]},
        [("content", "x"), ("b", "hi"), ("content", "y"), ("b", "yo")],
        reference=False,  # D1: the reference keeps only "y"
    )


def test_d2_optional_trailing_group_at_the_end_of_delimiter():
    template = {
        "start_anchor": "A",
        "fields": {
            "b": {
                "open_pattern": r"<b>(?P<n>\d+)?",
                "close": "</b>",
                "repeats": True,
                "transform": {"n": "{n}", "body": "{content}"},
            }
        },
    }
    check_every_chunking(
        template,
        "<b>12hi</b><b>7 x</b>",
        {"b": [{"n": "12", "body": "hi"}, {"n": "7", "body": "x"}]},
        [("b", "hi"), ("b", " x")],
    )


def test_d2_alternatives_of_different_lengths():
    template = {
        "start_anchor": "A",
        "fields": {"x": {"open_pattern": "abcd|ab", "close": "</x>", "repeats": True}},
    }
    check_every_chunking(
        template, "zabcdQ</x>zabcQ</x>", {"x": ["Q", "cQ"]}, [("x", "Q"), ("x", "cQ")]
    )
    check_every_chunking(
        template, "zabcd", {"x": [""]}, [("x", "")]
    )  # an empty region still counts, as in the reference


def test_d2_alternatives_at_end_of_stream():
    template = {
        "start_anchor": "A",
        "fields": {"x": {"open_pattern": "abcd|ab", "close": "</x>"}, "content": {}},
    }
    check_every_chunking(
        template, "qabc", {"content": "q", "x": "c"}, [("content", "q"), ("x", "c")]
    )


def test_d2_positive_lookahead():
    template = {
        "defaults": {"role": "assistant"},
        "start_anchor": "A",
        "fields": {
            "reasoning_content": {
                "open": "<think>",
                "close_pattern": r"</think>(?=\s*<tool_call>)",
            },
            "tool_calls": {
                "open": "<tool_call>",
                "close": "</tool_call>",
                "repeats": True,
                "content": "json",
            },
        },
    }
    text = '<think>a</think> b</think>\n<tool_call>{"k": 1}</tool_call>'
    check_every_chunking(
        template,
        text,
        {"role": "assistant", "reasoning_content": "a</think> b", "tool_calls": [{"k": 1}]},
        [("reasoning_content", "a</think> b"), ("tool_calls", '{"k": 1}')],
    )


def test_d2_negative_lookahead():
    template = {
        "start_anchor": "A",
        "fields": {
            "reasoning_content": {"open": "<think>", "close_pattern": "</think>(?!!)"},
            "content": {},
        },
    }
    check_every_chunking(
        template,
        "<think>a</think>!b</think>c",
        {"reasoning_content": "a</think>!b", "content": "c"},
        [("reasoning_content", "a</think>!b"), ("content", "c")],
    )
    check_every_chunking(
        template,
        "<think>a</think>",
        {"reasoning_content": "a"},
        [("reasoning_content", "a")],
    )


def test_d2_literal_list_one_a_prefix_of_another():
    template = {
        "start_anchor": "A",
        "fields": {"x": {"open": ["<t", "<tool>"], "close": ["</t>", "</tool>"], "repeats": True}},
    }
    check_every_chunking(
        template,
        "<tool>A</tool><tB</t><t",
        {"x": ["A", "B", ""]},
        [("x", "A"), ("x", "B"), ("x", "")],
    )


def test_d2_delimiters_sharing_prefixes_across_fields():
    template = {
        "start_anchor": "A",
        "fields": {
            "a": {"open": "<a>", "close": "</a>"},
            "ab": {"open": "<ab>", "close": "</ab>"},
            "content": {},
        },
    }
    check_every_chunking(
        template,
        "<ab>1</ab><a>2</a><a",
        {"ab": "1", "a": "2", "content": "<a"},
        [("ab", "1"), ("a", "2"), ("content", "<a")],
    )


def test_d2_lazy_open_pattern_with_named_capture():
    template = {
        "start_anchor": "A",
        "fields": {
            "tool_calls": {
                "open_pattern": r"<\|channel\|>commentary to=functions\.(?P<name>\w+).*?<\|message\|>",
                "close": "<|call|>",
                "repeats": True,
                "content": "json",
                "transform": {"name": "{name}", "arguments": "{content}"},
            }
        },
    }
    text = '<|channel|>commentary to=functions.get_x json<|message|>{"a": 1}<|call|>'
    check_every_chunking(
        template,
        text,
        {"tool_calls": [{"name": "get_x", "arguments": {"a": 1}}]},
        [("tool_calls", '{"a": 1}')],
    )


def test_d2_end_of_text_assertions():
    template = {
        "start_anchor": "A",
        "fields": {"w": {"open_pattern": r"\bgo\b", "close_pattern": r"\.$"}, "content": {}},
    }
    check_every_chunking(
        template,
        "ago go x. y.",
        {"content": "ago", "w": "x. y"},
        [("content", "ago "), ("w", " x. y")],
        reference=False,
    )


def test_joined_implicit_stretches_keep_the_last_close_captures():
    template = {
        "start_anchor": "<S>",
        "fields": {
            "content": {
                "close_pattern": r"<b(?P<n>\d+)?>",
                "transform": {"value": "{content}", "n": "{n}"},
                "content_args": {"strip": False},
            }
        },
    }
    expected = {"content": {"value": "xy", "n": "8"}}
    assert parse_response("x<b7>y<b8>", template, prefix="") == expected
    parser = ResponseParser(template, prefix="x<b7>")
    parser.feed("y<b8>")
    assert parser.finalize()[0] == expected


def test_a_run_cut_by_a_zero_width_match_does_not_hold_the_stream():
    # `\s*</think>` cannot match "\n<tool_call>", so the lookahead alternative closes the
    # reasoning as soon as the tag is complete (it once held everything until finalize).
    template = {
        "start_anchor": "<S>",
        "fields": {
            "reasoning_content": {
                "open": "<think>",
                "close_pattern": r"\s*</think>|(?=<tool_call>)",
            },
            "tool_calls": {
                "open": "<tool_call>",
                "close": "</tool_call>",
                "content": "json",
                "repeats": True,
            },
            "content": {},
        },
    }
    parser = ResponseParser(template, prefix="")
    fed = [
        parser.feed(chunk)
        for chunk in ["<think>I will call it.", "\n<tool_call>", '{"name": "f"}', "</tool_call>"]
    ]
    assert fed[1] == [
        {"type": "region_chunk", "field": "reasoning_content", "text": "\n", "dirty": False},
        {"type": "region_close", "field": "reasoning_content", "value": "I will call it."},
        {"type": "region_open", "field": "tool_calls"},
    ]
    assert fed[2] == [
        {"type": "region_chunk", "field": "tool_calls", "text": '{"name": "f"}', "dirty": True}
    ]
    assert fed[3] == [{"type": "region_close", "field": "tool_calls", "value": {"name": "f"}}]
