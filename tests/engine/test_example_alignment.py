"""Template inference learns an output format from two example outputs by aligning each
expected message with its text: one test per format fact real models write, each with invented
markers, learnt through `infer_template` from a chat template that renders no call and no
reasoning (tests/support/chat_templates/listed-tools.jinja), with expected messages and with
outputs and tools only; the learnt template then reads a fresh output of the same format.
"""

from __future__ import annotations

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from engine import infer_template, parse_response
from engine.chat_templates.align import align
from engine.chat_templates.candidates import LEARNT_FROM_EXAMPLES
from engine.chat_templates.evidence import Example
from tests.support.paths import CHAT_TEMPLATE_FIXTURES

PREFIX = "<|user|>Weather?<|eot|>\n<|assistant|>"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}},
        },
    },
]


def call(name: str, arguments: dict) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def message(content: str = "", reasoning: str = "", calls: list | None = None) -> dict:
    found: dict = {"role": "assistant"}
    if reasoning:
        found["reasoning_content"] = reasoning
    if calls:
        found["tool_calls"] = calls
    if content:
        found["content"] = content
    return found


def learnt(outputs: list[tuple[str, dict]], with_expected: bool) -> dict:
    """The template inferred from listed-tools.jinja with the outputs as examples."""
    examples = [
        {"prefix": PREFIX, "output": output, "tools": TOOLS}
        | ({"expected": expected} if with_expected else {})
        for output, expected in outputs
    ]
    text = (CHAT_TEMPLATE_FIXTURES / "listed-tools.jinja").read_text(encoding="utf-8")
    result = infer_template(text, examples=examples)
    assert result.unexplained == {}
    return result.template


def read(template: dict, output: str) -> dict:
    return parse_response(output, template, prefix=PREFIX, tools=TOOLS)


BOTH = pytest.mark.parametrize("with_expected", [True, False], ids=["expected", "outputs-only"])


@BOTH
def test_fact_1_a_call_list_opened_by_a_plain_word_runs_to_the_end(with_expected):
    template = learnt(
        [
            (
                'Let me look. calls[{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]',
                message("Let me look.", calls=[call("get_weather", {"city": "Paris", "days": 3})]),
            ),
            (
                'calls[{"name": "get_time", "arguments": {"tz": "UTC"}}, {"name": "get_weather", "arguments": {"city": "Rome", "days": 1}}]',
                message(
                    calls=[
                        call("get_time", {"tz": "UTC"}),
                        call("get_weather", {"city": "Rome", "days": 1}),
                    ]
                ),
            ),
        ],
        with_expected,
    )
    assert template["fields"]["tool_calls"]["open"] == "calls"
    assert "close" not in template["fields"]["tool_calls"]
    assert read(
        template, 'On it. calls[{"name": "get_time", "arguments": {"tz": "CET"}}]'
    ) == message("On it.", calls=[call("get_time", {"tz": "CET"})])


@BOTH
@pytest.mark.parametrize(
    "lead, between",
    [("", "\n"), ("", ""), ("<|zx|>", "\n")],
    ids=["one-a-line", "back-to-back", "after-one-special-token"],
)
def test_fact_2_bare_json_calls_with_no_marker(with_expected, lead, between):
    template = learnt(
        [
            (
                lead + '{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}',
                message(calls=[call("get_weather", {"city": "Paris", "days": 3})]),
            ),
            (
                lead
                + '{"name": "get_time", "parameters": {"tz": "UTC"}}'
                + between
                + '{"name": "get_weather", "parameters": {"city": "Rome", "days": 1}}',
                message(
                    calls=[
                        call("get_time", {"tz": "UTC"}),
                        call("get_weather", {"city": "Rome", "days": 1}),
                    ]
                ),
            ),
        ],
        with_expected,
    )
    assert template["fields"]["tool_calls"]["transform"]["function"] == {
        "name": "{content.name}",
        "arguments": "{content.parameters}",
    }
    fresh = (
        lead
        + '{"name": "get_time", "parameters": {"tz": "CET"}}'
        + between
        + '{"name": "get_time", "parameters": {"tz": "PST"}}'
    )
    assert read(template, fresh) == message(
        calls=[call("get_time", {"tz": "CET"}), call("get_time", {"tz": "PST"})]
    )


@BOTH
def test_fact_3_a_namespaced_indexed_name_in_the_opener_then_json_arguments(with_expected):
    template = learnt(
        [
            (
                '<|q1|>ns.get_weather:0<|q2|>{"city": "Paris", "days": 3}<|q3|>',
                message(calls=[call("get_weather", {"city": "Paris", "days": 3})]),
            ),
            (
                '<|q1|>ns.get_time:0<|q2|>{"tz": "UTC"}<|q3|><|q1|>ns.get_weather:1<|q2|>{"city": "Rome", "days": 1}<|q3|>',
                message(
                    calls=[
                        call("get_time", {"tz": "UTC"}),
                        call("get_weather", {"city": "Rome", "days": 1}),
                    ]
                ),
            ),
        ],
        with_expected,
    )
    assert template["fields"]["tool_calls"]["open_pattern"] == (
        r"<\|q1\|>ns\.(?P<name>[A-Za-z_][\w\-]*(?:\.[\w\-]+)*):\d+<\|q2\|>"
    )
    fresh = (
        '<|q1|>ns.get_time:0<|q2|>{"tz": "CET"}<|q3|><|q1|>ns.get_time:7<|q2|>{"tz": "PST"}<|q3|>'
    )
    assert read(template, fresh) == message(
        calls=[call("get_time", {"tz": "CET"}), call("get_time", {"tz": "PST"})]
    )


@BOTH
def test_fact_4_a_bespoke_key_value_syntax_with_unquoted_strings(with_expected):
    template = learnt(
        [
            (
                "get_weather{city:Paris,days:3}",
                message(calls=[call("get_weather", {"city": "Paris", "days": 3})]),
            ),
            (
                "Sure thing. get_time{tz:UTC} get_weather{city:Rome,days:1}",
                message(
                    "Sure thing.",
                    calls=[
                        call("get_time", {"tz": "UTC"}),
                        call("get_weather", {"city": "Rome", "days": 1}),
                    ],
                ),
            ),
        ],
        with_expected,
    )
    field = template["fields"]["tool_calls"]
    assert (field["content"], field["close"]) == ("xml-inline", "}")
    assert read(template, "get_weather{city:New York,days:12}") == message(
        calls=[call("get_weather", {"city": "New York", "days": 12})]
    )


@BOTH
def test_arguments_as_key_and_value_tags_written_in_another_order_than_the_message(with_expected):
    template = learnt(
        [
            (
                "Checking.\n<zc>get_weather\n<zk>days</zk><zv>3</zv>\n<zk>city</zk><zv>Paris</zv>\n</zc>",
                message("Checking.", calls=[call("get_weather", {"city": "Paris", "days": 3})]),
            ),
            (
                "<zc>get_time\n<zk>tz</zk><zv>UTC</zv>\n</zc>\n"
                "<zc>get_weather\n<zk>city</zk><zv>Rome</zv>\n<zk>days</zk><zv>1</zv>\n</zc>",
                message(
                    calls=[
                        call("get_time", {"tz": "UTC"}),
                        call("get_weather", {"city": "Rome", "days": 1}),
                    ]
                ),
            ),
        ],
        with_expected,
    )
    assert template["fields"]["tool_calls"]["content_args"] == {
        "tag_pattern": r"\s*<zk>(?P<key>[A-Za-z_][\w.\-]*)</zk>\s*<zv>\n?(?P<value>.*?)\n?</zv>"
    }
    fresh = "<zc>get_weather\n<zk>city</zk><zv>New York</zv>\n<zk>days</zk><zv>2</zv>\n</zc>"
    assert read(template, fresh) == message(
        calls=[call("get_weather", {"city": "New York", "days": 2})]
    )


@BOTH
def test_a_tag_around_each_pair_is_learnt_from_calls_of_one_argument_each(with_expected):
    template = learnt(
        [
            (
                'Checking.\n<zq:calls>\n<zinvoke name="get_weather">\n<zparam name="city">Paris</zparam>\n'
                "</zinvoke>\n</zq:calls>",
                message("Checking.", calls=[call("get_weather", {"city": "Paris"})]),
            ),
            (
                '<zq:calls>\n<zinvoke name="get_time">\n<zparam name="tz">UTC</zparam>\n</zinvoke>\n'
                "</zq:calls>",
                message(calls=[call("get_time", {"tz": "UTC"})]),
            ),
        ],
        with_expected,
    )
    field = template["fields"]["tool_calls"]
    # No example writes two calls in a row: the markers after every lone call's close may
    # follow it, and a comma or semicolon before the next call's open is taken as their
    # separator.
    assert (field["open_pattern"], field["close_pattern"]) == (
        r'<zinvoke\s*name="(?P<name>[A-Za-z_][\w\-]*(?:\.[\w\-]+)*)">\s*',
        r'</zinvoke>(?:\s*</zq:calls>)?(?:\s*[,;](?=\s*(?:<zinvoke\s*name=")))?',
    )
    fresh = (
        '<zq:calls>\n<zinvoke name="get_weather">\n<zparam name="city">New York</zparam>\n'
        '<zparam name="days">2</zparam>\n</zinvoke>\n<zinvoke name="get_time">\n'
        '<zparam name="tz">CET</zparam>\n</zinvoke>\n</zq:calls>'
    )
    assert read(template, fresh) == message(
        calls=[
            call("get_weather", {"city": "New York", "days": 2}),
            call("get_time", {"tz": "CET"}),
        ]
    )


@BOTH
@pytest.mark.parametrize(
    "opener, closer, answer_open, answer_close",
    [("<zq>", "</zq>", "<zans>", "</zans>"), ("[ZQ]", "[/ZQ]", "", "")],
    ids=["markup", "brackets"],
)
def test_fact_5_reasoning_and_answer_tags_the_chat_template_never_renders(
    with_expected, opener, closer, answer_open, answer_close
):
    template = learnt(
        [
            (
                f"{opener}Rain is likely.{closer}{answer_open}Take an umbrella.{answer_close}<|eot|>",
                message("Take an umbrella.", "Rain is likely."),
            ),
            (
                f"{opener}It is sunny there.{closer}\n{answer_open}No umbrella today.{answer_close}<|eot|>",
                message("No umbrella today.", "It is sunny there."),
            ),
        ],
        with_expected,
    )
    assert template["fields"]["reasoning_content"] == {"open": opener, "close": closer}
    fresh = f"{opener}Hmm.{closer}{answer_open}Fine.{answer_close}<|eot|>"
    assert read(template, fresh) == message("Fine.", "Hmm.")


@BOTH
def test_fact_6_a_channel_header_between_regions_is_consumed(with_expected):
    template = learnt(
        [
            (
                "<|zs|>muse<|zm|>The user wants weather.<|ze|><|zs|>reply<|zm|>It is sunny.<|eot|>",
                message("It is sunny.", "The user wants weather."),
            ),
            (
                "<|zs|>muse<|zm|>Short one.<|ze|><|zs|>reply<|zm|>Cold today.<|eot|>",
                message("Cold today.", "Short one."),
            ),
        ],
        with_expected,
    )
    assert template["fields"]["reasoning_content"] == {
        "open": "<|zs|>muse<|zm|>",
        "close": "<|ze|>",
    }
    # The header's word is any word between its two markers (the reasoning's own header,
    # the longer match at the same place, still opens the reasoning).
    close = template["fields"]["content"]["close_pattern"]
    assert regex.match(close, "<|zs|>reply<|zm|>").group() == "<|zs|>reply<|zm|>"
    fresh = "<|zs|>muse<|zm|>Hm.<|ze|><|zs|>reply<|zm|>Warm.<|eot|>"
    assert read(template, fresh) == message("Warm.", "Hm.")
    unseen = "<|zs|>muse<|zm|>Hm.<|ze|><|zs|>final<|zm|>Warm.<|eot|>"
    assert read(template, unseen) == message("Warm.", "Hm.")


@BOTH
def test_fact_7_python_style_calls_without_a_list(with_expected):
    template = learnt(
        [
            ("get_time()", message(calls=[call("get_time", {})])),
            (
                'get_weather(city="Rome", days=1)\nget_time(tz="UTC")',
                message(
                    calls=[
                        call("get_weather", {"city": "Rome", "days": 1}),
                        call("get_time", {"tz": "UTC"}),
                    ]
                ),
            ),
        ],
        with_expected,
    )
    assert read(template, 'get_weather(city="Oslo", days=4)') == message(
        calls=[call("get_weather", {"city": "Oslo", "days": 4})]
    )


@BOTH
def test_fact_7_json_call_objects_under_other_keys(with_expected):
    template = learnt(
        [
            (
                '<zc>{"tool": "get_weather", "args": {"city": "Paris", "days": 3}}</zc>',
                message(calls=[call("get_weather", {"city": "Paris", "days": 3})]),
            ),
            (
                'One moment.<zc>{"tool": "get_time", "args": {"tz": "UTC"}}</zc>',
                message("One moment.", calls=[call("get_time", {"tz": "UTC"})]),
            ),
        ],
        with_expected,
    )
    assert template["fields"]["tool_calls"]["transform"]["function"] == {
        "name": "{content.tool}",
        "arguments": "{content.args}",
    }
    assert read(template, '<zc>{"tool": "get_time", "args": {"tz": "CET"}}</zc>') == message(
        calls=[call("get_time", {"tz": "CET"})]
    )


@BOTH
def test_fact_8_an_answer_in_its_own_tags_after_the_reasoning(with_expected):
    template = learnt(
        [
            (
                "<zr>Check the sky.</zr>\n<zanswer>Clear skies.</zanswer>",
                message("Clear skies.", "Check the sky."),
            ),
            (
                "<zr>Look it up.</zr><zanswer>Rain at noon.</zanswer>",
                message("Rain at noon.", "Look it up."),
            ),
        ],
        with_expected,
    )
    assert {"<zanswer>", "</zanswer>"} <= set(template["fields"]["content"]["close"])
    assert read(template, "<zr>Hm.</zr><zanswer>Snow.</zanswer>") == message("Snow.", "Hm.")


def test_without_expected_messages_every_assumption_is_a_finding_quoting_its_text():
    text = (CHAT_TEMPLATE_FIXTURES / "listed-tools.jinja").read_text(encoding="utf-8")
    outputs = [
        "<zr>Check the sky.</zr>\n<zanswer>Clear skies.</zanswer>",
        "<zr>Look it up.</zr><zanswer>Rain at noon.</zanswer>",
    ]
    examples = [{"prefix": PREFIX, "output": output, "tools": TOOLS} for output in outputs]
    result = infer_template(text, examples=examples)
    assumed = [finding for finding in result.findings if finding.key == "assumed"]
    assert [(finding.value, finding.renders[0].label) for finding in assumed] == [
        (
            "example 1: 'Check the sky.' is taken for reasoning: the leading text, before "
            "'</zr>', which every example with more text after it writes there",
            "example 1: the output",
        ),
        (
            "example 1: 'Clear skies.' is taken for the answer (words no other part explains)",
            "example 1: the output",
        ),
        (
            "example 2: 'Look it up.' is taken for reasoning: the leading text, before "
            "'</zr>', which every example with more text after it writes there",
            "example 2: the output",
        ),
        (
            "example 2: 'Rain at noon.' is taken for the answer (words no other part explains)",
            "example 2: the output",
        ),
    ]


def test_the_aligner_locates_each_part_of_the_expected_message():
    example = Example(
        0,
        "",
        'Ponder first.</zr> Here. calls[{"name": "get_time", "arguments": {"tz": "UTC"}}]',
        TOOLS,
        message("Here.", "Ponder first.", [call("get_time", {"tz": "UTC"})]),
    )
    found = align(example)
    assert [(span.kind, found.text[span.start : span.end]) for span in found.spans] == [
        ("reasoning", "Ponder first."),
        ("content", "Here."),
        ("calls", '[{"name": "get_time", "arguments": {"tz": "UTC"}}]'),
    ]
    assert found.spans[2].reading.shape == "json-list"


def test_a_template_that_cannot_explain_an_example_says_where():
    text = (CHAT_TEMPLATE_FIXTURES / "listed-tools.jinja").read_text(encoding="utf-8")
    examples = [
        {
            "prefix": PREFIX,
            "output": "Sunny. Warm.<|eot|>",
            "expected": {"content": "Sunny."},
        }
    ]
    result = infer_template(text, examples=examples)
    assert [(span.start, span.end) for span in result.unexplained[0]] == [(7, 12)]
    assert (
        result.unexplained[0][0].why
        == "read into content, which the expected message does not hold"
    )


def test_the_markers_around_an_examples_calls_are_not_content_closes():
    # A chat template that renders no call (it lists the tools): the output given teaches the
    # calls (Python-style, no list around them), and the markers around its call stay the
    # call's own, not markers the content drops (which would take an unread call as text,
    # silently).
    text = (CHAT_TEMPLATE_FIXTURES / "listed-tools.jinja").read_text(encoding="utf-8")
    examples = [
        {
            "prefix": PREFIX,
            "output": 'Checking.<|calls|>get_weather(city="Oslo", days=2)<|/calls|><|eot|>',
            "tools": TOOLS,
        }
    ]
    result = infer_template(text, examples=examples)
    assert [each.description for each in result.candidates] == [LEARNT_FROM_EXAMPLES]
    assert result.template["fields"]["content"] == {"close": "<|eot|>"}
    assert read(result.template, 'Sure.<|calls|>get_time(tz="UTC")<|/calls|><|eot|>') == (
        message("Sure.", calls=[call("get_time", {"tz": "UTC"})])
    )


def test_calls_python_style_with_no_list_are_learnt_from_the_renders_before_any_example():
    # The renders of bare-python-calls.jinja write such calls, one and two a turn: the aligner
    # reads them as it reads example outputs, so the first candidate reads the renders and the
    # example alike, and no template is learnt from the example alone.
    text = (CHAT_TEMPLATE_FIXTURES / "bare-python-calls.jinja").read_text(encoding="utf-8")
    examples = [
        {
            "prefix": PREFIX,
            "output": 'Checking.<|calls|>get_weather(city="Oslo", days=2)<|/calls|><|eot|>',
            "tools": TOOLS,
        }
    ]
    result = infer_template(text, examples=examples)
    assert [
        (each.description, each.passed, len(each.render_problems)) for each in result.candidates
    ] == [("as learnt", True, 0)]
    assert read(result.template, 'Sure.<|calls|>get_time(tz="UTC")<|/calls|><|eot|>') == message(
        "Sure.", calls=[call("get_time", {"tz": "UTC"})]
    )


@BOTH
def test_lone_calls_teach_a_close_then_a_marker_then_a_comma_before_the_next_call(with_expected):
    template = learnt(
        [
            (
                'Sunny.\nqvx get_weather(city="Rome") <|zq|>',
                message("Sunny.", calls=[call("get_weather", {"city": "Rome"})]),
            ),
            ('qvx get_time(tz="UTC") <|zq|>', message(calls=[call("get_time", {"tz": "UTC"})])),
        ],
        with_expected,
    )
    assert read(
        template,
        'Both.\nqvx get_time(tz="CET") <|zq|>, qvx get_weather(city="Oslo", days=2) <|zq|>',
    ) == message(
        "Both.",
        calls=[call("get_time", {"tz": "CET"}), call("get_weather", {"city": "Oslo", "days": 2})],
    )


@BOTH
def test_a_header_whose_word_varies_between_examples_becomes_a_pattern(with_expected):
    template = learnt(
        [
            (
                'Looking.<|zs|>to=lmq<|zm|>{"name": "get_weather", "arguments": {"city": "Rome"}}',
                message("Looking.", calls=[call("get_weather", {"city": "Rome"})]),
            ),
            (
                '<|zs|>to=brtvx<|zm|>{"name": "get_time", "arguments": {"tz": "UTC"}}',
                message(calls=[call("get_time", {"tz": "UTC"})]),
            ),
        ],
        with_expected,
    )
    # The calls open with the header's last marker; the rest of it, its word any word, is a
    # marker the content drops.
    assert template["fields"]["tool_calls"]["open"] == "<|zm|>"
    assert template["fields"]["content"]["close_pattern"].split("|<")[0] == r"<\|zs\|>to=[\w\-.]+"
    fresh = 'Now.<|zs|>to=qq.tools<|zm|>{"name": "get_time", "arguments": {"tz": "CET"}}'
    assert read(template, fresh) == message("Now.", calls=[call("get_time", {"tz": "CET"})])


@BOTH
@pytest.mark.parametrize("lone", [False, True], ids=["two-in-a-list", "lone-calls"])
def test_calls_keyed_by_their_name_several_in_one_list(with_expected, lone):
    second = (
        ('[{"get_time": {"tz": "UTC"}}]', [call("get_time", {"tz": "UTC"})])
        if lone
        else (
            '[{"get_time": {"tz": "UTC"}}, {"get_weather": {"city": "Oslo", "days": 2}}]',
            [call("get_time", {"tz": "UTC"}), call("get_weather", {"city": "Oslo", "days": 2})],
        )
    )
    template = learnt(
        [
            (
                'Sure.<|zc|>[{"get_weather": {"city": "Rome"}}]<|/zc|>',
                message("Sure.", calls=[call("get_weather", {"city": "Rome"})]),
            ),
            (f"<|zc|>{second[0]}<|/zc|>", message(calls=second[1])),
        ],
        with_expected,
    )
    fresh = '<|zc|>[{"get_time": {"tz": "CET"}}, {"get_time": {}}, {"get_weather": {"city": "X"}}]<|/zc|>'
    assert read(template, fresh) == message(
        calls=[
            call("get_time", {"tz": "CET"}),
            call("get_time", {}),
            call("get_weather", {"city": "X"}),
        ]
    )


# The final turns a chat template that writes no reasoning renders whole, as labelled outputs.
TURNS_WITHOUT_REASONING = [
    "first turn: an answer",
    "first turn: one call of zq_fn_alpha",
    "first turn: one call of zq_fn_alpha with other arguments",
    "first turn: one call of zq_fn_beta",
    "first turn: two calls, zq_fn_alpha then zq_fn_beta",
    "first turn: text",
]


def labelled_renders_of(fixture: str) -> tuple[str, list]:
    """(the chat template text, its labelled renders) of a chat template of the fixtures."""
    from engine.chat_templates.evidence import labelled_renders
    from engine.chat_templates.learner import probes_for

    chat_template = (CHAT_TEMPLATE_FIXTURES / fixture).read_text(encoding="utf-8")
    _, probes = probes_for(chat_template, "", "", None)
    return chat_template, labelled_renders(probes)


def test_the_renders_are_labelled_outputs_each_with_the_message_it_was_rendered_from():
    from engine.chat_templates.evidence import message_differences
    from engine.chat_templates.probes import ALPHA, ANSWER, LEAD

    chat_template, rendered = labelled_renders_of("keyed-calls.jinja")
    # Every final message the chat template writes whole (it drops reasoning: not that one).
    assert [example.what.split("(")[0].strip() for example in rendered] == TURNS_WITHOUT_REASONING
    answer, lead = rendered[0], rendered[-1]
    assert (answer.output, answer.expected) == (f"{ANSWER}<|eot|>\n", {"content": ANSWER})
    assert answer.label == f"the render (first turn: an answer ({ANSWER!r}))"
    assert lead.output.startswith(f'{LEAD}<|calls|>[{{"{ALPHA}": ')
    assert lead.expected == {
        "content": LEAD,
        "tool_calls": [
            {
                "type": "function",
                "function": {
                    "name": ALPHA,
                    "arguments": {"zq_key_a": "zq val 1", "zq_num": 73519},
                },
            }
        ],
    }
    # Every one is read back by the template the aligner learns from them all.
    result = infer_template(chat_template)
    assert result.passed
    for example in rendered:
        message = parse_response(example.output, result.template, prefix=example.prefix)
        assert message_differences(example.expected, message) == [], example.label


def test_outputs_that_show_no_message_are_refused_in_words_that_fit_renders_too():
    """The aligner reads renders as well as examples: its refusal names neither."""
    from engine.chat_templates.example_fields import NotLearnt, learn_template

    base = {
        "defaults": {"role": "assistant"},
        "start_anchor": "<|assistant|>",
        "fields": {"content": {"close": "<|eot|>"}},
    }
    unrelated = Example(
        0, PREFIX, "Sunny.<|eot|>", expected={"role": "assistant", "content": "Rain."}
    )
    with pytest.raises(NotLearnt) as refused:
        learn_template([unrelated], base)
    assert str(refused.value) == "no output shows where its message stands"


# -- argument values read without a message ----------------------------------------------------

PLAN = {
    "city": {"type": "string"},
    "stay": {
        "type": "object",
        "properties": {"nights": {"type": "integer"}, "hotel": {"type": "string"}},
    },
}


@pytest.mark.parametrize(
    ("written", "between", "value"),
    [
        (
            "<p=city>Oslo</p><p=stay><p=nights>3</p><p=hotel>Lima</p></p>",
            ">",
            "<p=nights>3</p><p=hotel>Lima</p>",
        ),
        (
            '<p name="city" s="1">Oslo</p><p name="stay" s="0"><p name="nights" s="0">3</p>'
            '<p name="hotel" s="1">Lima</p></p>',
            '" s="0">',
            '<p name="nights" s="0">3</p><p name="hotel" s="1">Lima</p>',
        ),
    ],
    ids=["plain-tags", "tags-with-attributes"],
)
def test_without_a_message_an_object_parameter_written_as_tags_in_its_tag_is_one_pair(
    written, between, value
):
    """The tool's schema says `stay` is an object: its inner tags are its value, not a run of
    pairs that ends the outer ones."""
    from engine.chat_templates.argument_readers import read_pairs

    pairs = read_pairs(written, 0, None, PLAN)
    assert [(pair.key, pair.nested) for pair in pairs.pairs] == [("city", False), ("stay", True)]
    stay = pairs.pairs[1]
    assert (stay.between, stay.value, pairs.end) == (between, value, len(written) - len("</p>"))


def test_a_value_also_written_in_a_tags_attribute_is_read_where_the_value_stands():
    """``string="false">false``: the first ``false`` is the attribute's, with a word before it
    (``string``) that no marker explains; the value is the second."""
    from engine.chat_templates.argument_readers import read_pairs

    written = '<arg name="exact" string="false">false</arg>'
    pairs = read_pairs(written, 0, {"exact": False})
    pair = pairs.pairs[0]
    assert (pair.between, pair.value, pairs.end) == ('" string="false">', "false", 38)


@given(
    code=st.sampled_from(["print('{}')", 'f("{}", 2)', "len({})", "say ({})"]),
    word=st.text(alphabet="abcxyz", min_size=1, max_size=8),
    syntax=st.sampled_from(["{city:%s,days:3}", "<a=city>%s</a><a=days>3</a>"]),
)
def test_without_a_message_a_bare_value_keeps_the_parentheses_it_opens(code, word, syntax):
    """A bare value (no quotes around it) runs to a comma, a closing bracket or a tag; a
    parenthesis the value opens, it closes, so code such as ``print('hi')`` stays whole."""
    from engine.chat_templates.argument_readers import read_pairs

    value = code.format(word)
    pairs = read_pairs(
        "x" + syntax % value, 1, None, TOOLS[0]["function"]["parameters"]["properties"]
    )
    assert [(pair.key, pair.value) for pair in pairs.pairs] == [("city", value), ("days", "3")]


def test_the_renders_and_the_examples_are_also_aligned_together_into_one_candidate():
    # keyed-calls.jinja renders calls (two in a turn too) and drops reasoning; the examples
    # write reasoning in tags it never renders. Aligned together, one template reads all of it.
    from engine.chat_templates.candidates import LEARNT_FROM_ALL, candidates
    from engine.chat_templates.evidence import labelled_renders, read_examples
    from engine.chat_templates.examples import learn_from_renders
    from engine.chat_templates.judge import check_examples
    from engine.chat_templates.learner import learn

    chat_template = (CHAT_TEMPLATE_FIXTURES / "keyed-calls.jinja").read_text(encoding="utf-8")
    examples = read_examples(
        [
            {"prefix": PREFIX, "output": output, "tools": TOOLS, "expected": expected}
            for output, expected in (
                (
                    '<think>Need weather.</think><|calls|>[{"get_weather": {"city": "Paris", '
                    '"days": 2}}]<|/calls|><|eot|>',
                    message(
                        "", "Need weather.", [call("get_weather", {"city": "Paris", "days": 2})]
                    ),
                ),
                (
                    '<think>Time.</think><|calls|>[{"get_time": {"tz": "UTC"}}]<|/calls|><|eot|>',
                    message("", "Time.", [call("get_time", {"tz": "UTC"})]),
                ),
            )
        ]
    )
    parts = learn(chat_template, "", "", None)
    learn_from_renders(parts, examples=examples)
    joint = parts.evidence_template
    assert joint is not None and (LEARNT_FROM_ALL, joint) in candidates(parts)
    assert joint["fields"]["reasoning_content"] == {"open": "<think>", "close": "</think>"}
    # It reads every render and every example back.
    assert check_examples(joint, labelled_renders(parts.probes)) == []
    assert check_examples(joint, examples) == []
    # Learnt from the renders alone, the reasoning is not there: that reading is the first
    # candidate's own (the calls were learnt by aligning the renders), so no candidate of its own.
    assert parts.render_template is None
    assert "reasoning_content" not in candidates(parts)[0][1]["fields"]
    # And the call syntax's finding says which evidence taught it.
    [calls] = [f for f in parts.evidence_findings if f.key == "fields.tool_calls"]
    assert calls.how.startswith("the renders and the examples write their calls as the name")


NESTED_VALUES = st.recursive(
    st.one_of(
        st.integers(-1000, 1000),
        st.booleans(),
        st.none(),
        st.text(alphabet="ab {}[]\"',:\\é", max_size=6),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text("xyz", max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


def _depth(value) -> int:
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


@given(value=NESTED_VALUES)
def test_a_bracketed_value_is_matched_whole_up_to_its_nesting_depth(value):
    # A list or an object written as a Python-style argument value (`key=[...]`, `key={...}`):
    # the value pattern takes it whole, brackets inside its strings included, as deep as
    # `bracketed`'s depth; never more than the value (a comma after it ends it).
    import json

    from engine.chat_templates.argument_readers import bracketed

    written = json.dumps(value, ensure_ascii=False)
    pattern = regex.compile(bracketed(6))
    found = pattern.match(written + ", next=1")
    if 1 <= _depth(value) <= 6:
        assert found is not None and found.group() == written
    elif _depth(value) > 6:
        assert found is None or found.group() != written


@BOTH
def test_a_call_id_and_markers_between_the_name_and_its_json_arguments(with_expected):
    # A call id stands between two markers after the name; the ids count up, and the fresh
    # output's ids share fewer leading digits with the examples'. No marker closes a call: the
    # next call's open, the end of turn or the end of the output does.
    template = learnt(
        [
            (
                '[TOOL_CALLS]get_weather[CALL_ID]call00001[ARGS]{"city": "Paris", "days": 3}<|eot|>',
                message(calls=[call("get_weather", {"city": "Paris", "days": 3})]),
            ),
            (
                '[TOOL_CALLS]get_time[CALL_ID]call00002[ARGS]{"tz": "UTC"}'
                '[TOOL_CALLS]get_weather[CALL_ID]call00003[ARGS]{"city": "Oslo"}<|eot|>',
                message(
                    calls=[call("get_time", {"tz": "UTC"}), call("get_weather", {"city": "Oslo"})]
                ),
            ),
        ],
        with_expected,
    )
    assert template["fields"]["tool_calls"]["content"] == "json"
    fresh = (
        '[TOOL_CALLS]get_weather[CALL_ID]call00117[ARGS]{"city": "Rome", "days": 1}'
        '[TOOL_CALLS]get_time[CALL_ID]call00118[ARGS]{"tz": "CET"}<|eot|>'
    )
    assert read(template, fresh) == message(
        calls=[call("get_weather", {"city": "Rome", "days": 1}), call("get_time", {"tz": "CET"})]
    )
    # The end of the output closes the last call too.
    assert read(template, fresh.removesuffix("<|eot|>"))["tool_calls"][1] == call(
        "get_time", {"tz": "CET"}
    )


def test_a_turn_after_a_reasoning_opener_the_prompt_pre_writes_is_a_labelled_output():
    # forced-open.jinja's prompt ends in "[reflect]\n", which a finished turn never writes: each
    # turn without reasoning follows the prompt without it (the aligner can learn from them).
    _, rendered = labelled_renders_of("forced-open.jinja")
    assert [example.what.split("(")[0].strip() for example in rendered] == TURNS_WITHOUT_REASONING
    assert {example.prefix for example in rendered} == {
        "<<user>>\nzq question one<<done>>\n<<assistant>>\n"
    }
    assert rendered[1].output == (
        '<fn name="zq_fn_alpha">{"zq_key_a": "zq val 1", "zq_num": 73519}</fn><<done>>\n'
    )


def test_evidence_that_contradicts_the_rest_is_left_out_and_named():
    # The third output's expected message says another answer than its text: no template reads
    # all three. The one learnt from the two that agree is kept, and the third is the one left.
    from engine.chat_templates.evidence import read_examples
    from engine.chat_templates.example_fields import learn_from_most

    examples = read_examples(
        [
            {"prefix": PREFIX, "output": output, "tools": TOOLS, "expected": expected}
            for output, expected in (
                (
                    '<r>Need it.</r><zc>{"name": "get_time", "arguments": {"tz": "UTC"}}</zc><|eot|>',
                    message("", "Need it.", [call("get_time", {"tz": "UTC"})]),
                ),
                ("<r>Easy.</r>Hello!<|eot|>", message("Hello!", "Easy.")),
                ("<r>Look.</r>It is sunny.<|eot|>", message("It is rainy.", "Look.")),
            )
        ]
    )
    base = {
        "defaults": {"role": "assistant"},
        "start_anchor": "<|assistant|>",
        "fields": {"content": {"close": "<|eot|>"}},
    }
    learnt, taught = learn_from_most(examples, base, leave_out_each=False)
    assert [example.label for example in taught] == ["example 1", "example 2"]
    assert learnt.template["fields"]["reasoning_content"] == {"open": "<r>", "close": "</r>"}
    assert read(learnt.template, '<r>Hm.</r><zc>{"name": "get_time", "arguments": {}}</zc>') == (
        message("", "Hm.", [call("get_time", {})])
    )


@BOTH
def test_fact_4_strings_between_marks_of_the_formats_own_and_keys_without_quotes(with_expected):
    # A dialect of JSON: keys bare, strings between « and » (a comma inside one is text).
    template = learnt(
        [
            (
                "<|call|>get_weather{city:«Paris»,days:3}<|/call|><|eot|>",
                message(calls=[call("get_weather", {"city": "Paris", "days": 3})]),
            ),
            (
                "Sure. <|call|>get_time{tz:«UTC, then CET»}<|/call|><|eot|>",
                message("Sure.", calls=[call("get_time", {"tz": "UTC, then CET"})]),
            ),
        ],
        with_expected,
    )
    field = template["fields"]["tool_calls"]
    assert (field["content"], field["content_args"]) == (
        "json",
        {"unquoted_keys": True, "string_delims": [["«", "»"]]},
    )
    assert read(template, "<|call|>get_weather{city:«New York»,days:12}<|/call|><|eot|>") == (
        message(calls=[call("get_weather", {"city": "New York", "days": 12})])
    )


@BOTH
def test_fact_4_every_value_between_tag_marks_is_cast_by_the_tools_schema(with_expected):
    # Numbers are written between the marks too: the tool's schema says `days` is an integer.
    template = learnt(
        [
            (
                "<|call|>get_weather{city:<v>Paris<v>,days:<v>3<v>}<|/call|><|eot|>",
                message(calls=[call("get_weather", {"city": "Paris", "days": 3})]),
            ),
            (
                "<|call|>get_time{tz:<v>UTC<v>}<|/call|><|eot|>",
                message(calls=[call("get_time", {"tz": "UTC"})]),
            ),
        ],
        with_expected,
    )
    assert template["fields"]["tool_calls"]["content_args"] == {
        "unquoted_keys": True,
        "string_delims": [["<v>", "<v>"]],
    }
    assert read(template, "<|call|>get_weather{city:<v>Oslo<v>,days:<v>12<v>}<|/call|>") == (
        message(calls=[call("get_weather", {"city": "Oslo", "days": 12})])
    )


@pytest.mark.parametrize(
    ("written", "value_pattern", "read_as"),
    [
        # One line break each side of every value: that line break is the markup's, and a
        # value's own last line break (code) is kept.
        ("\n{}\n", r"\n?(?P<value>.*?)\n?", "def f():\n    return 1\n"),
        # Other blanks around a value: they are the markup's too, all of them.
        ("  {}  ", r"\s*(?P<value>.*?)\s*", "def f():\n    return 1"),
    ],
    ids=["line-breaks", "other-blanks"],
)
def test_fact_4_one_line_break_around_a_tagged_value_is_the_markups_and_the_rest_the_values(
    written, value_pattern, read_as
):
    template = learnt(
        [
            (
                f"<zc>get_weather\n<zk=city>{written.format('Paris')}</zk>\n"
                f"<zk=days>{written.format(3)}</zk>\n</zc>",
                message(calls=[call("get_weather", {"city": "Paris", "days": 3})]),
            ),
            (
                f"Sure.<zc>get_time\n<zk=tz>{written.format('UTC')}</zk>\n</zc>",
                message("Sure.", calls=[call("get_time", {"tz": "UTC"})]),
            ),
        ],
        with_expected=True,
    )
    assert template["fields"]["tool_calls"]["content_args"]["tag_pattern"] == (
        r"\s*<zk=(?P<key>[A-Za-z_][\w.\-]*)>" + value_pattern + "</zk>"
    )
    fresh = "<zc>get_time\n<zk=tz>\ndef f():\n    return 1\n\n</zk>\n</zc>"
    assert read(template, fresh) == message(calls=[call("get_time", {"tz": read_as})])


@BOTH
def test_an_id_after_a_marker_of_its_own_is_any_word_and_may_be_left_out(with_expected):
    template = learnt(
        [
            (
                '<call>get_weather<id>call_8f2<args>{"city": "Paris"}</call><|eot|>',
                message(calls=[call("get_weather", {"city": "Paris"})]),
            ),
            (
                'Sure.<call>get_time<id>x91<args>{"tz": "UTC"}</call><|eot|>',
                message("Sure.", calls=[call("get_time", {"tz": "UTC"})]),
            ),
        ],
        with_expected,
    )
    assert template["fields"]["tool_calls"]["open_pattern"] == (
        r"<call>\s*(?P<name>[A-Za-z_][\w\-]*(?:\.[\w\-]+)*)(?:<id>[\w\-]+)?<args>"
    )
    for written in ("<id>Q-7<args>", "<args>"):
        output = f'<call>get_time{written}{{"tz": "CET"}}</call><|eot|>'
        assert read(template, output) == message(calls=[call("get_time", {"tz": "CET"})])


@BOTH
def test_lone_call_objects_before_the_turns_end_may_be_joined_by_a_semicolon(with_expected):
    # Each example writes one JSON call object, then the end of turn: the end of turn is no
    # call's close, so two calls joined by a comma or a semicolon are read too.
    template = learnt(
        [
            (
                '{"name": "get_weather", "arguments": {"city": "Paris"}}<|eot|>',
                message(calls=[call("get_weather", {"city": "Paris"})]),
            ),
            (
                'Sure. {"name": "get_time", "arguments": {"tz": "UTC"}}<|eot|>',
                message("Sure.", calls=[call("get_time", {"tz": "UTC"})]),
            ),
        ],
        with_expected,
    )
    assert "close" not in template["fields"]["tool_calls"]
    output = (
        '{"name": "get_time", "arguments": {"tz": "CET"}}; '
        '{"name": "get_weather", "arguments": {"city": "Oslo"}}<|eot|>'
    )
    assert read(template, output) == message(
        calls=[call("get_time", {"tz": "CET"}), call("get_weather", {"city": "Oslo"})]
    )


@BOTH
def test_a_calls_close_written_inside_an_argument_is_text(with_expected):
    # The close follows each call's object right after its closing brace: written inside a
    # string of the arguments, it is the string's text, not the call's end.
    template = learnt(
        [
            (
                '<call>{"name": "get_weather", "arguments": {"city": "Paris"}}</call><|eot|>',
                message(calls=[call("get_weather", {"city": "Paris"})]),
            ),
            (
                'Sure.<call>{"name": "get_time", "arguments": {"tz": "UTC"}}</call><|eot|>',
                message("Sure.", calls=[call("get_time", {"tz": "UTC"})]),
            ),
        ],
        with_expected,
    )
    assert template["fields"]["tool_calls"]["close_pattern"].startswith(r"(?<=\})\s*</call>")
    output = '<call>{"name": "get_time", "arguments": {"tz": "a</call>b"}}</call><|eot|>'
    assert read(template, output) == message(calls=[call("get_time", {"tz": "a</call>b"})])


@BOTH
def test_arguments_written_as_json_text_are_read_as_the_object_it_holds(with_expected):
    # The examples write the arguments as an object; serving stacks also take them as JSON
    # text, so models write that too: the text is decoded, then cast by the tool's schema.
    template = learnt(
        [
            (
                '<call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}</call><|eot|>',
                message(calls=[call("get_weather", {"city": "Paris", "days": 2})]),
            ),
            (
                'Sure.<call>{"name": "get_time", "arguments": {"tz": "UTC"}}</call><|eot|>',
                message("Sure.", calls=[call("get_time", {"tz": "UTC"})]),
            ),
        ],
        with_expected,
    )
    assert template["fields"]["tool_calls"]["content_args"] == {
        "decode_json_strings": ["arguments"]
    }
    output = '<call>{"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\", \\"days\\": \\"3\\"}"}</call><|eot|>'
    assert read(template, output) == message(
        calls=[call("get_weather", {"city": "Oslo", "days": 3})]
    )


@BOTH
def test_fact_4_python_style_calls_with_every_value_quoted(with_expected):
    # `days="3"` is the integer 3: the tool's schema casts it, as the parser does, so the
    # aligner reads the call (as written) where the expected message says 3.
    output = '[get_weather(city="Paris", days="3")]<|eot|>'
    expected = message(calls=[call("get_weather", {"city": "Paris", "days": 3})])
    found = align(Example(0, "", output, TOOLS, expected if with_expected else None))
    [span] = found.spans
    assert (span.reading.shape, span.reading.calls) == (
        "python-list",
        (("get_weather", {"city": "Paris", "days": "3"}),),
    )
    template = learnt(
        [
            (output, expected),
            ('[get_time(tz="UTC")]<|eot|>', message(calls=[call("get_time", {"tz": "UTC"})])),
        ],
        with_expected,
    )
    assert template["fields"]["tool_calls"]["content"] == "python-call-list"
    assert read(template, '[get_weather(city="Oslo", days="12")]<|eot|>') == message(
        calls=[call("get_weather", {"city": "Oslo", "days": 12})]
    )


def dialect_macro(opening: str, closing: str) -> str:
    """A Jinja macro `value(v)` writing `v` in a dialect of JSON: keys bare, strings between
    `opening` and `closing`, numbers and booleans as JSON."""
    return (
        "{%- macro value(v) -%}\n"
        f"{{%- if v is string -%}}{opening}{{{{ v }}}}{closing}\n"
        + """{%- elif v is mapping -%}{ {%- for k, item in v.items() -%}{{ k }}:{{ value(item) }}{{ ',' if not loop.last }}{%- endfor -%} }
{%- elif v is sequence -%}[{%- for item in v -%}{{ value(item) }}{{ ',' if not loop.last }}{%- endfor -%}]
{%- else -%}{{ v | tojson }}{%- endif -%}
{%- endmacro -%}
"""
    )


# Calls as a name after a marker, then the arguments in a dialect of JSON: keys bare, strings
# between tag marks, numbers and booleans bare.
DIALECT_CALLS = (
    dialect_macro("<s>", "<s>")
    + """
{%- for message in messages -%}
{%- if message.role == 'assistant' -%}
[bot]{{ message.content or '' }}
{%- for c in message.tool_calls or [] -%}<call>do:{{ c.function.name }}{{ value(c.function.arguments) }}</call>{%- endfor -%}
[done]
{%- else -%}
[{{ message.role }}]{{ message.content }}[done]
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}[bot]{% endif -%}
"""
)


def test_the_aligner_alone_learns_a_json_dialect_from_the_renders():
    from engine.chat_templates.evidence import labelled_renders
    from engine.chat_templates.example_fields import learn_from_most
    from engine.chat_templates.learner import probes_for

    _, probes = probes_for(DIALECT_CALLS, "", "", None)
    rendered = labelled_renders(probes)
    assert (
        rendered[1].output
        == "<call>do:zq_fn_alpha{zq_key_a:<s>zq val 1<s>,zq_num:73519}</call>[done]"
    )
    base = {
        "defaults": {"role": "assistant"},
        "start_anchor": "[bot]",
        "fields": {"content": {"close": "[done]"}},
    }
    learnt_from_renders, _ = learn_from_most(rendered, base, leave_out_each=False)
    field = learnt_from_renders.template["fields"]["tool_calls"]
    assert field["content_args"] == {"unquoted_keys": True, "string_delims": [["<s>", "<s>"]]}
    output = (
        "<call>do:get_weather{city:<s>Zürich, CH<s>,days:3}</call><call>do:get_time{}</call>[done]"
    )
    parsed = parse_response(
        output, learnt_from_renders.template, prefix="[user]Weather?[done][bot]", tools=TOOLS
    )
    assert parsed == message(
        calls=[call("get_weather", {"city": "Zürich, CH", "days": 3}), call("get_time", {})]
    )


# The generation prompt writes a turn of instructions, then the header the history's turns
# start with.
LATE_INSTRUCTIONS = """
{%- for message in messages -%}
{%- if message.role == 'assistant' -%}
<|turn|>bot
{{ message.content or '' }}
{%- for c in message.tool_calls or [] %}<call>{{ {'name': c.function.name, 'arguments': c.function.arguments} | tojson }}</call>{%- endfor %}<|end|>
{%- else -%}
<|turn|>{{ message.role }}
{{ message.content }}<|end|>
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}<|turn|>system
Call a tool as <call>{"name": ..., "arguments": ...}</call>.<|end|><|turn|>bot
{% endif -%}
"""


def test_a_turn_after_instructions_the_generation_prompt_writes_follows_the_whole_prompt():
    from engine.chat_templates.evidence import labelled_renders
    from engine.chat_templates.learner import probes_for

    _, probes = probes_for(LATE_INSTRUCTIONS, "", "", None)
    prompt = probes[0].prompt("first-turn")
    assert prompt.endswith("</call>.<|end|><|turn|>bot\n")
    rendered = labelled_renders(probes)
    assert {example.prefix for example in rendered} == {prompt}
    assert rendered[0].output == "zq answer text<|end|>"
    result = infer_template(LATE_INSTRUCTIONS)
    assert result.report.failed == []
    assert result.template["start_anchor"] == "<|turn|>bot"


def test_a_recipient_marker_the_prompt_pre_writes_heads_calls_and_answers_alike():
    # recipient.jinja: every part is "::to=" then a recipient, "all" for the answer, a name for
    # a call; the prompt ends with "::to=". The aligner alone, over the renders: a name heads a
    # call only where an object follows, and the pre-written marker is dropped where no call
    # follows.
    from engine.chat_templates.example_fields import learn_from_most

    _, rendered = labelled_renders_of("recipient.jinja")
    base = {
        "defaults": {"role": "assistant"},
        "start_anchor": "<|turn|>assistant",
        "fields": {"content": {"close": "<|stop|>"}},
    }
    learnt_from_renders, _ = learn_from_most(rendered, base, leave_out_each=False)
    template = learnt_from_renders.template
    assert template["fields"]["content"]["close"] == ["<|stop|>", "::to=all", "::to="]
    prefix = "<|turn|>user\nWeather?<|stop|>\n<|turn|>assistant\n::to="
    assert parse_response("all\nIt is sunny.<|stop|>", template, prefix=prefix) == message(
        "It is sunny."
    )
    output = 'all\nLet me look.::to=get_time\n{"tz": "UTC"}<|stop|>'
    assert parse_response(output, template, prefix=prefix, tools=TOOLS) == message(
        "Let me look.", calls=[call("get_time", {"tz": "UTC"})]
    )
    assert parse_response("", template, prefix=prefix) == message()


@BOTH
def test_bare_call_objects_whose_name_key_is_not_their_first(with_expected):
    # No marker: a call object opens where an object with its name key starts, after members
    # with scalar values ("type") the examples write first.
    template = learnt(
        [
            (
                '{"type": "function", "function": {"name": "get_time", "arguments": {"tz": "UTC"}}}',
                message(calls=[call("get_time", {"tz": "UTC"})]),
            ),
            (
                'Checking. {"type": "function", "function": {"name": "get_weather", '
                '"arguments": {"city": "Paris", "days": 2}}}',
                message("Checking.", calls=[call("get_weather", {"city": "Paris", "days": 2})]),
            ),
        ],
        with_expected,
    )
    output = (
        'Sure. {"type": "function", "id": "c1", "function": {"name": "get_weather", '
        '"arguments": {"city": "Oslo", "days": 4}}}'
    )
    assert read(template, output) == message(
        "Sure.", calls=[call("get_weather", {"city": "Oslo", "days": 4})]
    )


def test_the_aligner_alone_keeps_a_known_close_with_blanks_whole():
    # empty-block-off.jinja ends a turn with "== end ==" (blanks inside) right after its calls'
    # section: the marker stays one close; only "<calls>" and "</calls>" are new markers.
    from engine.chat_templates.example_fields import learn_from_most

    _, rendered = labelled_renders_of("empty-block-off.jinja")
    base = {
        "defaults": {"role": "assistant"},
        "start_anchor_pattern": r"==\s*assistant\s*==",
        "fields": {
            "reasoning_content": {"open": "{r}", "close": "{/r}"},
            "content": {"close": "== end =="},
        },
    }
    learnt_from_renders, _ = learn_from_most(rendered, base, leave_out_each=False)
    template = learnt_from_renders.template
    assert template["fields"]["content"]["close"] == ["== end ==", "<calls>", "</calls>"]
    output = (
        '{r}Plan.{/r}\nA == B here.<calls>\n{"type": "function", "function": {"name": "get_time", '
        '"arguments": {"tz": "UTC"}}}\n</calls>\n== end ==\n'
    )
    parsed = parse_response(output, template, prefix="== user ==\nHi\n== end ==\n== assistant ==\n")
    assert parsed == message("A == B here.", "Plan.", [call("get_time", {"tz": "UTC"})])


# Every part of a turn is "=>>" then a recipient: "all" for the answer, a name for a call (its
# arguments in a dialect of JSON); the generation prompt ends with "=>>".
RECIPIENT_AFTER_HEADER = (
    dialect_macro("«", "»")
    + """
{%- for m in messages -%}
{%- if m.role == 'assistant' -%}
[[bot]]
{% if m.content %}=>>all
{{ m.content }}{% endif -%}
{%- for c in m.tool_calls or [] %}=>>{{ c.function.name }}
{{ value(c.function.arguments) }}{% endfor %}[[end]]
{% else -%}
[[{{ m.role }}]]
{{ m.content }}[[end]]
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}[[bot]]
=>>{% endif -%}
"""
)


def test_the_aligner_alone_leaves_a_recipient_marker_the_header_ends_with_to_the_message():
    # The header the prompts and the history share ends with "=>>", which the renders also
    # write before the second call's name: the anchor stops before it, and the marker opens
    # calls and heads answers alike.
    from engine.chat_templates.anchor import learn_anchor
    from engine.chat_templates.content_closes import learn_turn_end
    from engine.chat_templates.examples import learn_from_renders
    from engine.chat_templates.learner import probes_for
    from engine.chat_templates.parts import Notebook, Parts

    switch, probes = probes_for(RECIPIENT_AFTER_HEADER, "", "", None)
    parts = Parts(probes, "", Notebook(), switch)
    learn_anchor(parts)
    learn_turn_end(parts)
    assert parts.header.rstrip() == "[[bot]]\n=>>"
    learn_from_renders(parts)
    template = parts.render_template
    assert template["start_anchor"] == "[[bot]]"
    assert template["fields"]["content"]["close"] == ["[[end]]", "=>>all", "=>>"]
    prefix = "[[user]]\nHi[[end]]\n[[bot]]\n=>>"
    output = "all\nOn it.=>>get_time\n{tz:«UTC»}=>>get_weather\n{city:«Oslo»,days:2}[[end]]"
    assert parse_response(output, template, prefix=prefix, tools=TOOLS) == message(
        "On it.",
        calls=[call("get_time", {"tz": "UTC"}), call("get_weather", {"city": "Oslo", "days": 2})],
    )


# History turns close an empty block the generation prompt opens (``</think>answer``, no
# opener), and the prompt pre-writes the opener when thinking is on.
CLOSED_EMPTY_BLOCK = (
    "{%- for m in messages -%}"
    "{%- if m.role == 'assistant' -%}<|assistant|>"
    "{% if m.reasoning_content %}<think>{{ m.reasoning_content }}{% endif %}</think>"
    "{{ m.content or '' }}{%- for c in m.tool_calls or [] %}<tool_call>{{ c.function.name }}"
    "<args>{{ c.function.arguments | tojson }}</tool_call>{% endfor %}"
    "{%- else -%}<|{{ m.role }}|>{{ m.content }}{%- endif -%}{%- endfor -%}"
    "{%- if add_generation_prompt %}<|assistant|>"
    "{% if enable_thinking is not defined or enable_thinking %}<think>{% else %}</think>{% endif %}"
    "{% endif -%}"
)


def test_a_turn_that_starts_by_closing_the_opener_the_prompt_pre_writes_follows_the_whole_prompt():
    from engine.chat_templates.evidence import labelled_renders
    from engine.chat_templates.learner import probes_for
    from engine.chat_templates.probes import ANSWER

    _, probes = probes_for(CLOSED_EMPTY_BLOCK, "", "", None)
    answer = next(e for e in labelled_renders(probes) if e.what.endswith("thinking on"))
    # An empty block the model closes: the output after the prompt's opener, not a stray closer.
    assert (answer.prefix[-len("<|assistant|><think>") :], answer.output) == (
        "<|assistant|><think>",
        f"</think>{ANSWER}",
    )
    result = infer_template(CLOSED_EMPTY_BLOCK)
    assert result.passed and result.notes == []
    assert result.template["fields"]["tool_calls"]["open_pattern"] == (
        "<tool_call>\\s*(?P<name>[A-Za-z_][\\w\\-]*(?:\\.[\\w\\-]+)*)<args>"
    )


def test_renders_that_lose_a_string_argument_are_left_out_when_the_others_read_as_one_syntax():
    # bare-string-calls.jinja writes `[name(key=a value, n=7)]`: a render with a string
    # argument loses where the string ends, so no reading holds every render; the render of a
    # call with typed arguments alone keeps its values and teaches the Python-style list.
    from engine.chat_templates.examples import aligned_calls
    from engine.chat_templates.learner import learn

    chat_template = (CHAT_TEMPLATE_FIXTURES / "bare-string-calls.jinja").read_text(encoding="utf-8")
    found = aligned_calls(learn(chat_template, "", "", None))
    assert found.field == {
        "open_pattern": r"(?=\[\s*[A-Za-z_][\w\-]*(?:\.[\w\-]+)*\()",
        "content": "python-call-list",
        "transform_each": True,
        "transform": {
            "type": "function",
            "function": {"name": "{name}", "arguments": "{arguments}"},
        },
        "close_pattern": r"(?<=\])\s*<\|eot\|>",
    }
    assert {render.label for finding in found.findings for render in finding.renders} == {
        "first turn: one call of zq_fn_beta({'zq_key_b': True})",
        "first turn: an answer ('zq answer text')",
    }
    message = parse_response(
        '[get_weather(city="Paris", days=2), get_time(tz="UTC")]<|eot|>',
        infer_template(chat_template).template,
        prefix="<|assistant|>",
    )
    assert message["tool_calls"] == [
        call("get_weather", {"city": "Paris", "days": 2}),
        call("get_time", {"tz": "UTC"}),
    ]


@BOTH
def test_blanks_after_a_calls_open_marker_are_read_though_no_example_writes_them(with_expected):
    # The examples write the name right after `<call>`; a model breaks the line after a marker
    # as often: blanks may stand between a markup token that opens a call and the name.
    template = learnt(
        [
            (
                '<call>get_weather<args>{"city": "Paris"}</call><|eot|>',
                message(calls=[call("get_weather", {"city": "Paris"})]),
            ),
            (
                'Sure.<call>get_time<args>{"tz": "UTC"}</call><|eot|>',
                message("Sure.", calls=[call("get_time", {"tz": "UTC"})]),
            ),
        ],
        with_expected,
    )
    for written in ("<call>\nget_time", "<call> get_time", "<call>get_time"):
        output = f'{written}<args>{{"tz": "CET"}}</call><|eot|>'
        assert read(template, output) == message(calls=[call("get_time", {"tz": "CET"})])


@BOTH
def test_a_close_of_two_markers_takes_any_blanks_between_them(with_expected):
    # Each call closes with `</function>\n</tool_call>` (the examples write two in a row):
    # written as one literal, a model that leaves out the line break (or writes two) never
    # closes the first call, which then swallows the second one's arguments.
    def written(name: str, arguments: dict) -> str:
        pairs = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in arguments.items())
        return f"<tool_call>\n<function={name}>\n{pairs}</function>\n</tool_call>"

    template = learnt(
        [
            (
                written("get_weather", {"city": "Paris"}) + "<|eot|>",
                message(calls=[call("get_weather", {"city": "Paris"})]),
            ),
            (
                "Sure.\n"
                + written("get_time", {"tz": "UTC"})
                + "\n"
                + written("get_weather", {"city": "Rome"})
                + "<|eot|>",
                message(
                    "Sure.",
                    calls=[call("get_time", {"tz": "UTC"}), call("get_weather", {"city": "Rome"})],
                ),
            ),
        ],
        with_expected,
    )
    assert template["fields"]["tool_calls"]["close_pattern"] == r"</function>\s*</tool_call>"
    two = written("get_time", {"tz": "CET"}) + "\n" + written("get_weather", {"city": "Oslo"})
    for output in (two.replace(">\n<", "><"), two.replace(">\n<", ">\n\n<"), two):
        assert read(template, output + "<|eot|>") == message(
            calls=[call("get_time", {"tz": "CET"}), call("get_weather", {"city": "Oslo"})]
        )


@BOTH
def test_prose_that_names_a_calls_open_marker_is_no_call(with_expected):
    # `<tool_call>NAME<arg_key>...`: nothing fixed follows the name, so after the marker only
    # blanks with a line break may stand (a model breaks the line there); a marker a sentence
    # names, followed by a space and a word, opens no call.
    template = learnt(
        [
            (
                "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>"
                "<arg_key>days</arg_key><arg_value>2</arg_value></tool_call><|eot|>",
                message(calls=[call("get_weather", {"city": "Paris", "days": 2})]),
            ),
            (
                "Sure.<tool_call>get_time<arg_key>tz</arg_key><arg_value>UTC</arg_value>"
                "</tool_call><|eot|>",
                message("Sure.", calls=[call("get_time", {"tz": "UTC"})]),
            ),
        ],
        with_expected,
    )
    prose = "To call a tool, write <tool_call> then the function name."
    assert read(template, prose + "<|eot|>") == message(prose)
    output = (
        "<tool_call>\nget_time<arg_key>tz</arg_key><arg_value>CET</arg_value></tool_call><|eot|>"
    )
    assert read(template, output) == message(calls=[call("get_time", {"tz": "CET"})])


@BOTH
def test_tags_named_by_their_key_close_with_that_key(with_expected):
    # `<city>Paris</city><days>2</days>`: the text after each value names the value's own key,
    # so the tag pattern closes on a back-reference to the key, whichever key it is.
    template = learnt(
        [
            (
                '<call name="get_weather"><city>Paris</city><days>2</days></call><|eot|>',
                message(calls=[call("get_weather", {"city": "Paris", "days": 2})]),
            ),
            (
                'Sure.<call name="get_time"><tz>UTC</tz></call><|eot|>',
                message("Sure.", calls=[call("get_time", {"tz": "UTC"})]),
            ),
        ],
        with_expected,
    )
    assert template["fields"]["tool_calls"]["content_args"]["tag_pattern"] == (
        r"<(?P<key>[A-Za-z_][\w.\-]*)>\n?(?P<value>.*?)\n?</(?P=key)>"
    )
    output = '<call name="get_weather"><days>3</days><city>Oslo</city></call><|eot|>'
    assert read(template, output) == message(
        calls=[call("get_weather", {"city": "Oslo", "days": 3})]
    )
