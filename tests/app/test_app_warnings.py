"""Never plain green over a wrong message: five outputs a new user met, each parsed without an
error into a wrong message, through the page's `/parse` on a real server and in Chromium. The
parser's account (`parser.warnings`) names each, so the status says text was probably lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.chat_templates.infer import infer_template
from engine.template_files import load_template_file
from tests.support.app_server import CHROMIUM, polled
from tests.support.load_sessions import api_client
from tests.support.paths import CHAT_TEMPLATE_FIXTURES

MINIMAX_PREFIX = "]~b]ai\n<think>\n"
WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]
EVENTS = [
    {
        "type": "function",
        "function": {
            "name": "create_event",
            "parameters": {
                "type": "object",
                "properties": {"title": {"type": "string"}, "details": {"type": "object"}},
            },
        },
    }
]
# A chat template that writes each argument as a tag named by its key, objects as nested tags.
NESTED_TAGS = """\
{%- macro tags(value) -%}
{%- if value is mapping -%}
{%- for k, v in value.items() %}<{{ k }}>{{ tags(v) }}</{{ k }}>{% endfor -%}
{%- else -%}{{ value }}{%- endif -%}
{%- endmacro -%}
{%- for m in messages -%}
{%- if m.role == 'assistant' -%}
<|assistant|>{{ m.content or '' }}
{%- for c in m.tool_calls or [] %}<call name="{{ c.function.name }}">{{ tags(c.function.arguments) }}</call>{%- endfor %}<|end|>
{% else -%}
<|{{ m.role }}|>{{ m.content }}<|end|>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}<|assistant|>{% endif -%}
"""


def minimax_output(first="</parameter>", second="</parameter>", section="</minimax:tool_call>"):
    return (
        'Two cities.\n</think>\n\n<minimax:tool_call>\n<invoke name="get_weather">\n'
        f'<parameter name="city">Paris{first}\n<parameter name="days">3{second}\n</invoke>\n'
        + section
    )


def page_cases() -> dict[str, tuple[str, str, str, str]]:
    """name -> (template text, prefix, generation, tools text): the five page cases."""
    minimax = json.dumps(load_template_file("minimax-m2").response_template)
    nested = json.dumps(infer_template(NESTED_TAGS).template)
    no_calls = json.dumps(
        infer_template((CHAT_TEMPLATE_FIXTURES / "no-tools.jinja").read_text("utf-8")).template
    )
    block = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n@@'
    return {
        "section-close-misspelt": (
            minimax,
            MINIMAX_PREFIX,
            minimax_output(section="</minimax:tool_cal>"),
            json.dumps(WEATHER),
        ),
        "first-parameter-close-misspelt": (
            minimax,
            MINIMAX_PREFIX,
            minimax_output(first="</paramter>"),
            json.dumps(WEATHER),
        ),
        "second-parameter-close-misspelt": (
            minimax,
            MINIMAX_PREFIX,
            minimax_output(second="</paramter>"),
            json.dumps(WEATHER),
        ),
        "nested-argument-markers-raw": (
            nested,
            "<|user|>Lunch in Paris<|end|>\n<|assistant|>",
            '<call name="create_event"><title>Lunch</title><details><where>Paris</where>'
            "</details></call><|end|>",
            json.dumps(EVENTS),
        ),
        "call-block-in-content": (
            no_calls,
            "@user\nWeather in Paris?\n@@\n@assistant\n",
            block,
            json.dumps(WEATHER),
        ),
    }


CASES = page_cases()
# What each case's result says: the wrong message it gives, and how one of its warnings starts.
EXPECTED = {
    "section-close-misspelt": (
        "content",
        "</minimax:tool_cal>",
        "'</minimax:tool_cal>' at generation offset 158 in the text is a near miss of "
        "'</minimax:tool_call>' (fields.content.close)",
    ),
    # Read leniently, a parameter with no close ends at the next parameter or at the call's
    # close: the page gets every argument, and the lenient reading is its error.
    "first-parameter-close-misspelt": (
        "arguments",
        {"city": "Paris</paramter>", "days": 3},
        "'</paramter>' at generation offset 98 in the tool_calls region is a near miss of "
        "'</parameter>'",
    ),
    "second-parameter-close-misspelt": (
        "arguments",
        {"city": "Paris", "days": 3},
        "'<parameter name=\"days\">3</paramter>' at generation offset 111 in the tool_calls region "
        "was not read by fields.tool_calls.content_args.tag_pattern",
    ),
    "nested-argument-markers-raw": (
        "arguments",
        {"title": "Lunch", "details": "<where>Paris</where>"},
        "a value of the tool_calls region holds '<where>Paris</where>', which "
        "fields.tool_calls.content_args.tag_pattern reads as a tag",
    ),
    "call-block-in-content": (
        "content",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        "the tool 'get_weather' is named at generation offset 22 in content, with its parameter "
        "'city'",
    ),
}


# The cases lenient parsing reads (the page parses leniently): its error says how.
LENIENT_READINGS = {
    "first-parameter-close-misspelt": "The output has a slip, read leniently: fields.tool_calls: lenient reading at "
    "stream offset 78: the tag 'city' has no close: its value ends at the next tag",
    "second-parameter-close-misspelt": "The output has a slip, read leniently: fields.tool_calls: lenient reading at "
    "stream offset 119: the tag 'days' has no close: its value ends at the call's close",
}


@pytest.mark.parametrize("name", list(CASES))
def test_parse_is_never_plain_green_over_a_wrong_message(app_url, name):
    result = api_client(app_url).predict(*CASES[name], api_name="/parse")
    where, wrong, said = EXPECTED[name]
    message = result["message"]
    got = message["content"] if where == "content" else message["tool_calls"][0]["function"]
    assert (got if where == "content" else got["arguments"]) == wrong
    assert not result["status"].startswith("Parsed:"), result["status"]
    if name in LENIENT_READINGS:
        assert result["error"] == result["status"] == LENIENT_READINGS[name]
    else:
        assert result["error"] is None
        assert result["status"].startswith("Parsed, but text was probably lost ("), result["status"]
    assert any(line.startswith(said) for line in result["warnings"]), result["warnings"]


def test_parse_stays_plain_green_on_the_correct_output(app_url):
    template, prefix, _, tools = CASES["first-parameter-close-misspelt"]
    result = api_client(app_url).predict(
        template, prefix, minimax_output(), tools, api_name="/parse"
    )
    assert result["status"] == "Parsed: reasoning_content, tool_calls"
    assert result["warnings"] == []


# -- in Chromium: the status line is not plain green -------------------------------------


@pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium"
)
def test_the_page_shows_a_misspelt_section_close_as_probably_lost(browser, app_url, tmp_path):
    from playground.authoring.share import PageState, share_link

    template, prefix, generation, tools = CASES["section-close-misspelt"]
    query, _ = share_link(
        PageState(
            "minimax-m2/text-then-tool-calls",
            "",
            {"template": template, "prefix": prefix, "generation": generation, "tools": tools},
            "chars:3",
            "paste",
            0,
        )
    )
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    try:
        page = polled(context.new_page())
        page.set_default_timeout(60_000)
        page.goto(app_url + query)
        page.wait_for_selector("#region-map-body")
        # The linked output's parse, not the sample's the page opened on.
        page.wait_for_function(
            "() => document.querySelector('#status') && "
            "document.querySelector('#status').innerText.includes('minimax:tool_cal>')"
        )
        page.screenshot(path=str(tmp_path / "status.png"), full_page=True)
        assert page.locator("#status #status-parsed").count() == 0
        lost = page.locator("#status #status-lost")
        assert lost.count() == 1
        assert lost.inner_text().startswith("△ Parsed, but text was probably lost (")
        assert "</minimax:tool_cal>" in page.locator("#status").inner_text()
    finally:
        context.close()


def _status_after(path: str) -> str:
    """The status line's words after a parse of an output that swaps two characters of
    `</think>`, or after a replay of it to its end (`path`: "parse" or "replay")."""
    import html
    import re

    from playground import handlers
    from playground.catalog import template_text_of
    from playground.parse.replay import ReplayInputs
    from playground.parse.session import Session
    from playground.parse.workspace import WorkspaceInputs

    qwen3 = template_text_of(load_template_file("qwen3").response_template)
    prefix = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    output = "The user greets me.\n</thnik>\n\nHello! How can I help?<|im_end|>"
    if path == "parse":
        status = handlers.parse(WorkspaceInputs(qwen3, prefix, output, ""), "", Session())
    else:  # one chunk: the first Step feeds it and ends the replay
        inputs = ReplayInputs(qwen3, prefix, output, "", "chars", 1000, 0, "")
        status = handlers.replay_step(inputs, Session())
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", status["status"]))).strip()


@pytest.mark.parametrize("path", ["parse", "replay"])
def test_the_status_names_swapped_characters_as_the_outputs_slip_not_the_close_pattern(path):
    # The end of a replay says what a parse of the same output says.
    said = _status_after(path)
    assert said.startswith(
        "⚠ Cause ( fields.reasoning_content.close_pattern ): The output misspells '</think>' as "
        "'</thnik>' at generation offset 20: a generation error, not a template fault (the "
        "shipped template's samples hold it, as fields.reasoning_content.close_pattern expects)"
    )
    assert "Fix:" not in said and "instead of" not in said
    assert "✔" not in said
