"""Each template key and each field key of docs/template-language.md, with exact expected messages.

Every case is checked one-shot and streamed one character at a time.
"""

import pytest

from engine import ResponseParser, parse_response
from tests.support.stream_helpers import stream_events

THINK = {"open": "<think>", "close": "</think>"}


def streamed(template, text, prefix=""):
    return stream_events(template, text, prefix)


def parse(template, text, prefix=""):
    """The message, after checking that one-shot and char-by-char streaming agree."""
    one_shot = parse_response(text, template, prefix=prefix)
    assert streamed(template, text, prefix)[0] == one_shot
    return one_shot


def t(fields, **top):
    return {"start_anchor": "<|assistant|>", "fields": fields, **top}


# -- top-level keys -------------------------------------------------------------


def test_version_1_is_accepted():
    assert parse(t({"content": {}}, version=1), "hi") == {"content": "hi"}


def test_defaults_are_always_kept_even_when_empty():
    template = t({"content": {}}, defaults={"role": "assistant", "tool_calls": [], "name": ""})
    assert parse(template, "") == {"role": "assistant", "tool_calls": [], "name": ""}
    assert parse(template, "  hi ") == {
        "role": "assistant",
        "tool_calls": [],
        "name": "",
        "content": "hi",
    }


def test_defaults_are_overwritten_by_fields():
    template = t({"content": {}}, defaults={"role": "assistant", "content": "none"})
    assert parse(template, "") == {"role": "assistant", "content": "none"}
    assert parse(template, "yes") == {"role": "assistant", "content": "yes"}


def test_defaults_are_not_shared_between_parses():
    template = t(
        {"tool_calls": {"open": "<c>", "close": "</c>", "repeats": True}},
        defaults={"tool_calls": []},
    )
    assert parse(template, "<c>a</c>") == {"tool_calls": ["a"]}
    assert parse(template, "") == {"tool_calls": []}


def test_start_anchor_string_cuts_after_the_last_match():
    template = t({"reasoning_content": THINK, "content": {}})
    prefix = "<|assistant|>old<think>x</think>\n<|user|>q\n<|assistant|><think>"
    assert parse(template, "new</think>ok", prefix) == {"reasoning_content": "new", "content": "ok"}


def test_start_anchor_list_any_literal():
    template = {
        "start_anchor": ["<|assistant|>", "<|bot|>"],
        "fields": {"reasoning_content": THINK, "content": {}},
    }
    assert parse(template, "a</think>b", "<|assistant|>X<|bot|><think>") == {
        "reasoning_content": "a",
        "content": "b",
    }
    assert parse(template, "a</think>b", "<|bot|>X<|assistant|><think>") == {
        "reasoning_content": "a",
        "content": "b",
    }
    assert parse(template, "hi", "<|bot|>X<|assistant|>") == {"content": "hi"}


def test_start_anchor_pattern():
    template = {
        "start_anchor_pattern": r"<\|start\|>(assistant|bot)\n",
        "fields": {"reasoning_content": THINK, "content": {}},
    }
    prefix = "<|start|>bot\nold\n<|start|>user\nq\n<|start|>assistant\n<think>"
    assert parse(template, "r</think>c", prefix) == {"reasoning_content": "r", "content": "c"}


def test_anchor_is_not_applied_to_the_generation():
    template = t({"content": {}})
    assert parse(template, "one <|assistant|> two", "<|assistant|>") == {
        "content": "one <|assistant|> two"
    }


def test_anchor_absent_whole_prefix_is_processed():
    template = t({"reasoning_content": THINK, "content": {}})
    assert parse(template, "b</think>c", "<think>a ") == {
        "reasoning_content": "a b",
        "content": "c",
    }
    # a closed region in the prefix lands in the message as if the model wrote it
    assert parse(template, "c", "<think>a</think>") == {"reasoning_content": "a", "content": "c"}


def test_prefix_text_after_the_anchor_belongs_to_the_message():
    template = t({"content": {}})
    assert parse(template, "world", "<|user|>x<|assistant|>Hello ") == {"content": "Hello world"}


def test_empty_prefix_opts_out():
    template = t({"content": {}})
    assert parse_response("hi", template, prefix="") == {"content": "hi"}
    assert parse_response("hi", template, prefix=[]) == {"content": "hi"}


# -- open / close ---------------------------------------------------------------


def test_open_and_close_literals():
    template = t({"reasoning_content": THINK, "content": {}})
    assert parse(template, "<think> a </think> b ") == {"reasoning_content": "a", "content": "b"}


def test_open_pattern_and_close_pattern():
    template = t(
        {"answer": {"open_pattern": r"<ans\s*>", "close_pattern": r"</ans\s*>"}, "content": {}}
    )
    assert parse(template, "x<ans  >42</ans >y") == {"answer": "42", "content": "xy"}


def test_no_close_runs_to_the_end():
    template = t({"reasoning_content": {"open": "<think>"}, "content": {}})
    assert parse(template, "pre<think>all </think> the rest") == {
        "content": "pre",
        "reasoning_content": "all </think> the rest",
    }


def test_end_of_generation_closes_an_open_region():
    template = t({"reasoning_content": THINK, "content": {}})
    assert parse(template, "<think>unfinished") == {"reasoning_content": "unfinished"}


def test_literal_list_open_and_close():
    template = t(
        {
            "tool_calls": {
                "open": ["<call>", "[CALL]"],
                "close": ["</call>", "[/CALL]"],
                "repeats": True,
            },
            "content": {},
        }
    )
    assert parse(template, "<call>a[/CALL][CALL]b</call>") == {"tool_calls": ["a", "b"]}


def test_literal_list_one_literal_a_prefix_of_another():
    template = t(
        {
            "x": {"open": ["<t", "<tool>"], "close": ["</t>", "</tool>"], "repeats": True},
            "content": {},
        }
    )
    # the longer literal wins where both match
    assert parse(template, "<tool>A</tool>") == {"x": ["A"]}
    assert parse(template, "<tB</t>") == {"x": ["B"]}
    assert parse(template, "<toC</t>") == {"x": ["oC"]}
    assert parse(template, "c<tool>A</tool>d<t>B</t>") == {"x": ["A", ">B"], "content": "cd"}


def test_literal_list_prefix_is_held_while_streaming():
    template = t({"x": {"open": ["<t", "<tool>"], "close": "</x>"}, "content": {}})
    parser = ResponseParser(template, prefix="")
    assert parser.feed("<t") == []
    assert parser.feed("oo") == []
    assert parser.feed("l>v") == [
        {"type": "region_open", "field": "x"},
        {"type": "region_chunk", "field": "x", "text": "v", "dirty": False},
    ]
    assert parser.finalize() == ({"x": "v"}, [{"type": "region_close", "field": "x", "value": "v"}])


def test_implicit_field_catches_unclaimed_text():
    template = t({"reasoning_content": THINK, "answer": {}})
    assert parse(template, "<think>r</think>the answer") == {
        "reasoning_content": "r",
        "answer": "the answer",
    }


def test_without_implicit_field_unclaimed_text_is_dropped():
    template = t({"reasoning_content": THINK})
    assert parse(template, "junk<think>r</think>more junk") == {"reasoning_content": "r"}


def test_implicit_field_close_ends_the_message_part():
    template = t({"content": {"close": "<|end|>"}})
    assert parse(template, "hello<|end|>") == {"content": "hello"}


# -- repeats / join / optional --------------------------------------------------


def test_without_repeats_the_last_match_wins():
    template = t({"x": {"open": "<x>", "close": "</x>"}})
    assert parse(template, "<x>1</x><x>2</x>") == {"x": "2"}


def test_repeats_collects_a_list():
    template = t({"x": {"open": "<x>", "close": "</x>", "repeats": True}})
    assert parse(template, "<x>1</x> <x>2</x><x>3</x>") == {"x": ["1", "2", "3"]}


def test_repeats_with_one_match_is_a_list_of_one():
    template = t({"x": {"open": "<x>", "close": "</x>", "repeats": True}})
    assert parse(template, "<x>1</x>") == {"x": ["1"]}


def test_join():
    template = t({"x": {"open": "<x>", "close": "</x>", "repeats": True, "join": " | "}})
    assert parse(template, "<x> a </x><x>b</x><x>c</x>") == {"x": "a | b | c"}
    assert parse(template, "<x>a</x>") == {"x": "a"}


def test_optional_false_present():
    template = t({"x": {"open": "<x>", "close": "</x>", "optional": False}})
    assert parse(template, "<x>1</x>") == {"x": "1"}


def test_optional_true_is_the_default():
    template = t({"x": {"open": "<x>", "close": "</x>", "optional": True}, "content": {}})
    assert parse(template, "nothing") == {"content": "nothing"}


def test_empty_values_are_dropped_unless_in_defaults():
    template = t(
        {"x": {"open": "<x>", "close": "</x>"}, "content": {}}, defaults={"role": "assistant"}
    )
    assert parse(template, "<x>  </x>") == {"role": "assistant"}


# -- content / content_args --------------------------------------------------------


def test_content_and_content_args():
    template = t(
        {
            "n": {"open": "<n>", "close": "</n>", "content": "int"},
            "raw": {
                "open": "<raw>",
                "close": "</raw>",
                "content": "text",
                "content_args": {"strip": False},
            },
        }
    )
    assert parse(template, "<n> 7 </n><raw> a </raw>") == {"n": 7, "raw": " a "}


# -- transform --------------------------------------------------------------------


def test_transform_whole_placeholder_keeps_type():
    template = t(
        {
            "x": {
                "open": "<x>",
                "close": "</x>",
                "content": "json",
                "transform": {"v": "{content}", "k": 1, "l": [True, "{content}"]},
            }
        }
    )
    assert parse(template, "<x>[1, 2]</x>") == {"x": {"v": [1, 2], "k": 1, "l": [True, [1, 2]]}}


def test_transform_dotted_path():
    template = t(
        {
            "tool_calls": {
                "open": "<c>",
                "close": "</c>",
                "repeats": True,
                "content": "json",
                "transform": {"name": "{content.fn.name}", "arguments": "{content.fn.args}"},
            }
        }
    )
    assert parse(template, '<c>{"fn": {"name": "f", "args": {"a": 1}}}</c>') == {
        "tool_calls": [{"name": "f", "arguments": {"a": 1}}]
    }


def test_transform_named_capture_of_open_pattern():
    template = t(
        {
            "tool_calls": {
                "open_pattern": r"<call name=(?P<name>\w+)>",
                "close": "</call>",
                "repeats": True,
                "content": "json",
                "transform": {"name": "{name}", "arguments": "{content}"},
            }
        }
    )
    assert parse(template, '<call name=f>{"a": 1}</call><call name=g>{}</call>') == {
        "tool_calls": [{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {}}]
    }


@pytest.mark.parametrize(
    ("open_key", "close_pattern", "transform", "text", "expected"),
    [
        pytest.param(
            {"open": "<x>"},
            r"</x id=(?P<id>\d+)>",
            {"id": "{id}", "body": "{content}"},
            "<x>hi</x id=12>",
            {"x": {"id": "12", "body": "hi"}},
            id="named_capture_of_close_pattern",
        ),
        pytest.param(
            {"open_pattern": r"<x n=(?P<n>\w+)>"},
            r"</x n=(?P<n>\w+)>",
            {"n": "{n}", "body": "{content}"},
            "<x n=open>b</x n=close>",
            {"x": {"n": "close", "body": "b"}},
            id="close_capture_wins_over_open_capture",
        ),
        pytest.param(
            {"open_pattern": r"<x n=(?P<n>\w+)>"},
            r"</x(?: n=(?P<n>\w+))?>",
            {"n": "{n}", "body": "{content}"},
            "<x n=open>b</x>",
            {"x": {"n": "open", "body": "b"}},
            id="open_capture_kept_when_close_group_does_not_participate",
        ),
    ],
)
def test_transform_captures(open_key, close_pattern, transform, text, expected):
    template = t({"x": {**open_key, "close_pattern": close_pattern, "transform": transform}})
    assert parse(template, text) == expected


def test_transform_each():
    template = t(
        {
            "tool_calls": {
                "open": "<calls>",
                "close": "</calls>",
                "content": "json",
                "transform_each": True,
                "transform": {
                    "type": "function",
                    "function": {"name": "{tool_name}", "arguments": "{parameters}"},
                },
            }
        }
    )
    assert parse(
        template,
        '<calls>[{"tool_name": "a", "parameters": {"x": 1}}, {"tool_name": "b", "parameters": {}}]</calls>',
    ) == {
        "tool_calls": [
            {"type": "function", "function": {"name": "a", "arguments": {"x": 1}}},
            {"type": "function", "function": {"name": "b", "arguments": {}}},
        ]
    }


def test_transform_each_with_python_call_list_and_open_capture():
    template = t(
        {
            "tool_calls": {
                "open_pattern": r"<\|python_tag\|(?P<kind>\w+)>",
                "close": "<|eom|>",
                "content": "python-call-list",
                "transform_each": True,
                "transform": {
                    "type": "{kind}",
                    "function": {"name": "{name}", "arguments": "{arguments}"},
                },
            }
        }
    )
    text = "<|python_tag|function>[get_weather(city=\"Paris\", days=3), get_time(tz='UTC')]<|eom|>"
    assert parse(template, text) == {
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}},
            },
            {"type": "function", "function": {"name": "get_time", "arguments": {"tz": "UTC"}}},
        ]
    }


def test_transform_each_with_repeats_extends_per_block():
    template = t(
        {
            "tool_calls": {
                "open": "<calls>",
                "close": "</calls>",
                "repeats": True,
                "content": "json",
                "transform_each": True,
                "transform": {"name": "{n}"},
            }
        }
    )
    assert parse(
        template, '<calls>[{"n": "a"}, {"n": "b"}]</calls><calls>[{"n": "c"}]</calls>'
    ) == {"tool_calls": [[{"name": "a"}, {"name": "b"}], [{"name": "c"}]]}


# -- prefix replay: initial_events and held partial delimiters ----------------------


def test_initial_events_from_a_prefix_that_opens_a_region():
    template = t({"reasoning_content": THINK, "content": {}})
    parser = ResponseParser(template, prefix="<|user|>hi<|assistant|><think>\nLet")
    assert parser.initial_events == [
        {"type": "region_open", "field": "reasoning_content"},
        {"type": "region_chunk", "field": "reasoning_content", "text": "\nLet", "dirty": False},
    ]
    assert parser.feed(" me</think>Hi") == [
        {"type": "region_chunk", "field": "reasoning_content", "text": " me", "dirty": False},
        {"type": "region_close", "field": "reasoning_content", "value": "Let me"},
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": "Hi", "dirty": False},
    ]
    assert parser.finalize() == (
        {"reasoning_content": "Let me", "content": "Hi"},
        [{"type": "region_close", "field": "content", "value": "Hi"}],
    )


def test_initial_events_from_a_prefix_that_opens_and_closes_a_region():
    template = t({"reasoning_content": THINK, "content": {}})
    parser = ResponseParser(template, prefix="<|assistant|><think></think>")
    assert parser.initial_events == [
        {"type": "region_open", "field": "reasoning_content"},
        {"type": "region_close", "field": "reasoning_content", "value": ""},
    ]
    assert parser.feed("ok") == [
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": "ok", "dirty": False},
    ]
    assert parser.finalize()[0] == {"content": "ok"}


def test_initial_events_empty_when_prefix_ends_at_the_anchor():
    parser = ResponseParser(
        t({"reasoning_content": THINK, "content": {}}), prefix="<|user|>hi<|assistant|>"
    )
    assert parser.initial_events == []


def test_held_partial_delimiter():
    template = t({"reasoning_content": THINK, "content": {}})
    parser = ResponseParser(template, prefix="")
    assert parser.feed("<thi") == []
    assert parser.feed("nk>") == [{"type": "region_open", "field": "reasoning_content"}]
    assert parser.feed("a</") == [
        {"type": "region_chunk", "field": "reasoning_content", "text": "a", "dirty": False}
    ]
    assert parser.feed("thin") == []
    assert parser.feed("g") == [
        {"type": "region_chunk", "field": "reasoning_content", "text": "</thing", "dirty": False}
    ]
    message, final = parser.finalize()
    assert message == {"reasoning_content": "a</thing"}
    assert final == [{"type": "region_close", "field": "reasoning_content", "value": "a</thing"}]


def test_held_partial_delimiter_released_at_finalize():
    template = t({"reasoning_content": THINK, "content": {}})
    parser = ResponseParser(template, prefix="")
    assert parser.feed("hi <thi") == [
        {"type": "region_open", "field": "content"},
        {"type": "region_chunk", "field": "content", "text": "hi ", "dirty": False},
    ]
    assert parser.finalize() == (
        {"content": "hi <thi"},
        [
            {"type": "region_chunk", "field": "content", "text": "<thi", "dirty": False},
            {"type": "region_close", "field": "content", "value": "hi <thi"},
        ],
    )


def test_held_partial_delimiter_in_the_prefix_completes_in_the_generation():
    template = t({"reasoning_content": THINK, "content": {}})
    parser = ResponseParser(template, prefix="<|assistant|><thi")
    assert parser.initial_events == []
    assert parser.feed("nk>x") == [
        {"type": "region_open", "field": "reasoning_content"},
        {"type": "region_chunk", "field": "reasoning_content", "text": "x", "dirty": False},
    ]
