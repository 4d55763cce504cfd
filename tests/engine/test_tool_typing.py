"""Tool-argument typing in both directions: strings cast to the schema's types, and a tagged value
that a value parser read as JSON kept as written where the schema says `string`."""

from __future__ import annotations

import pytest

from engine import ResponseParser, parse_response

TAGGED = {
    "start_anchor": "<|assistant|>",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<call=(?P<name>\w+)>",
            "close": "</call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": r"<arg=(?P<key>\w+)>\n?(?P<value>.*?)\n?</arg>",
                "value_parser": {"name": "json", "args": {"allow_non_json": True}},
            },
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
        "content": {"close": "<|end|>"},
    },
}
LINES = {
    "start_anchor": "<|assistant|>",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<call (?P<name>\w+)>",
            "close": "</call>",
            "repeats": True,
            "content": "kv-lines",
            "content_args": {"value_parser": {"name": "json", "args": {"allow_non_json": True}}},
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
        "content": {"close": "<|end|>"},
    },
}


def tool(**properties) -> list[dict]:
    return [
        {
            "type": "function",
            "function": {
                "name": "run",
                "parameters": {"type": "object", "properties": properties},
            },
        }
    ]


def arguments(message: dict) -> dict:
    return message["tool_calls"][0]["function"]["arguments"]


@pytest.mark.parametrize(
    "written, schema, expected",
    [
        ("5123123", {"type": "string"}, "5123123"),
        ('"foo"', {"type": "string"}, '"foo"'),
        ('printf("foo");', {"type": "string"}, 'printf("foo");'),
        ("def f():\n    return 1\n\n", {"type": "string"}, "def f():\n    return 1\n"),
        ("1.50", {"type": "string"}, "1.50"),
        ("true", {"type": "string"}, "true"),
        ('{"a": 1}', {"type": "string"}, '{"a": 1}'),
        ("null", {"type": ["string", "null"]}, None),
        ("7", {"anyOf": [{"type": "integer"}, {"type": "string"}]}, 7),
        ("seven", {"anyOf": [{"type": "integer"}, {"type": "string"}]}, "seven"),
        ('{"a": 1}', {"anyOf": [{"type": "string"}, {"type": "object"}]}, {"a": 1}),
        ("5123123", {"type": "integer"}, 5123123),
        ("3", {"type": "number"}, 3),
        ("True", {"type": "boolean"}, True),
    ],
)
def test_a_tagged_value_is_typed_by_its_schema_in_both_directions(written, schema, expected):
    output = f"<call=run><arg=value>{written}</arg></call><|end|>"
    got = arguments(parse_response(output, TAGGED, prefix="", tools=tool(value=schema)))
    assert got == {"value": expected}
    assert type(got["value"]) is type(expected)


def test_without_tools_the_value_parser_alone_decides():
    output = '<call=run><arg=zip>5123123</arg><arg=code>"foo"</arg><arg=text>a b\n\n</arg></call>'
    assert arguments(parse_response(output, TAGGED, prefix="")) == {
        "zip": 5123123,
        "code": "foo",
        "text": "a b",
    }


def test_a_parameter_the_schema_does_not_name_keeps_the_parsed_value():
    output = "<call=run><arg=zip>5123123</arg><arg=other>42</arg></call>"
    got = arguments(parse_response(output, TAGGED, prefix="", tools=tool(zip={"type": "string"})))
    assert got == {"zip": "5123123", "other": 42}


def test_key_value_lines_keep_a_string_parameter_as_written():
    output = '<call run>\nzip: 75001\ncount: 3\nnote: "hi"\n</call>'
    tools = tool(zip={"type": "string"}, count={"type": "integer"}, note={"type": "string"})
    assert arguments(parse_response(output, LINES, prefix="", tools=tools)) == {
        "zip": "75001",
        "count": 3,
        "note": '"hi"',
    }


def test_merged_duplicates_keep_each_string_as_written():
    template = {
        **TAGGED,
        "fields": {
            **TAGGED["fields"],
            "tool_calls": {
                **TAGGED["fields"]["tool_calls"],
                "content_args": {
                    **TAGGED["fields"]["tool_calls"]["content_args"],
                    "merge_duplicates": True,
                },
            },
        },
    }
    output = "<call=run><arg=tag>007</arg><arg=tag>12</arg></call>"
    assert arguments(
        parse_response(output, template, prefix="", tools=tool(tag={"type": "string"}))
    ) == {"tag": ["007", "12"]}


def test_streaming_types_each_call_at_its_close_as_one_shot_does():
    output = (
        '<call=run><arg=zip>5123123</arg><arg=n>4</arg></call><call=run><arg=zip>"x"</arg></call>'
    )
    tools = tool(zip={"type": "string"}, n={"type": "integer"})
    parser = ResponseParser(TAGGED, prefix="", tools=tools)
    closes = [
        event["value"]["function"]["arguments"]
        for character in output
        for event in parser.feed(character)
        if event["type"] == "region_close" and event["field"] == "tool_calls"
    ]
    assert closes == [{"zip": "5123123", "n": 4}, {"zip": '"x"'}]
    assert parser.finalize()[0] == parse_response(output, TAGGED, prefix="", tools=tools)
