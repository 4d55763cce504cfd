"""The worked examples of the format (docs/template-language.md and the Qwen3-Coder, gpt-oss and Cohere shapes), with exact expected messages.

Each example is parsed one-shot (`parse_response`), streamed one character at a
time (`ResponseParser.feed`), and, where we mean to agree with it, checked
against transformers' reference parser.
"""

from transformers.utils.chat_parsing import parse_response as reference_parse_response

from engine import ResponseParser, parse_response
from tests.support.templates_for_tests import SMOLLM3

QWEN3_CODER = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open_pattern": "<tool_call>\\s*<function=(?P<name>\\w+)>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": "<parameter=(?P<key>\\w+)>\\s*(?P<value>.*?)\\s*</parameter>",
                "value_parser": {"name": "json", "args": {"allow_non_json": True}},
            },
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
        "content": {"close": "<|im_end|>"},
    },
}

GPT_OSS = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|start|>assistant",
    "fields": {
        "reasoning_content": {"open": "<|channel|>analysis<|message|>", "close": "<|end|>"},
        "tool_calls": {
            "open_pattern": "<\\|channel\\|>commentary to=functions\\.(?P<name>\\w+).*?<\\|message\\|>",
            "close": "<|call|>",
            "repeats": True,
            "content": "json",
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
        "content": {"open": "<|channel|>final<|message|>", "close": ["<|return|>", "<|end|>"]},
    },
}

COHERE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
    "fields": {
        "tool_calls": {
            "open": "<|START_ACTION|>",
            "close": "<|END_ACTION|>",
            "content": "json",
            "transform_each": True,
            "transform": {
                "type": "function",
                "function": {"name": "{tool_name}", "arguments": "{parameters}"},
            },
        },
        "content": {"open": "<|START_RESPONSE|>", "close": "<|END_RESPONSE|>"},
    },
}


def streamed(template, text, prefix="", tools=None):
    """Feed `text` one character at a time; return the message."""
    parser = ResponseParser(template, prefix=prefix, tools=tools)
    for char in text:
        parser.feed(char)
    message, _ = parser.finalize()
    return message


def check(template, text, expected, prefix="", reference=True):
    assert parse_response(text, template, prefix=prefix) == expected
    assert streamed(template, text, prefix) == expected
    if reference:
        assert reference_parse_response(text, template, prefix=prefix) == expected


def test_smollm3_reasoning_and_tool_call():
    text = '<think>\nI should greet the user\n</think>\n\n<tool_call>{"name": "greet_user", "arguments": {"greeting": "Hi!"}}</tool_call>'
    check(
        SMOLLM3,
        text,
        {
            "role": "assistant",
            "reasoning_content": "I should greet the user",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "greet_user", "arguments": {"greeting": "Hi!"}},
                }
            ],
        },
        prefix="<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    )


def test_smollm3_multi_turn_prefix_keeps_only_the_last_turn():
    prefix = (
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n"
        "<|im_start|>user\nAgain?<|im_end|>\n<|im_start|>assistant\n"
    )
    check(
        SMOLLM3, "Hi again!<|im_end|>", {"role": "assistant", "content": "Hi again!"}, prefix=prefix
    )
    check(SMOLLM3, "", {"role": "assistant"}, prefix=prefix)


def test_qwen3_coder_tool_call():
    text = (
        "<tool_call><function=get_weather><parameter=city>London</parameter>"
        "<parameter=units>celsius</parameter></function></tool_call>"
    )
    check(
        QWEN3_CODER,
        text,
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": {"city": "London", "units": "celsius"},
                    },
                }
            ],
        },
    )


def test_qwen3_coder_tool_call_json_values_and_whitespace():
    text = (
        "<tool_call>\n<function=set_alarm>\n<parameter=hour>\n7\n</parameter>\n"
        '<parameter=days>["mon", "tue"]</parameter>\n</function>\n</tool_call>'
    )
    check(
        QWEN3_CODER,
        text,
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {
                        "name": "set_alarm",
                        "arguments": {"hour": 7, "days": ["mon", "tue"]},
                    },
                }
            ],
        },
    )


def test_gpt_oss_function_name_from_the_channel_header():
    text = (
        "<|channel|>analysis<|message|>Need the weather.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
        '{"city": "Paris"}<|call|>'
    )
    check(
        GPT_OSS,
        text,
        {
            "role": "assistant",
            "reasoning_content": "Need the weather.",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
                }
            ],
        },
        prefix="<|start|>user<|message|>Weather?<|end|><|start|>assistant",
    )


def test_gpt_oss_final_channel():
    text = "<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>4<|return|>"
    check(GPT_OSS, text, {"role": "assistant", "reasoning_content": "Easy.", "content": "4"})


def test_cohere_transform_each():
    text = (
        '<|START_ACTION|>[{"tool_name": "search", "parameters": {"query": "cats"}}, '
        '{"tool_name": "lookup", "parameters": {"id": 3}}]<|END_ACTION|>'
    )
    check(
        COHERE,
        text,
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "search", "arguments": {"query": "cats"}},
                },
                {"type": "function", "function": {"name": "lookup", "arguments": {"id": 3}}},
            ],
        },
    )


def test_int_field():
    template = {
        "start_anchor": "A:",
        "fields": {"count": {"open": "<n>", "close": "</n>", "content": "int"}},
    }
    check(template, "<n> 42 </n>", {"count": 42})


def test_json_unquoted_keys():
    template = {
        "start_anchor": "A:",
        "fields": {
            "args": {
                "open": "<args>",
                "close": "</args>",
                "content": "json",
                "content_args": {"unquoted_keys": True},
            }
        },
    }
    check(template, '<args>{city: "London"}</args>', {"args": {"city": "London"}})


def test_kv_lines():
    template = {"start_anchor": "A:", "fields": {"info": {"content": "kv-lines"}}}
    check(template, "name: alice\nage: 30", {"info": {"name": "alice", "age": "30"}})


def test_kv_lines_with_int_value_parser():
    template = {
        "start_anchor": "A:",
        "fields": {
            "info": {"content": "kv-lines", "content_args": {"value_parser": {"name": "int"}}}
        },
    }
    check(template, "age: 30\nheight: 181", {"info": {"age": 30, "height": 181}})


def test_join_newline():
    template = {
        "defaults": {"role": "assistant"},
        "start_anchor": "A:",
        "fields": {
            "reasoning_content": {
                "open": "<think>",
                "close": "</think>",
                "repeats": True,
                "join": "\n",
            },
            "content": {},
        },
    }
    check(
        template,
        "<think>first</think>Answer.<think>second</think>",
        {"role": "assistant", "reasoning_content": "first\nsecond", "content": "Answer."},
    )
