"""Tool-argument typing: by default transformers' rule (only strings are cast; a value a content
parser typed stays typed, and a `json` body keeps what it gave for a parameter that admits
`string`), and, asked for with `strings_as_written`, a tagged value that a value parser read as
JSON kept as written where the schema says `string`."""

from __future__ import annotations

import pytest
from transformers.utils.chat_parsing import parse_response as reference_parse_response

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
        ("5123123", {"type": "string"}, 5123123),
        ('"foo"', {"type": "string"}, "foo"),
        ('printf("foo");', {"type": "string"}, 'printf("foo");'),
        ("def f():\n    return 1\n\n", {"type": "string"}, "def f():\n    return 1"),
        ("1.50", {"type": "string"}, 1.5),
        ("true", {"type": "string"}, True),
        ('{"a": 1}', {"type": "string"}, {"a": 1}),
        ("null", {"type": ["string", "null"]}, None),
        ("7", {"anyOf": [{"type": "integer"}, {"type": "string"}]}, 7),
        ("seven", {"anyOf": [{"type": "integer"}, {"type": "string"}]}, "seven"),
        ('"7"', {"type": "integer"}, 7),
        ("5123123", {"type": "integer"}, 5123123),
        ("3", {"type": "number"}, 3),
        ("True", {"type": "boolean"}, True),
    ],
)
def test_by_default_only_strings_are_cast_as_in_transformers(written, schema, expected):
    output = f"<call=run><arg=value>{written}</arg></call><|end|>"
    arguments_given = {"prefix": "", "tools": tool(value=schema)}
    got = arguments(parse_response(output, TAGGED, **arguments_given))
    assert got == {"value": expected}
    assert type(got["value"]) is type(expected)
    assert got == arguments(reference_parse_response(output, TAGGED, **arguments_given))


@pytest.mark.parametrize(
    "body, schema, expected",
    [
        ('{"value": "7"}', {"type": ["integer", "string"]}, "7"),
        ('{"value": "7"}', {"type": "integer"}, 7),
        ('{"value": 7}', {"type": "string"}, 7),
        ('{"value": "true"}', {"anyOf": [{"type": "boolean"}, {"type": "string"}]}, "true"),
    ],
)
def test_a_json_body_keeps_what_it_gave_for_a_parameter_that_admits_string(body, schema, expected):
    template = {
        "start_anchor": "<|assistant|>",
        "fields": {
            "tool_calls": {
                "open_pattern": r"<call=(?P<name>\w+)>",
                "close": "</call>",
                "repeats": True,
                "content": "json",
                "transform": {
                    "type": "function",
                    "function": {"name": "{name}", "arguments": "{content}"},
                },
            }
        },
    }
    output = f"<call=run>{body}</call>"
    given = {"prefix": "", "tools": tool(value=schema)}
    got = arguments(parse_response(output, template, **given))
    assert (
        got == {"value": expected} == arguments(reference_parse_response(output, template, **given))
    )
    assert type(got["value"]) is type(expected)


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
def test_strings_as_written_keeps_a_string_parameters_text(written, schema, expected):
    output = f"<call=run><arg=value>{written}</arg></call><|end|>"
    got = arguments(
        parse_response(output, TAGGED, prefix="", tools=tool(value=schema), strings_as_written=True)
    )
    assert got == {"value": expected}
    assert type(got["value"]) is type(expected)


def test_without_tools_the_value_parser_alone_decides():
    output = '<call=run><arg=zip>5123123</arg><arg=code>"foo"</arg><arg=text>a b\n\n</arg></call>'
    for as_written in (False, True):
        assert arguments(
            parse_response(output, TAGGED, prefix="", strings_as_written=as_written)
        ) == {"zip": 5123123, "code": "foo", "text": "a b"}


def test_a_parameter_the_schema_does_not_name_keeps_the_parsed_value():
    output = "<call=run><arg=zip>5123123</arg><arg=other>42</arg></call>"
    tools = tool(zip={"type": "string"})
    got = arguments(parse_response(output, TAGGED, prefix="", tools=tools, strings_as_written=True))
    assert got == {"zip": "5123123", "other": 42}
    assert arguments(parse_response(output, TAGGED, prefix="", tools=tools)) == {
        "zip": 5123123,
        "other": 42,
    }


def test_key_value_lines_keep_a_string_parameter_as_written_when_asked():
    output = '<call run>\nzip: 75001\ncount: 3\nnote: "hi"\n</call>'
    tools = tool(zip={"type": "string"}, count={"type": "integer"}, note={"type": "string"})
    assert arguments(
        parse_response(output, LINES, prefix="", tools=tools, strings_as_written=True)
    ) == {"zip": "75001", "count": 3, "note": '"hi"'}
    by_default = {"zip": 75001, "count": 3, "note": "hi"}
    assert arguments(parse_response(output, LINES, prefix="", tools=tools)) == by_default
    assert arguments(reference_parse_response(output, LINES, prefix="", tools=tools)) == by_default


def test_merged_duplicates_keep_each_string_as_written_when_asked():
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
    tools = tool(tag={"type": "string"})
    assert arguments(
        parse_response(output, template, prefix="", tools=tools, strings_as_written=True)
    ) == {"tag": ["007", "12"]}
    assert (
        arguments(parse_response(output, template, prefix="", tools=tools))
        == {"tag": ["007", 12]}
        == arguments(reference_parse_response(output, template, prefix="", tools=tools))
    )


@pytest.mark.parametrize("as_written", [False, True])
def test_streaming_types_each_call_at_its_close_as_one_shot_does(as_written):
    output = (
        '<call=run><arg=zip>5123123</arg><arg=n>4</arg></call><call=run><arg=zip>"x"</arg></call>'
    )
    tools = tool(zip={"type": "string"}, n={"type": "integer"})
    parser = ResponseParser(TAGGED, prefix="", tools=tools, strings_as_written=as_written)
    closes = [
        event["value"]["function"]["arguments"]
        for character in output
        for event in parser.feed(character)
        if event["type"] == "region_close" and event["field"] == "tool_calls"
    ]
    expected = (
        [{"zip": "5123123", "n": 4}, {"zip": '"x"'}]
        if as_written
        else [{"zip": 5123123, "n": 4}, {"zip": "x"}]
    )
    assert closes == expected
    assert parser.finalize()[0] == parse_response(
        output, TAGGED, prefix="", tools=tools, strings_as_written=as_written
    )


def test_tool_typing_leaves_the_values_value_parser_by_read_alone():
    template = {
        **TAGGED,
        "fields": {
            **TAGGED["fields"],
            "tool_calls": {
                **TAGGED["fields"]["tool_calls"],
                "content_args": {
                    "tag_pattern": r'<arg=(?P<key>\w+)(?: string="(?P<string>true|false)")?>(?P<value>.*?)</arg>',
                    "value_parser_by": {"group": "string", "parsers": {"false": {"name": "json"}}},
                },
            },
        },
    }
    output = (
        '<call=run><arg=zip string="true">75001</arg><arg=n string="false">3</arg>'
        '<arg=code string="true">7</arg><arg=note>2</arg></call>'
    )
    tools = tool(
        zip={"type": "string"},
        n={"type": "integer"},
        code={"type": "integer"},
        note={"type": "integer"},
    )
    expected = {"zip": "75001", "n": 3, "code": "7", "note": "2"}
    assert arguments(parse_response(output, template, prefix="", tools=tools)) == expected
    assert arguments(reference_parse_response(output, template, prefix="", tools=tools)) == expected
