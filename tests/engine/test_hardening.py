"""Hardening (engine side): untrusted templates and untrusted model output.

* Regex time budget: every template pattern kind, one-shot, streamed and traced,
  fails with `PatternTimeoutError` naming the field path within the budget.
* Size: a 10 MB generation parses one-shot and in 64 KB chunks in linear time.
* No code execution: Python and Jinja payloads in templates and tools are data.
* Malformed output never loses data: the parse succeeds or raises the documented
  error, and the trace's spans tile every character of the input.

Catastrophic patterns were measured, not guessed: the `regex` module handles
`(a+)+$` and `(a|a)+b` in about a millisecond, while `(a|aa)+$` on 40 `a`s and a
`b` backtracks for far longer than any budget used here.
"""

from __future__ import annotations

import json
import os

import pytest

import engine
from engine import PatternTimeoutError, ResponseParseError, ResponseParser, parse_response, trace
from engine.template_files import load_template_file
from tests.support.stream_helpers import region_texts, stream_events
from tests.support.templates_for_tests import SMOLLM3
from tests.support.workloads import QWEN3_CODER_TEMPLATE

BUDGET = 0.2
CATASTROPHIC = r"(a|aa)+$"
EVIL = "a" * 40 + "b"

QWEN3_CODER = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<tool_call>\s*<function=(?P<name>[^>\s]+)>",
            "close_pattern": r"\s*</function>\s*</tool_call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": r"<parameter=(?P<key>[^>\s]+)>\n?(?P<value>.*?)\n?</parameter>"
            },
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
        "content": {"close": "<|im_end|>"},
    },
}


def stream(template, prefix, chunks, **options):
    """Feed `chunks`; return (message, events)."""
    return stream_events(template, chunks, prefix, **options)


def chunked(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def assert_tiles(result: engine.Trace) -> None:
    """The trace's spans cover the prefix tail then the generation, in order, no gaps, no overlaps."""
    assert "".join(span.text for span in result.spans) == result.prefix_tail + result.generation
    position = 0
    for span in result.spans:
        assert span.stream_start == position, span
        assert span.stream_end - span.stream_start == len(span.text)
        source = result.prefix if span.source == "prefix" else result.generation
        assert source[span.start : span.end] == span.text
        position = span.stream_end


# -- 1. regex time budget ----------------------------------------------------------

# kind -> (template, prefix, path named in the error)
SLOW_TEMPLATES = {
    "open_pattern": (
        {"start_anchor": "<S>", "fields": {"x": {"open_pattern": CATASTROPHIC}, "content": {}}},
        "",
        "fields.x.open_pattern",
    ),
    "close_pattern": (
        {"start_anchor": "<S>", "fields": {"x": {"open": "<x>", "close_pattern": CATASTROPHIC}}},
        "<x>",
        "fields.x.close_pattern",
    ),
    "start_anchor_pattern": (
        {"start_anchor_pattern": CATASTROPHIC, "fields": {"content": {}}},
        EVIL,
        "start_anchor_pattern",
    ),
    "tag_pattern": (
        {
            "start_anchor": "<S>",
            "fields": {
                "x": {
                    "content": "xml-inline",
                    "content_args": {"tag_pattern": r"(?P<key>b)?(?P<value>(a|aa)+)$"},
                }
            },
        },
        "",
        "fields.x.content_args.tag_pattern",
    ),
}


def check_timeout_error(error: BaseException, path: str) -> None:
    assert isinstance(error, PatternTimeoutError)
    assert isinstance(error, ResponseParseError) and isinstance(error, ValueError)
    message = str(error)
    assert message.startswith(path + ":"), message
    assert "pattern too slow" in message
    assert f"{BUDGET} s budget" in message


def test_catastrophic_pattern_is_really_slow_without_a_budget():
    import regex

    with pytest.raises(TimeoutError):
        regex.search(CATASTROPHIC, EVIL, timeout=1.0)


@pytest.mark.parametrize("kind", list(SLOW_TEMPLATES))
def test_slow_pattern_one_shot(kind):
    template, prefix, path = SLOW_TEMPLATES[kind]
    with pytest.raises(PatternTimeoutError) as caught:
        parse_response(EVIL, template, prefix=prefix, regex_timeout=BUDGET)
    check_timeout_error(caught.value, path)
    if kind in ("open_pattern", "close_pattern", "start_anchor_pattern"):
        assert CATASTROPHIC in str(caught.value)


@pytest.mark.parametrize("kind", list(SLOW_TEMPLATES))
def test_slow_pattern_streamed(kind):
    template, prefix, path = SLOW_TEMPLATES[kind]
    with pytest.raises(PatternTimeoutError) as caught:
        stream(template, prefix, chunked(EVIL, 8), regex_timeout=BUDGET)
    check_timeout_error(caught.value, path)


@pytest.mark.parametrize("kind", ["open_pattern", "close_pattern", "tag_pattern"])
@pytest.mark.parametrize("chunks", [None, "chunked"])
def test_slow_pattern_through_trace(kind, chunks):
    template, prefix, path = SLOW_TEMPLATES[kind]
    pieces = chunked(EVIL, 8) if chunks else None
    result = trace(EVIL, template, prefix=prefix, chunks=pieces, regex_timeout=BUDGET)
    assert result.message is None
    assert result.error is not None and result.error.type == "PatternTimeoutError"
    assert (
        result.error.message.startswith(path + ":") and "pattern too slow" in result.error.message
    )
    assert_tiles(result)


def test_slow_anchor_pattern_through_trace_is_reported():
    template, prefix, path = SLOW_TEMPLATES["start_anchor_pattern"]
    result = trace(EVIL, template, prefix=prefix, regex_timeout=BUDGET)
    assert result.error is not None and result.error.message.startswith(path)
    assert_tiles(result)


def test_no_budget_by_default_and_fine_patterns_unaffected():
    # Without catastrophic input, a budget changes nothing.
    generation = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"
    with_budget = parse_response(generation, QWEN3_CODER, prefix="", regex_timeout=BUDGET)
    without = parse_response(generation, QWEN3_CODER, prefix="")
    assert with_budget == without
    assert without["tool_calls"][0]["function"] == {
        "name": "get_weather",
        "arguments": {"city": "Paris"},
    }


# -- 2. size: a 10 MB generation ---------------------------------------------------

TEN_MB = 10 * 2**20


def big_generation() -> str:
    line = 'the quick brown fox < jumps > over </ the lazy dog {"k": 1}\n'
    think = "<think>" + line * (3_000_000 // len(line)) + "</think>"
    call = (
        "<tool_call>"
        + json.dumps({"name": "f", "arguments": {"s": "x" * 2_000_000}})
        + "</tool_call>"
    )
    content = line * (4_000_000 // len(line))
    generation = think + call + content
    return generation + "z" * (TEN_MB - len(generation))


def test_ten_megabyte_generation_one_shot_and_streamed():
    generation = big_generation()
    assert len(generation) == TEN_MB
    one_shot = parse_response(generation, SMOLLM3, prefix="")
    streamed, events = stream(SMOLLM3, "", chunked(generation, 65536))
    assert streamed == one_shot
    assert one_shot["tool_calls"][0]["function"]["arguments"]["s"] == "x" * 2_000_000
    assert one_shot["reasoning_content"].startswith("the quick brown fox")
    assert one_shot["content"].endswith("z" * 100)
    assert sum(len(t) for _, t in region_texts(events)) == TEN_MB - len(
        "<think></think><tool_call></tool_call>"
    )


def test_ten_megabyte_generation_with_regex_delimiters():
    call = (
        "<tool_call>\n<function=f>\n<parameter=a>\n"
        + "v" * 1000
        + "\n</parameter>\n</function>\n</tool_call>"
    )
    filler = "text < with > partial <tool_ angle brackets\n" * 2000
    unit = filler + call
    generation = unit * (TEN_MB // len(unit))
    one_shot = parse_response(generation, QWEN3_CODER, prefix="")
    streamed, _ = stream(QWEN3_CODER, "", chunked(generation, 65536))
    assert streamed == one_shot
    assert len(one_shot["tool_calls"]) == TEN_MB // len(unit)


# -- 3. no code execution -------------------------------------------------------------

MARKER = "/tmp/pwned"
PAYLOADS = [
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "__import__('os').system('touch /tmp/pwned')",
    "{% for x in range(3) %}{{ x }}{% endfor %}",
    "{% for %}",
    "${{7*7}} #{7*7} <%= 7*7 %>",
    "eval(compile('open(\"/tmp/pwned\", \"w\")', 'x', 'exec'))",
]


@pytest.fixture
def no_marker():
    if os.path.exists(MARKER):
        os.remove(MARKER)
    yield
    assert not os.path.exists(MARKER), "a payload was executed"


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payloads_in_the_template_are_plain_text(payload, no_marker):
    template = {
        "defaults": {"role": "assistant", "note": payload},
        "start_anchor": payload,
        "fields": {
            "reasoning_content": {"open": payload + "<t>", "close": "</think>"},
            "content": {},
        },
    }
    generation = f"{payload}<t>thinking {payload}</think>answer {payload}"
    message = parse_response(generation, template, prefix=f"junk{payload}")
    assert message == {
        "role": "assistant",
        "note": payload,
        "reasoning_content": f"thinking {payload}",
        "content": f"answer {payload}",
    }
    assert stream(template, f"junk{payload}", list(generation))[0] == message


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payloads_in_transform_and_content_args_are_plain_text(payload, no_marker):
    template = {
        "start_anchor": "<S>",
        "fields": {
            "tool_calls": {
                "open": "<tool_call>",
                "close": "</tool_call>",
                "repeats": True,
                "content": "json",
                "content_args": {
                    "string_delims": [[payload[:3] or "'", payload[-3:] or "'"]],
                    "allow_non_json": True,
                },
                "transform": {"type": payload, "function": "{content}"},
            }
        },
    }
    message = parse_response(
        '<tool_call>{"name": "f", "arguments": {}}</tool_call>', template, prefix=""
    )
    assert message["tool_calls"][0]["type"] == payload


@pytest.mark.parametrize("payload", PAYLOADS)
def test_payloads_in_tools_are_only_data(payload, no_marker):
    tools = [
        {
            "type": "function",
            "function": {
                "name": "run",
                "description": payload,
                "parameters": {
                    "type": "object",
                    "properties": {
                        "code": {"type": "string", "description": payload, "default": payload},
                        "n": {"type": "integer", "description": payload},
                    },
                },
            },
        }
    ]
    arguments = {"code": payload, "n": "3"}
    generation = (
        "<tool_call>" + json.dumps({"name": "run", "arguments": arguments}) + "</tool_call>"
    )
    message = parse_response(generation, SMOLLM3, prefix="", tools=tools)
    assert message["tool_calls"][0]["function"] == {
        "name": "run",
        "arguments": {"code": payload, "n": 3},
    }
    assert stream(SMOLLM3, "", list(generation), tools=tools)[0] == message
    result = trace(generation, SMOLLM3, prefix="", tools=tools)
    assert result.message == message
    assert_tiles(result)


def test_payload_as_template_json_text(no_marker):
    template_text = json.dumps(
        {
            "start_anchor": "{{ x }}",
            "fields": {"content": {"open": "{% for %}", "close": "{% endfor %}"}},
        }
    )
    message = parse_response(
        "{% for %}__import__('os').system('touch /tmp/pwned'){% endfor %}", template_text, prefix=""
    )
    assert message == {"content": "__import__('os').system('touch /tmp/pwned')"}


# -- 4. malformed model output ----------------------------------------------------------

GOOD = (
    "<think>\nI should greet the user\n</think>\n\n"
    '<tool_call>{"name": "greet_user", "arguments": {"greeting": "Hi!"}}</tool_call>\n'
    "Done.<|im_end|>"
)


def parse_or_error(template, prefix, generation, chunks=None):
    """('ok', message, region_texts) or ('error', ResponseParseError)."""
    try:
        message, events = stream(template, prefix, chunks if chunks is not None else [generation])
    except ResponseParseError as error:
        return "error", type(error).__name__, str(error), error.field
    return "ok", message, region_texts(events)


@pytest.mark.parametrize(
    "generation, expected",
    [
        ("<think>unfinished thought", {"reasoning_content": "unfinished thought"}),
        (
            '<tool_call>{"name": "f", "arguments": {"a": 1}}',
            {
                "tool_calls": [
                    {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}
                ]
            },
        ),
        ("<think>a</think>b<think>c", {"reasoning_content": "c", "content": "b"}),
        ("text then <thi", {"content": "text then <thi"}),
        ("text then </tool_call> stray close", {"content": "text then </tool_call> stray close"}),
    ],
)
def test_unclosed_regions_keep_their_text(generation, expected):
    for chunks in ([generation], list(generation)):
        message, _ = stream(SMOLLM3, "", chunks)
        assert message == {"role": "assistant", **expected}
    result = trace(generation, SMOLLM3, prefix="")
    assert result.error is None
    assert_tiles(result)


@pytest.mark.parametrize(
    "body",
    [
        '{"name": "f", "arguments": {"a": }}',
        '{"name": "f", "arguments": {"a": 1}',
        "not json at all",
        '{"name": "f\x00", "arguments": {"a": "\ufffd"}',
        "",
    ],
)
def test_invalid_tool_call_json_is_a_documented_error_naming_the_field(body):
    generation = f"before<tool_call>{body}</tool_call>after"
    with pytest.raises(ResponseParseError) as caught:
        parse_response(generation, SMOLLM3, prefix="")
    error = caught.value
    assert error.field == "tool_calls"
    assert str(error).startswith("fields.tool_calls:")
    assert error.text == body
    assert generation[error.offset : error.offset + len(body)] == body
    for chunks in (list(generation), chunked(generation, 3)):
        with pytest.raises(ResponseParseError) as streamed:
            stream(SMOLLM3, "", chunks)
        assert str(streamed.value) == str(error)
    result = trace(generation, SMOLLM3, prefix="")
    assert result.error is not None and result.error.field == "tool_calls"
    assert_tiles(result)
    assert result.spans[0].text == "before"


@pytest.mark.parametrize("template", [SMOLLM3, QWEN3_CODER], ids=["literal", "regex"])
def test_a_delimiter_split_at_every_position(template):
    if template is SMOLLM3:
        generation = GOOD
    else:
        generation = (
            "Let me check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
            "</function>\n</tool_call>\nDone.<|im_end|>"
        )
    expected = parse_or_error(template, "", generation)
    assert expected[0] == "ok"
    for i in range(len(generation) + 1):
        assert (
            parse_or_error(template, "", generation, [generation[:i], generation[i:]]) == expected
        ), i
    for i in range(1, len(generation)):
        for j in range(i + 1, min(i + 12, len(generation))):
            pieces = [generation[:i], generation[i:j], generation[j:]]
            assert parse_or_error(template, "", generation, pieces) == expected, (i, j)
    result = trace(generation, template, prefix="", chunks=list(generation))
    assert_tiles(result)
    for snapshot in result.snapshots:
        assert "".join(span.text for span in snapshot.spans) == generation[: snapshot.chunk + 1]


def test_delimiter_split_across_prefix_and_generation():
    full = "<|im_start|>assistant\n<think>abc</think>xyz"
    for i in range(len("<|im_start|>assistant\n"), len(full) + 1):
        prefix, generation = full[:i], full[i:]
        message, _ = stream(SMOLLM3, prefix, list(generation))
        assert message == {"role": "assistant", "reasoning_content": "abc", "content": "xyz"}, i
        result = trace(generation, SMOLLM3, prefix=prefix)
        assert result.message == message
        assert_tiles(result)


ODD_CHARACTERS = (
    "\ufffd\x00\x01\x07\x08\x1b[31m\x7f\x85\u2028\u2029\u200b\ufeff\U0001f600\udcff\x0b\x0c\r"
)


@pytest.mark.parametrize("template", [SMOLLM3, QWEN3_CODER], ids=["literal", "regex"])
def test_replacement_nul_and_control_characters(template):
    odd = ODD_CHARACTERS
    generation = (
        f"<think>x{odd}y</think>{odd}<tool_call>"
        + json.dumps({"name": "f", "arguments": {"s": "x" + odd + "y"}})
        + f"</tool_call>z{odd}<thi\x00nk>w<|im_end|>"
    )
    outcome = parse_or_error(template, "", generation)
    assert outcome[0] == "ok"
    for chunks in (list(generation), chunked(generation, 5)):
        assert parse_or_error(template, "", generation, chunks) == outcome
    if template is SMOLLM3:
        message = outcome[1]
        assert message["reasoning_content"] == f"x{odd}y"
        assert message["tool_calls"][0]["function"]["arguments"]["s"] == "x" + odd + "y"
        assert f"z{odd}<thi\x00nk>w" in message["content"]
    result = trace(generation, template, prefix=odd + "<|im_start|>assistant\n" + odd)
    assert_tiles(result)
    assert result.prefix_tail == odd


def test_odd_characters_inside_delimiters_and_patterns():
    template = {
        "start_anchor": "\x00S\ufffd",
        "fields": {
            "reasoning_content": {"open": "\x00<t>", "close_pattern": "\ufffd+\\x00"},
            "content": {},
        },
    }
    generation = "a\x00<t>b\ufffd\ufffd\x00c"
    message, _ = stream(template, "x\x00S\ufffdq", list(generation))
    assert message == {"reasoning_content": "b", "content": "qac"}
    assert parse_response(generation, template, prefix="x\x00S\ufffdq") == message


def test_replacement_characters_from_token_decoding(small_tokenizer):
    from engine import get_response_parser

    ids = small_tokenizer.encode("<think>é😀 ok</think>done", add_special_tokens=False)
    text = small_tokenizer.decode(ids, skip_special_tokens=False)
    # Cut the ids inside the multi-byte characters: decoding the pieces gives U+FFFD.
    broken = [i for k, i in enumerate(ids) if k != 2]
    decoded = small_tokenizer.decode(broken, skip_special_tokens=False)
    message = parse_response(broken, SMOLLM3, prefix="", tokenizer=small_tokenizer)
    assert message == parse_response(decoded, SMOLLM3, prefix="")
    parser = get_response_parser(small_tokenizer, SMOLLM3, prefix="")
    for token in ids:
        parser.feed_ids([token])
    streamed, _ = parser.finalize()
    assert streamed == parse_response(text, SMOLLM3, prefix="")


@pytest.mark.parametrize("template", [SMOLLM3, QWEN3_CODER], ids=["literal", "regex"])
def test_very_long_single_line(template):
    line = ("word <tool_ < </ x" * 60_000)[: 2**20]
    assert "\n" not in line and len(line) == 2**20
    generation = f"<think>{line}</think>{line}<|im_end|>"
    one_shot = parse_or_error(template, "", generation)
    streamed = parse_or_error(template, "", generation, chunked(generation, 4096))
    assert one_shot == streamed and one_shot[0] == "ok"
    if template is SMOLLM3:
        assert one_shot[1]["reasoning_content"] == line.strip()
        assert one_shot[1]["content"] == line.strip()
    result = trace(generation, template, prefix="")
    assert_tiles(result)
    body = "".join(span.text for span in result.spans if span.kind in ("body", "discarded"))
    assert len(body) == 2 * len(line) + (0 if template is SMOLLM3 else len("<think></think>"))


def test_deeply_nested_json_is_a_documented_error():
    body = "[" * 100_000 + "]" * 100_000
    generation = f"<tool_call>{body}</tool_call>"
    with pytest.raises(ResponseParseError) as caught:
        parse_response(generation, SMOLLM3, prefix="")
    assert caught.value.field == "tool_calls"
    result = trace(generation, SMOLLM3, prefix="")
    assert_tiles(result)


def test_an_empty_window_is_not_searched_partially():
    # The regex module crashes (segfault) on a partial search at the end of the text for
    # patterns such as `.+(?<=a)\w`; an empty window left by the prefix must not reach it.
    template = {
        "start_anchor": "<S>",
        "fields": {"tool_calls": {"open_pattern": r".+(?<=a)\w"}, "content": {}},
    }
    assert parse_response("c", template, prefix="junk<S>") == {"content": "c"}
    parser = ResponseParser(template, prefix="junk<S>")
    assert parser.feed("xa") == [] and parser.feed("b") == []
    assert parser.finalize() == (
        {},
        [
            {"type": "region_open", "field": "tool_calls"},
            {"type": "region_close", "field": "tool_calls", "value": ""},
        ],
    )


@pytest.mark.parametrize(
    "bad_value, path, message",
    [
        (
            lambda: 1,
            "fields.x.transform",
            "must be JSON data (object, array, string, number, boolean or null), got function",
        ),
        (
            ("<x>",),
            "fields.x.transform",
            "must be JSON data (object, array, string, number, boolean or null), got tuple",
        ),
        ({1: "a"}, "fields.x.transform", "keys must be strings, got int 1"),
        (
            ["a", b"b"],
            "fields.x.transform[1]",
            "must be JSON data (object, array, string, number, boolean or null), got bytes",
        ),
    ],
)
def test_a_template_dict_must_hold_json_data(bad_value, path, message):
    with pytest.raises(engine.TemplateError) as raised:
        engine.load_template(
            {"start_anchor": "<S>", "fields": {"x": {"open": "<x>", "transform": bad_value}}}
        )
    assert (raised.value.path, str(raised.value)) == (path, f"{path}: {message}")


def test_a_hostile_nesting_depth_in_a_template_is_a_template_error():
    nested: dict = {}
    inner = nested
    for _ in range(100_000):
        inner["a"] = {}
        inner = inner["a"]
    with pytest.raises(engine.TemplateError, match="nested more than 64 levels deep"):
        engine.load_template(
            {"start_anchor": "<S>", "fields": {"x": {"open": "<x>", "transform": nested}}}
        )
    text = (
        '{"start_anchor": "<S>", "fields": {"x": {"open": "<x>", "transform": '
        + "[" * 100_000
        + "]" * 100_000
        + "}}}"
    )
    with pytest.raises(engine.TemplateError, match="nested more than 64 levels deep"):
        engine.load_template(text)


def test_the_template_cache_tells_true_from_one():
    def template(repeats):
        return {"start_anchor": "<S>", "fields": {"x": {"open": "<x>", "repeats": repeats}}}

    assert engine.load_template(template(True)) is engine.load_template(
        template(True)
    )  # equal data: one entry
    with pytest.raises(
        engine.TemplateError, match="fields.x.repeats: must be true or false, got 1"
    ):
        engine.load_template(template(1))


@pytest.mark.parametrize(
    "template, call",
    [
        # The Qwen3-Coder tag pattern of tests/support/workloads.py: a lazy value between blank runs.
        (
            QWEN3_CODER_TEMPLATE,
            "<tool_call>\n<function=run>\n<parameter=lang>\npy\n</parameter>\n<parameter=code>\n",
        ),
        # templates/glm-4.5.json: a lazy key between blank runs, then the value.
        (
            load_template_file("glm-4.5").response_template,
            "<tool_call>run\n<arg_key>lang</arg_key>\n<arg_value>py</arg_value>\n<arg_key>code</arg_key>\n<arg_value>",
        ),
    ],
    ids=["qwen3-coder-spec", "glm-4.5"],
)
def test_a_value_that_never_closes_costs_no_backtracking(template, call):
    # A model looping on blanks inside an argument that never closes: these tag patterns
    # backtrack in cubic time there (4,000 blanks took 68 s). No tag ends after the last
    # closing text, so the search stops there; within the budget it must finish.
    message = parse_response(call + " " * 20_000, template, prefix="", regex_timeout=BUDGET)
    assert message["tool_calls"] == [
        {"type": "function", "function": {"name": "run", "arguments": {"lang": "py"}}}
    ]


def test_the_template_cache_finds_equal_data_whatever_refers_to_it():
    # marshal's default format marks objects referred to more than once, so a key taken
    # while a caller holds a sub-dict differed from one taken without (found in review).
    template = json.loads('{"start_anchor": "<S>", "fields": {"content": {"content": "text"}}}')
    first = engine.load_template(template)
    content_spec = template["fields"]["content"]  # one more reference to a sub-dict
    assert engine.load_template(template) is first
    assert content_spec == {"content": "text"}


def test_string_subclasses_in_a_template_dict_are_strings():
    import numpy

    class Tag(str):
        pass

    expected = {"reasoning_content": "r", "content": "answer"}
    for make in (numpy.str_, Tag):  # delimiters read from a table are numpy.str_ (found in review)
        template = {
            "start_anchor": "<S>",
            "fields": {
                "reasoning_content": {"open": make("<think>"), "close": make("</think>")},
                "content": {},
            },
        }
        assert parse_response("<think>r</think>answer", template, prefix="") == expected
