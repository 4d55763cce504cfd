"""Template inference: each small chat template in tests/support/chat_templates (one per reasoning mode
and tool-call format) gives exactly the template below, which passes its matrix and parses real
generations; hostile chat templates get a clear message within the budget; the 35 real chat
templates in ../shared pass their matrices; and on each family's samples the inferred template
gives the shipped one's messages, or the sample writes a marker its chat template never writes.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine import (
    ResponseParseError,
    check_conformance,
    choose_template,
    load_template,
    parse_response,
)
from engine.authoring.samples import load_samples
from engine.chat_templates.families import family_template
from engine.chat_templates.infer import InferenceError, infer_template, infer_template_isolated
from engine.inputs import prefix_cut
from engine.template_files import load_template_file
from tests.support.paths import (
    CHAT_TEMPLATE_FIXTURES,
    CHAT_TEMPLATES,
    MANIFEST,
    TEMPLATE_FOR,
    needs_shared,
)
from tests.support.paths import ROOT as REPO_ROOT
from tests.support.schemas import FILE_VALIDATOR, TEMPLATE_VALIDATOR
from tests.support.weather_outputs import EXAMPLES, LISTS_TOOLS, OUTPUTS

SYNTHETIC = CHAT_TEMPLATE_FIXTURES

EXPECTED = {  # the template inferred from each tests/support/chat_templates/NAME.jinja, without its defaults
    "bare-json-parameters": {
        "start_anchor": "[assistant]:",
        "fields": {
            "tool_calls": {
                "open_pattern": '(?=\\{\\s*(?:"(?:[^"\\\\\\n]|\\\\.)*"\\s*:\\s*(?:"(?:[^"\\\\\\n]|\\\\.)*"|[\\w.+\\-]+)\\s*,\\s*){0,8}\\"name\\"\\s*:)',
                "close_pattern": '(?<=\\})(?:\\s*[,;])?(?=\\s*(?:\\{\\s*(?:"(?:[^"\\\\\\n]|\\\\.)*"\\s*:\\s*(?:"(?:[^"\\\\\\n]|\\\\.)*"|[\\w.+\\-]+)\\s*,\\s*){0,8}\\"name\\"\\s*:|\\[end\\]|$))',
                "repeats": True,
                "content": "json",
                "transform": {
                    "type": "function",
                    "function": {"name": "{content.name}", "arguments": "{content.parameters}"},
                },
                "content_args": {"decode_json_strings": ["parameters"]},
            },
            "content": {"close": ["[end]", "[tool]"]},
        },
    },
    "empty-block-off": {
        "start_anchor_pattern": "==\\s*assistant\\s*==",
        "fields": {
            "reasoning_content": {
                "open": "{r}",
                "close_pattern": '\\{/r\\}|(?=(?:<calls>|(?=\\{\\s*(?:"(?:[^"\\\\\\n]|\\\\.)*"\\s*:\\s*(?:"(?:[^"\\\\\\n]|\\\\.)*"|[\\w.+\\-]+)\\s*,\\s*){0,8}\\"function\\"\\s*:))(?!.*?\\{/r\\}))',
            },
            "tool_calls": {
                "open_pattern": '(?=\\{\\s*(?:"(?:[^"\\\\\\n]|\\\\.)*"\\s*:\\s*(?:"(?:[^"\\\\\\n]|\\\\.)*"|[\\w.+\\-]+)\\s*,\\s*){0,8}\\"function\\"\\s*:)',
                "close_pattern": '(?<=\\})(?:\\s*[,;])?(?=\\s*(?:\\{\\s*(?:"(?:[^"\\\\\\n]|\\\\.)*"\\s*:\\s*(?:"(?:[^"\\\\\\n]|\\\\.)*"|[\\w.+\\-]+)\\s*,\\s*){0,8}\\"function\\"\\s*:|</calls>|$))',
                "repeats": True,
                "content": "json",
                "transform": {
                    "type": "function",
                    "function": {
                        "name": "{content.function.name}",
                        "arguments": "{content.function.arguments}",
                    },
                },
            },
            "content": {"close": ["== end ==", "<calls>", "</calls>"]},
        },
    },
    "forced-open": {
        "start_anchor": "<<assistant>>",
        "fields": {
            "reasoning_content": {
                "open": "[reflect]",
                "close_pattern": '\\[/reflect\\]|(?=(?:<fn\\s*name="(?:[A-Za-z_][\\w\\-]*(?:\\.[\\w\\-]+)*)">)(?!.*?\\[/reflect\\]))',
            },
            "tool_calls": {
                "open_pattern": '<fn\\s*name="(?P<name>[A-Za-z_][\\w\\-]*(?:\\.[\\w\\-]+)*)">',
                "close_pattern": "(?<=[}\\]])\\s*</fn>",
                "repeats": True,
                "content": "json",
                "transform": {
                    "type": "function",
                    "function": {"name": "{name}", "arguments": "{content}"},
                },
            },
            "content": {"close": "<<done>>"},
        },
    },
    "indexed-functions": {
        "start_anchor": ["<|a|>", "<|/out|>"],
        "fields": {
            "tool_calls": {
                "open_pattern": "<\\|call\\|>functions\\.(?P<name>[A-Za-z_][\\w\\-]*(?:\\.[\\w\\-]+)*):\\d+<\\|args\\|>",
                "close_pattern": "(?<=[}\\]])\\s*<\\|/call\\|>",
                "repeats": True,
                "content": "json",
                "transform": {
                    "type": "function",
                    "function": {"name": "{name}", "arguments": "{content}"},
                },
            },
            "content": {"close": ["<|eom|>", "<|section|>", "<|/section|>"]},
        },
    },
    "key-value-tags": {
        "start_anchor_pattern": "###\\s*assistant",
        "fields": {
            "tool_calls": {
                "open_pattern": "<invoke>(?:[ \\t]*\\n\\s*)?(?P<name>[A-Za-z_][\\w\\-]*(?:\\.[\\w\\-]+)*)",
                "close": "</invoke>",
                "repeats": True,
                "content": "xml-inline",
                "content_args": {
                    "tag_pattern": "\\s*<k>(?P<key>[A-Za-z_][\\w.\\-]*)</k>\\s*<v>\\n?(?P<value>.*?)\\n?</v>"
                },
                "transform": {
                    "type": "function",
                    "function": {"name": "{name}", "arguments": "{content}"},
                },
            },
            "content": {"close": "### stop"},
        },
    },
    "kv-lines": {
        "start_anchor": "<assistant>",
        "fields": {
            "tool_calls": {
                "open_pattern": "<action\\s*(?P<name>[A-Za-z_][\\w\\-]*(?:\\.[\\w\\-]+)*)>\\s*",
                "close": "</action>",
                "repeats": True,
                "content": "xml-inline",
                "content_args": {
                    "tag_pattern": "(?P<key>[A-Za-z_][\\w.\\-]*):\\s*(?P<value>.*?)(?=\\s*\\n|\\s*$)"
                },
                "transform": {
                    "type": "function",
                    "function": {"name": "{name}", "arguments": "{content}"},
                },
            },
            "content": {"close": "</assistant>"},
        },
    },
    "no-tools": {"start_anchor": "@assistant", "fields": {"content": {"close": "@@"}}},
    "pythonic": {
        "start_anchor": "|assistant|",
        "fields": {
            "tool_calls": {
                "open_pattern": "(?=\\[\\s*[A-Za-z_][\\w\\-]*(?:\\.[\\w\\-]+)*\\()",
                "content": "python-call-list",
                "transform_each": True,
                "transform": {
                    "type": "function",
                    "function": {"name": "{name}", "arguments": "{arguments}"},
                },
                "close_pattern": "(?<=\\])\\s*\\|eot\\|",
            },
            "content": {"close": "|eot|"},
        },
    },
    "reasoning-in-turn": {
        "start_anchor": "<|begin|>assistant",
        "fields": {
            "reasoning_content": {
                "open": "<mind>",
                "close_pattern": "</mind>|(?=(?:<invoke>)(?!.*?</mind>))",
            },
            "tool_calls": {
                "open": "<invoke>",
                "close_pattern": "(?<=\\})\\s*</invoke>",
                "repeats": True,
                "content": "json",
                "transform": {
                    "type": "function",
                    "function": {"name": "{content.name}", "arguments": "{content.arguments}"},
                },
                "content_args": {"decode_json_strings": ["arguments"]},
            },
            "content": {"close": "<|finish|>"},
        },
    },
    "xml-parameters": {
        "start_anchor_pattern": "<turn\\s*assistant>",
        "fields": {
            "tool_calls": {
                "open_pattern": "<tool\\s*name=(?P<name>[A-Za-z_][\\w\\-]*(?:\\.[\\w\\-]+)*)>",
                "close": "</tool>",
                "repeats": True,
                "content": "xml-inline",
                "content_args": {
                    "tag_pattern": "\\s*<arg=(?P<key>[A-Za-z_][\\w.\\-]*)>\\n?(?P<value>.*?)\\n?</arg>"
                },
                "transform": {
                    "type": "function",
                    "function": {"name": "{name}", "arguments": "{content}"},
                },
            },
            "content": {"close": "</turn>"},
        },
    },
}


@pytest.fixture(scope="module")
def inferred():
    return {
        name: infer_template((SYNTHETIC / f"{name}.jinja").read_text(encoding="utf-8"))
        for name in EXPECTED
    }


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_synthetic_chat_template_gives_its_template_and_passes_its_matrix(inferred, name):
    result = inferred[name]
    assert result.template == {"defaults": {"role": "assistant"}, **EXPECTED[name]}
    assert not list(TEMPLATE_VALIDATOR.iter_errors(result.template))
    assert result.passed, [row.name + ": " + row.detail for row in result.report.failed]
    assert result.exit_code == 0


def _delimiter_keys(template: dict) -> set[str]:
    keys = {key for key in ("start_anchor", "start_anchor_pattern") if key in template}
    for name, field in template["fields"].items():
        keys |= {
            f"fields.{name}.{key}"
            for key in ("open", "open_pattern", "close", "close_pattern")
            if key in field
        }
    return keys


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_delimiter_has_its_evidence(inferred, name):
    result = inferred[name]
    explained = {
        finding.key.replace("start_anchor", "start_anchor_pattern")
        if "start_anchor_pattern" in result.template
        else finding.key
        for finding in result.findings
    }
    assert _delimiter_keys(result.template) <= explained | {
        "fields.reasoning_content.close_pattern"
    }
    for finding in result.findings:
        assert finding.renders and all(
            render.label and render.text for render in finding.renders
        ), finding
        shown = finding.to_dict()
        if len(finding.renders) == 2:
            (a0, a1), (b0, b1) = (render["difference"] for render in shown["renders"])
            assert 0 <= a0 <= a1 <= len(finding.renders[0].text) and 0 <= b0 <= b1 <= len(
                finding.renders[1].text
            )


def test_an_opener_the_prompt_prewrites_closes_by_its_closing_form_a_documented_fallback(inferred):
    result = inferred["forced-open"]
    assert result.fallbacks == [
        "reasoning close '[/reflect]': no render writes reasoning, so the closer is the opener's closing form"
    ]
    finding = next(f for f in result.findings if f.key == "fields.reasoning_content.close")
    assert (
        finding.how
        == "the closing form of the opener; confirmed: the chat template drops an earlier turn's text up to it"
    )


def test_a_chat_template_without_tool_calls_gives_a_template_without_them(inferred):
    result = inferred["no-tools"]
    assert "tool_calls" not in result.template["fields"]
    assert result.notes == [
        "no tool_calls field: the chat template writes no tool call of an assistant message (or refuses every one)"
    ]


GENERATIONS = {
    # name: (prefix, generation, message)
    "reasoning-in-turn": (
        "<|begin|>user\nWeather?<|finish|>\n<|begin|>assistant\n",
        '<mind>Need the forecast.</mind>\nChecking.<invoke>{"name": "get_weather", "arguments": {"city": "Oslo"}}</invoke><|finish|>',
        {
            "role": "assistant",
            "reasoning_content": "Need the forecast.",
            "content": "Checking.",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": {"city": "Oslo"}},
                }
            ],
        },
    ),
    "forced-open": (
        "<<user>>\nWeather?<<done>>\n<<assistant>>\n[reflect]\n",
        'Need the forecast.[/reflect]<fn name="get_weather">{"city": "Oslo"}</fn><<done>>',
        {
            "role": "assistant",
            "reasoning_content": "Need the forecast.",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": {"city": "Oslo"}},
                }
            ],
        },
    ),
    "kv-lines": (
        "<user>Weather?</user>\n<assistant>",
        "Checking.\n<action get_weather>\ncity: Oslo\ndays: 3\n</action></assistant>",
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": {"city": "Oslo", "days": 3}},
                }
            ],
        },
    ),
    "pythonic": (
        "|user|\nWeather?|eot|\n|assistant|\n",
        '[get_weather(city="Oslo"), get_time(tz="CET")]|eot|',
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": {"city": "Oslo"}},
                },
                {"type": "function", "function": {"name": "get_time", "arguments": {"tz": "CET"}}},
            ],
        },
    ),
}


# The tool the generations call: tagged and line values are text, cast by its schema.
WEATHER_TOOL = [
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


@pytest.mark.parametrize("name", sorted(GENERATIONS))
def test_the_inferred_template_parses_a_real_generation(inferred, name):
    prefix, generation, message = GENERATIONS[name]
    parsed = parse_response(generation, inferred[name].template, prefix=prefix, tools=WEATHER_TOOL)
    assert parsed == message


def test_the_templates_file_is_valid_and_names_its_evidence(inferred):
    data = inferred["reasoning-in-turn"].template_file("reasoning-in-turn")
    assert not list(FILE_VALIDATOR.iter_errors(data))
    assert data["models"] == ["reasoning-in-turn"]
    assert data["generation_prompt"] == "<|begin|>assistant\n"
    assert data["notes"][0].startswith(
        'start_anchor = "<|begin|>assistant": the header the generation prompt writes'
    )


# -- what inference cannot do -------------------------------------------------------------------------

# Arguments written by value alone, no key: no content parser names them.
UNREADABLE_CALLS = (
    "{%- for m in messages -%}<{{ m.role }}>{{ m.content or '' }}"
    "{%- for c in m.tool_calls or [] %}CALL {{ c.function.name }} WITH "
    "{% for k, v in c.function.arguments.items() %}{{ v | tojson }} | {% endfor %}END{% endfor %}</>{% endfor -%}"
    "{%- if add_generation_prompt %}<assistant>{% endif -%}"
)


def test_a_call_syntax_the_language_cannot_read_is_said_and_fails_the_matrix():
    result = infer_template(UNREADABLE_CALLS)
    assert "tool_calls" not in result.template["fields"]
    assert not result.passed and result.exit_code == 1
    # The aligner says once why it reads no call in the renders (not again when the
    # candidates are judged).
    assert result.notes[-2].startswith(
        "aligning the renders gave no template that reads them all: the render (first turn: one "
        "call of zq_fn_alpha("
    )
    assert result.notes[-1].startswith(
        "no tool_calls field: no call syntax the template language can read explains"
    )
    assert sum(note.startswith("aligning the renders") for note in result.notes) == 1
    assert {row.name.split("/")[0] for row in result.report.failed} == {
        "first-turn-tools",
        "multi-turn",
        "after-tool-result",
        "after-parallel-tool-results",
    }


def assistant_calls_chat_template(calls: str) -> str:
    """A chat template whose assistant turns write `calls` (Jinja over ``m.tool_calls``) after
    their text, each turn ending with ``<|eot|>``."""
    return (
        "{%- for m in messages -%}{%- if m.role == 'assistant' -%}<|assistant|>"
        "{{ m.content or '' }}{%- if m.tool_calls %}" + calls + "{% endif %}<|eot|>\n"
        "{% else -%}<|{{ m.role }}|>{{ m.content or '' }}<|eot|>\n{% endif -%}{%- endfor -%}"
        "{%- if add_generation_prompt %}<|assistant|>{% endif -%}"
    )


# Strings bare after their key, no comma between arguments, booleans refused.
LOSSY_CALLS = assistant_calls_chat_template(
    "<|calls|>{% for c in m.tool_calls %}{{ c.function.name }}("
    "{% for k, v in c.function.arguments.items() %}{% if v is boolean %}"
    "{{ raise_exception('booleans are not supported') }}{% endif %}{{ k }}={{ v }} {% endfor %})"
    "{% endfor %}<|/calls|>"
)
# One JSON object keyed by the function's name a line, no marker around them.
KEYED_CALLS = assistant_calls_chat_template(
    '{% for c in m.tool_calls %}\n{"{{ c.function.name }}": {{ c.function.arguments | tojson }}}'
    "{% endfor %}"
)


def test_calls_that_lose_a_value_in_every_render_are_said_so():
    # Strings left bare after their key, no comma between arguments, booleans refused: no
    # render of a call keeps every value, so no reading is evidence.
    result = infer_template(LOSSY_CALLS)
    assert "tool_calls" not in result.template["fields"]
    assert result.notes[-1] == (
        "no tool_calls field: the chat template writes every call in a form no parser reads "
        "back: zq_fn_alpha's argument zq_key_a without quotes (zq_key_a=zq val 1)"
    )


def test_calls_keyed_by_the_functions_name_that_no_field_reads_name_the_missing_construct():
    result = infer_template(KEYED_CALLS)
    assert "tool_calls" not in result.template["fields"]
    assert result.notes[-1].startswith(
        "no tool_calls field: each call is a JSON object whose only key is the function's name"
    )
    assert [part.construct for part in result.missing] == [
        "a way to read a JSON object's key as a value: a content parser or transform that turns "
        '{"NAME": {ARGUMENTS}} into a name and its arguments'
    ]


def test_calls_the_aligner_reads_in_the_renders_end_unclosed_reasoning_at_their_section_marker():
    """Key and value pairs between words, inside a section of their own, after reasoning: the
    aligner reads the calls from the renders, and the section's marker, which no turn without
    a call writes, starts the calls: a call written inside reasoning that never closes ends it."""
    sectioned = (
        "{%- for m in messages -%}<{{ m.role }}>"
        "{%- if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}"
        "{{ m.content or '' }}{%- if m.tool_calls %}<calls>{% for c in m.tool_calls %}"
        "CALL {{ c.function.name }} WITH {% for k, v in c.function.arguments.items() %}"
        "{{ k }}:{{ v | tojson }} | {% endfor %}END{% endfor %}</calls>{% endif %}</>"
        "{% endfor -%}{%- if add_generation_prompt %}<assistant>{% endif -%}"
    )
    result = infer_template(sectioned)
    assert [(each.description, each.passed) for each in result.candidates] == [
        ("reasoning also ends where a tool call starts, when its closer never follows", True)
    ]
    assert result.template["fields"]["content"] == {"close": ["</>", "<calls>", "</calls>"]}
    assert result.template["fields"]["reasoning_content"]["close_pattern"] == (
        r"</think>|(?=(?:<calls>|CALL\s*(?:[A-Za-z_][\w\-]*(?:\.[\w\-]+)*)\s*WITH\s*)"
        r"(?!.*?</think>))"
    )
    output = '<think>need it <calls>CALL get_weather WITH city:"Oslo" | END</calls></>'
    assert parse_response(output, result.template, prefix="<assistant>") == {
        "role": "assistant",
        "reasoning_content": "need it",
        "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}
        ],
    }


def test_a_call_syntax_no_render_difference_reads_is_learnt_by_aligning_the_renders():
    """Key and value pairs between words: the renders' differences give no shape that reads
    them, the aligner over the renders (the message rendered, the text it became) does, before
    the candidates are put together: the first reads them."""
    pairs = UNREADABLE_CALLS.replace("{{ v | tojson }} | ", "{{ k }}:{{ v | tojson }} | ")
    result = infer_template(pairs)
    assert result.passed and result.exit_code == 0
    assert [(each.description, each.passed) for each in result.candidates] == [("as learnt", True)]
    finding = next(f for f in result.findings if f.key == "fields.tool_calls")
    assert finding.how == (
        "the renders write their calls as the name, then its arguments as key and value pairs; "
        "this content parser reads them back"
    )
    message = parse_response(
        'CALL get_weather WITH city:"Oslo" | days:3 | END</>', result.template, prefix="<assistant>"
    )
    assert [call["function"] for call in message["tool_calls"]] == [
        {"name": "get_weather", "arguments": {"city": "Oslo", "days": 3}}
    ]


# A chat template that keeps its call ids in a list it appends to: transformers' immutable sandbox
# refuses every conversation with a call, so the conformance check cannot render one.
APPENDING_CALLS = (
    "{%- set ids = namespace(seen=[]) -%}"
    "{%- for m in messages -%}<{{ m.role }}>{{ m.content or '' }}"
    "{%- for c in m.tool_calls or [] %}{%- set _ = ids.seen.append(c.id) -%}"
    "<call>{{ c.function.name }}:{{ c.function.arguments | tojson }}</call>{% endfor %}</>"
    "{%- endfor -%}"
    "{%- if add_generation_prompt %}<assistant>{% endif -%}"
)

# A chat template that joins each argument's value to its key with ``+``: a number or a boolean
# is a TypeError, so transformers renders no call with one.
JOINED_VALUES = (
    "{%- for m in messages -%}<{{ m.role }}>{{ m.content or '' }}"
    "{%- for c in m.tool_calls or [] %}<call>{{ c.function.name }}{{ '{' }}"
    "{%- for k in c.function.arguments %}{{ k + '=' + c.function.arguments[k] }}"
    "{%- if not loop.last %};{% endif %}{% endfor %}{{ '}' }}</call>{% endfor %}</>"
    "{%- endfor -%}"
    "{%- if add_generation_prompt %}<assistant>{% endif -%}"
)


def test_calls_of_a_chat_template_that_changes_its_own_list_are_learnt_from_a_render_allowing_it():
    result = infer_template(APPENDING_CALLS)
    assert result.template["fields"]["tool_calls"] == {
        "open_pattern": "<call>\\s*(?P<name>[A-Za-z_][\\w\\-]*(?:\\.[\\w\\-]+)*):",
        "close_pattern": "(?<=[}\\]])\\s*</call>",
        "repeats": True,
        "content": "json",
        "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
    }
    assert (
        "the chat template changes a list or dict it builds (SecurityError: access to attribute "
        "'append' of 'list' object is unsafe.), which transformers' sandbox refuses: rendered "
        "allowing it, to see what it writes"
    ) in result.notes
    # The check still renders as transformers does: its rows with calls are not renderable.
    refused = [row for row in result.report.situations if not row.renderable]
    assert refused and all("'append' of 'list' object is unsafe" in row.detail for row in refused)
    message = parse_response(
        'Sure.<call>get_weather:{"city": "Oslo", "days": 2}</call></>',
        result.template,
        prefix="<assistant>",
    )
    assert message == {
        "role": "assistant",
        "content": "Sure.",
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}},
            }
        ],
    }


def test_calls_whose_values_a_chat_template_joins_as_strings_are_learnt_from_the_renders():
    """Rendered with the argument values as text, the calls show a syntax no render difference
    reads; the aligner over the renders reads it, and the candidate that takes its field reads
    every render, numbers included (the matrix alone could not tell: no row with a number
    renders)."""
    result = infer_template(JOINED_VALUES)
    assert (
        "the chat template refuses a call whose argument is a number or a boolean (TypeError: "
        'can only concatenate str (not "int") to str): calls rendered with every argument value '
        "as its JSON text"
    ) in result.notes
    assert [
        (each.description, each.passed, len(each.render_problems)) for each in result.candidates
    ] == [("as learnt", True, 0)]
    message = parse_response(
        "Sure.<call>get_weather{city=Oslo;days=2}</call></>",
        result.template,
        prefix="<assistant>",
        tools=[
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
        ],
    )
    assert message["content"] == "Sure."
    assert [call["function"] for call in message["tool_calls"]] == [
        {"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}
    ]


def _inferred_shared(name: str):
    """The inference of a shared chat template, with the tokens its manifest entry gives."""
    entry = next(entry for entry in MANIFEST if entry["file"] == name)
    return infer_template(
        (CHAT_TEMPLATES / name).read_text(encoding="utf-8"),
        bos_token=entry["bos_token"],
        eos_token=entry["eos_token"],
    )


@needs_shared
def test_the_call_marker_granite_s_tools_instructions_name_reads_its_calls():
    result = _inferred_shared("granite-3.3.jinja")
    assert result.passed and result.complete
    output = (
        'Let me check.<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "get_time", "arguments": {"tz": "CET"}}]<|end_of_text|>'
    )
    message = parse_response(
        output, result.template, prefix="<|start_of_role|>assistant<|end_of_role|>"
    )
    assert message == {
        "role": "assistant",
        "content": "Let me check.",
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
            },
            {"type": "function", "function": {"name": "get_time", "arguments": {"tz": "CET"}}},
        ],
    }


@needs_shared
def test_calls_whose_renders_write_strings_unquoted_are_learnt_from_the_renders_that_keep_them():
    # llama32-pythonic's renders write strings unquoted inside a Python-style list
    # (`label=wake up`): those renders are no evidence; the render of a call with typed
    # arguments alone is, and the aligner reads it as Python.
    result = _inferred_shared("llama32-pythonic.jinja")
    assert result.template["fields"]["tool_calls"]["content"] == "python-call-list"
    assert result.passed and result.notes == []


@needs_shared
def test_the_calls_of_real_chat_templates_transformers_refuses_to_render_are_learnt():
    """kimi-k2-instruct keeps its call ids in a list it appends to; functiongemma-litert joins
    argument values with ``+``: transformers renders none of their calls, inference renders them
    adapted and learns the syntax (before, both were partial: tool_calls missing)."""
    kimi = _inferred_shared("kimi-k2-instruct.jinja")
    assert kimi.complete and kimi.passed
    assert kimi.template["fields"]["tool_calls"]["open_pattern"] == (
        "<\\|tool_call_begin\\|>functions\\.(?P<name>[A-Za-z_][\\w\\-]*(?:\\.[\\w\\-]+)*):\\d+<\\|tool_call_argument_begin\\|>"
    )
    output = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"city": "Paris", "days": 1}<|tool_call_end|>'
        "<|tool_calls_section_end|><|im_end|>"
    )
    assert parse_response(output, kimi.template, prefix="<|im_assistant|>assistant<|im_middle|>")[
        "tool_calls"
    ] == [
        {
            "type": "function",
            "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 1}},
        }
    ]
    litert = _inferred_shared("functiongemma-litert.jinja")
    assert litert.complete and litert.passed
    assert [(each.description, each.passed) for each in litert.candidates] == [("as learnt", True)]
    assert any(
        f.key == "fields.tool_calls" and f.how.startswith("the renders write their calls")
        for f in litert.findings
    )
    message = parse_response(
        "<start_function_call>call:get_weather{city:Paris,days:2}<end_function_call>",
        litert.template,
        prefix="<start_of_turn>model\n",
        tools=[
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
        ],
    )
    assert message == {
        "role": "assistant",
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}},
            }
        ],
    }


# A chat template that takes tools and writes no call, whose instructions name a marker to start
# calls with (inside a sentence, nothing closing it).
NAMED_MARKER = (
    "{%- if tools %}<sys>To use a tool, reply with <|do|> followed by a JSON list of calls. "
    "Tools: {{ tools | tojson }}</>{% endif -%}"
    "{%- for m in messages -%}<{{ m.role }}>{{ m.content or '' }}</>{% endfor -%}"
    "{%- if add_generation_prompt %}<assistant>{% endif -%}"
)


def test_a_lone_marker_the_tools_instructions_name_opens_the_calls_a_documented_fallback():
    result = infer_template(NAMED_MARKER)
    assert result.template["fields"]["tool_calls"] == {
        "open_pattern": "<\\|do\\|>(?=\\s*\\[)",
        "close_pattern": "(?<=\\])\\s*(?:</>)",
        "content": "json",
        "transform_each": True,
        "transform": {
            "type": "function",
            "function": {"name": "{name}", "arguments": "{arguments}"},
        },
    }
    assert result.fallbacks == [
        "tool calls after '<|do|>': only the system prompt's instructions name it, no render "
        "writes one, and the payload's keys are a call's own in a message"
    ]
    message = parse_response(
        'Sure.<|do|>[{"name": "get_time", "arguments": {"tz": "UTC"}}]</>',
        result.template,
        prefix="<assistant>",
    )
    assert message == {
        "role": "assistant",
        "content": "Sure.",
        "tool_calls": [
            {"type": "function", "function": {"name": "get_time", "arguments": {"tz": "UTC"}}}
        ],
    }
    # Said of one call, an object per call; a marker that heads the section is not one named.
    single = infer_template(NAMED_MARKER.replace("a JSON list of calls", "one JSON object"))
    assert single.template["fields"]["tool_calls"]["open_pattern"] == "<\\|do\\|>(?=\\s*\\{)"
    assert single.template["fields"]["tool_calls"]["repeats"] is True
    headed = infer_template(
        NAMED_MARKER.replace(
            "<sys>To use a tool, reply with <|do|> followed by", "<|do|>Reply with"
        )
    )
    assert "tool_calls" not in headed.template["fields"] and not headed.fallbacks


# A chat template whose thinking switch only adds instructions naming the markers: no render
# writes reasoning.
INSTRUCTED_REASONING = (
    "{%- if enable_thinking %}<sys>Think first. Write your thoughts between <t></t> and your "
    "answer between <a></a>.</>{% endif -%}"
    "{%- for m in messages -%}<{{ m.role }}>{{ m.content or '' }}</>{% endfor -%}"
    "{%- if add_generation_prompt %}<assistant>{% endif -%}"
)


def test_the_markers_a_thinking_switch_s_instructions_name_are_the_reasoning_s_a_fallback():
    result = infer_template(INSTRUCTED_REASONING)
    assert result.thinking_switch == "enable_thinking"
    assert result.template["fields"] == {
        "reasoning_content": {"open": "<t>", "close": "</t>"},
        "content": {"close": ["<a>", "</a>", "</>"]},
    }
    assert result.fallbacks == [
        "reasoning between '<t>' and '</t>': only the instructions the thinking switch turns on "
        "name them, no render writes reasoning"
    ]
    message = parse_response(
        "<t>Short question.</t><a>Yes.</a></>", result.template, prefix="<assistant>"
    )
    assert message == {
        "role": "assistant",
        "reasoning_content": "Short question.",
        "content": "Yes.",
    }
    # Markers a turn writes are the turn's own, not the ones the instructions name.
    written = infer_template(
        INSTRUCTED_REASONING.replace("{{ m.content or '' }}", "<t></t>{{ m.content or '' }}")
    )
    assert not written.fallbacks


# A chat template that writes reasoning only from a thinking chunk of the content.
CHUNKED_REASONING = (
    "{%- for m in messages -%}<{{ m.role }}>"
    "{%- if m.content is string %}{{ m.content }}{% else %}{% for c in m.content %}"
    "{%- if c.type == 'thinking' %}[R]{{ c.thinking }}[/R]{% else %}{{ c.text }}{% endif %}"
    "{%- endfor %}{% endif %}</>{% endfor -%}"
    "{%- if add_generation_prompt %}<assistant>{% endif -%}"
)


def test_reasoning_a_chat_template_reads_from_a_thinking_chunk_of_the_content_is_learnt():
    result = infer_template(CHUNKED_REASONING)
    assert result.template["fields"] == {
        "reasoning_content": {"open": "[R]", "close": "[/R]"},
        "content": {"close": "</>"},
    }
    assert parse_response("[R]Easy.[/R]Yes.</>", result.template, prefix="<assistant>") == {
        "role": "assistant",
        "reasoning_content": "Easy.",
        "content": "Yes.",
    }
    # A chat template that writes the content list as it is (its repr) shows no reasoning.
    as_data = infer_template(
        "{%- for m in messages -%}<{{ m.role }}>{{ m.content }}</>{% endfor -%}"
        "{%- if add_generation_prompt %}<assistant>{% endif -%}"
    )
    assert as_data.template["fields"] == {"content": {"close": "</>"}}


@pytest.mark.parametrize(
    "chat_template, message",
    [
        (
            "{{ raise_exception('no chat here') }}",
            "the chat template does not render a first user turn with a generation prompt: user + generation prompt: "
            "TemplateError: no chat here",
        ),
        (
            "{% set x = 'a' * 1000000 %}{{ x ~ x ~ x }}",
            "the chat template does not render a first user turn with a generation prompt: user + generation prompt: "
            "the render is 3,000,000 characters long, over 2,000,000",
        ),
        ("   ", "the chat template is empty: paste the Jinja text of the model's chat template"),
    ],
)
def test_a_chat_template_that_renders_nothing_gets_a_clear_message(chat_template, message):
    with pytest.raises(InferenceError) as raised:
        infer_template(chat_template)
    assert str(raised.value) == message


def test_a_chat_template_that_refuses_tools_gives_a_template_without_them():
    refusing = (
        "{%- if tools %}{{ raise_exception('tools are not supported') }}{% endif -%}"
        "{%- for m in messages %}#{{ m.role }}: {{ m.content }}\n{% endfor -%}{%- if add_generation_prompt %}#assistant: {% endif -%}"
    )
    result = infer_template(refusing)
    assert result.template == {
        "defaults": {"role": "assistant"},
        "start_anchor": "#assistant:",
        "fields": {"content": {"close": "#user:"}},
    }
    assert result.fallbacks == [
        "content close '#user:': no end-of-turn marker is written, so the next user turn's header "
        "ends the answer"
    ]
    assert result.passed
    assert "user + generation prompt: TemplateError: tools are not supported" in result.refusals


def test_a_looping_chat_template_is_stopped_within_the_budget():
    looping = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    started = time.monotonic()
    with pytest.raises(InferenceError) as raised:
        infer_template_isolated(looping, seconds=2)
    assert str(raised.value) == (
        "inference ran out of time after 2 s: it was stopped 5 s later, inside one render (the "
        "chat template may loop, or render a very long output)"
    )
    assert raised.value.hint == "time_budget"
    assert time.monotonic() - started < 30  # the process was killed: the loop would run for hours


def test_inference_past_its_time_budget_says_inference_ran_out_and_hints_at_the_budget():
    slow = (
        "{% for i in range(1200) %}{% for j in range(1200) %}{% endfor %}{% endfor %}"
        "{%- for m in messages %}<|{{ m.role }}|>{{ m.content }}<|eot|>{% endfor -%}"
        "{%- if add_generation_prompt %}<|assistant|>{% endif -%}"
    )
    with pytest.raises(InferenceError) as raised:
        infer_template(slow, time_budget=0.001)
    assert str(raised.value) == (
        "inference ran out of time after 0.001 s: the time budget ran out while rendering: "
        "the chat template renders too slowly"
    )
    assert raised.value.hint == "time_budget"


# -- the real chat templates --------------------------------------------------------------------------


@needs_shared
@pytest.mark.parametrize("entry", MANIFEST, ids=[entry["file"] for entry in MANIFEST])
def test_inference_on_each_real_chat_template_passes_its_matrix(entry):
    chat_template = (CHAT_TEMPLATES / entry["file"]).read_text(encoding="utf-8")
    result = infer_template(
        chat_template, bos_token=entry["bos_token"], eos_token=entry["eos_token"]
    )
    assert result.passed, [row.name + ": " + row.detail for row in result.report.failed]


# -- inferred against shipped, on each family's samples ----------------------------------------------

MARKUP = re.compile(r"<[^<>\s][^<>\n]{0,80}>|\[[A-Za-z_/][^\[\]\n\"]{0,80}\]")
JSON_KEY = re.compile(r'"(\w+)"\s*:')
# Differences no render can show, by (chat template, sample): the sample writes plain-text markers.
EXPLAINED = {
    (
        "granite-3.3.jinja",
        "granite-3.2-thought-process",
    ): "its generation marks reasoning and answer with plain text (Here is my thought process:), which no render writes",
    (
        "gpt-oss.jinja",
        "stray-header-before-analysis",
    ): "the model writes a stray channel header (commentary to=assistant) that no render writes",
    (
        "gpt-oss.jinja",
        "stray-header-before-final",
    ): "the model writes a stray channel header (commentary to=assistant) that no render writes",
}


def explain_difference(result, sample) -> str | None:
    """Why the inferred template reads `sample` differently from the shipped one, from what the chat
    template writes (None when nothing explains it)."""
    turns = [
        row.generation for row in result.report.situations if row.renderable and row.generation
    ]
    markers = {marker for text in turns for marker in MARKUP.findall(text)}
    keys = {key for text in turns for key in JSON_KEY.findall(text)}
    cut = prefix_cut(load_template(result.template), sample.prefix, None) or 0
    tail = sample.prefix[cut:].strip()
    if (
        tail
        and tail not in {text.strip() for text in result.prewritten.values()}
        and MARKUP.search(tail)
    ):
        return f"its prompt ends with {tail[:60]!r} after the start anchor, which this chat template never writes"
    new = sorted(set(MARKUP.findall(sample.generation)) - markers)
    if new:
        return f"its generation writes {new}, which this chat template never writes in a turn"
    arguments = {
        key
        for call in sample.expected.get("tool_calls", [])
        for key in call["function"]["arguments"]
    }
    new = sorted(set(JSON_KEY.findall(sample.generation)) - keys - arguments)
    if new:
        return f"its calls use the keys {new}, which this chat template never writes"
    if sample.expected.get("tool_calls"):
        call_renders = [
            row.generation
            for row in result.report.situations
            if row.renderable and "tool-call" in row.name
        ]
        always = (
            set.intersection(*(set(MARKUP.findall(text)) for text in call_renders))
            if call_renders
            else set()
        )
        missing = sorted(always - set(MARKUP.findall(sample.generation)))
        if missing:
            return f"its calls lack {missing}, which this chat template writes in every call"
        if len(sample.expected["tool_calls"]) > 1 and any(
            "assistant (calls)" in refusal for refusal in result.refusals
        ):
            return "it has several calls in one turn, which this chat template refuses to write"
    return None


@needs_shared
@pytest.mark.parametrize("entry", MANIFEST, ids=[entry["file"] for entry in MANIFEST])
def test_the_inferred_template_reads_the_familys_samples_as_the_shipped_one_or_the_difference_is_explained(
    entry,
):
    family = TEMPLATE_FOR.get(entry["file"], entry["family"])
    samples = [
        sample
        for sample in load_samples()
        if sample.template_name == family and sample.expected is not None
    ]
    result = infer_template(
        (CHAT_TEMPLATES / entry["file"]).read_text(encoding="utf-8"),
        bos_token=entry["bos_token"],
        eos_token=entry["eos_token"],
    )
    unexplained = []
    for sample in samples:
        # Strict first, as the expected messages are; kept only where a region fails (lenient
        # reading also consumes a close with no open, which content may mention on purpose).
        read = functools.partial(
            parse_response, sample.generation, result.template, prefix=sample.prefix
        )
        try:
            got = read(tools=sample.tools)
        except ResponseParseError:
            got = read(tools=sample.tools, on_error="keep")
        if got == sample.expected:
            continue
        why = EXPLAINED.get((entry["file"], sample.name)) or explain_difference(result, sample)
        if why is None:
            unexplained.append((sample.name, got))
    assert not unexplained


# -- the command line --------------------------------------------------------------------------------


def run_infer(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "engine", "infer", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )


def test_the_command_writes_the_file_and_exits_0_when_the_matrix_passes(tmp_path):
    done = run_infer("--chat-template", str(SYNTHETIC / "kv-lines.jinja"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads((tmp_path / "kv-lines.json").read_text(encoding="utf-8"))
    assert not list(FILE_VALIDATOR.iter_errors(data))
    assert data["response_template"] == {"defaults": {"role": "assistant"}, **EXPECTED["kv-lines"]}
    lines = done.stdout.splitlines()
    assert lines[0] == f"inferred from {SYNTHETIC / 'kv-lines.jinja'}: wrote kv-lines.json"
    assert (
        'fields.tool_calls.open_pattern = "<action\\\\s*(?P<name>[A-Za-z_][\\\\w\\\\-]*(?:\\\\.[\\\\w\\\\-]+)*)>\\\\s*"'
        in lines
    )
    assert (
        "    the renders write their calls as the name, then its arguments as key and value pairs; "
        "this content parser reads them back" in lines
    )
    assert lines[-1] == "matrix: 20 passed, 0 failed, 0 not renderable"


def test_the_command_exits_1_and_lists_the_failing_rows_when_the_matrix_fails(tmp_path):
    (tmp_path / "calls.jinja").write_text(UNREADABLE_CALLS, encoding="utf-8")
    done = run_infer("--chat-template", "calls.jinja", "--output", "out.json", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert any(
        note.startswith("fails: first-turn-tools/round-trip:tool-call:") for note in data["notes"]
    )
    assert "  FAIL first-turn-tools/round-trip:tool-call: " in done.stdout


def _jsonl(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path.name


def test_the_authors_loop_adding_the_first_unread_output_fixes_it_and_keeps_the_examples(
    tmp_path,
):
    """`--outputs` names the outputs the inferred template cannot read; adding the first to the
    examples and inferring again reads it, the other output that shows the same, and every
    earlier example."""
    (tmp_path / "chat.jinja").write_text(LISTS_TOOLS, encoding="utf-8")
    examples, outputs = EXAMPLES, OUTPUTS
    first = run_infer(
        "--chat-template",
        "chat.jinja",
        "--examples",
        _jsonl(tmp_path / "examples.jsonl", examples),
        "--outputs",
        _jsonl(tmp_path / "outputs.jsonl", outputs),
        cwd=tmp_path,
    )
    assert first.returncode == 1, first.stdout + first.stderr
    lines = first.stdout.splitlines()
    assert lines[lines.index("outputs: 1 of 3 read") :] == [
        "outputs: 1 of 3 read",
        "  UNREAD output 2: reasoning_content: expected 'The user wants rain news.', got ''; "
        "content: expected 'It rains in Oslo.', got '<r>The user wants rain news.</r>It rains in "
        "Oslo.'",
        "  UNREAD output 3: reasoning_content: expected 'Check the sky first.', got ''; content: "
        "expected '', got '<r>Check the sky first.</r>'",
        "next: add output 2 to the examples (examples.jsonl) and infer again",
    ]
    again = run_infer(
        "--chat-template",
        "chat.jinja",
        "--examples",
        _jsonl(tmp_path / "examples.jsonl", [*examples, outputs[1]]),
        "--outputs",
        "outputs.jsonl",
        "--json",
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    result = json.loads(again.stdout)
    assert result["unread_outputs"] == []
    kept = next(each for each in result["candidates"] if each["template"] == result["template"])
    assert kept["example_problems"] == [] and kept["passed"]
    assert result["template"]["fields"]["reasoning_content"] == {"open": "<r>", "close": "</r>"}


def test_the_command_exits_2_when_nothing_can_be_inferred(tmp_path):
    (tmp_path / "broken.jinja").write_text(
        "{{ raise_exception('no chat here') }}", encoding="utf-8"
    )
    done = run_infer("--chat-template", "broken.jinja", "--json", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout.strip() == (
        "error: the chat template does not render a first user turn with a generation prompt: "
        "user + generation prompt: TemplateError: no chat here"
    )
    assert not (tmp_path / "broken.json").exists()


# -- choosing a template --------------------------------------------------------------------------------


def test_a_chat_template_no_shipped_template_conforms_with_gets_the_inferred_one():
    template, reason = choose_template((SYNTHETIC / "kv-lines.jinja").read_text(encoding="utf-8"))
    assert template == {"defaults": {"role": "assistant"}, **EXPECTED["kv-lines"]}
    assert reason == "inferred from the chat template: no shipped template conforms (none proposed)"


def test_a_family_rule_that_proposes_a_wrong_template_is_overruled_by_the_check():
    # The source mentions Qwen3's markers (in a comment), so the family rules propose qwen3: it fails the
    # check against this chat template, and the inferred template, which passes, is chosen instead.
    chat_template = "{#- not <|im_start|> with <think> -#}\n" + (
        SYNTHETIC / "reasoning-in-turn.jinja"
    ).read_text(encoding="utf-8")
    assert family_template(chat_template)[0] == "qwen3"
    assert not check_conformance(
        load_template_file("qwen3").response_template, chat_template
    ).passed
    template, reason = choose_template(chat_template)
    assert template == {"defaults": {"role": "assistant"}, **EXPECTED["reasoning-in-turn"]}
    assert reason == "inferred from the chat template: no shipped template conforms (1 checked)"


@needs_shared
@pytest.mark.parametrize("entry", MANIFEST, ids=[entry["file"] for entry in MANIFEST])
def test_each_real_chat_template_gets_a_shipped_template_that_conforms(entry):
    chat_template = (CHAT_TEMPLATES / entry["file"]).read_text(encoding="utf-8")
    template, reason = choose_template(
        chat_template, bos_token=entry["bos_token"], eos_token=entry["eos_token"]
    )
    name = TEMPLATE_FOR.get(entry["file"], entry["family"])
    assert template == load_template_file(name).response_template
    assert reason.startswith(
        f"templates/{name}.json conforms to the chat template (the family rules propose it: "
    )


# Python-style calls one a line inside a block, string values between single quotes and
# booleans written lowercase.
SINGLE_QUOTED_CALLS = assistant_calls_chat_template(
    "<|calls|>\n{% for c in m.tool_calls %}{{ c.function.name }}("
    "{% for k, v in c.function.arguments.items() %}{{ k }}="
    "{% if v is string %}'{{ v }}'{% else %}{{ v | tojson }}{% endif %}"
    "{% if not loop.last %}, {% endif %}{% endfor %})"
    "{% if not loop.last %}\n{% endif %}{% endfor %}\n<|/calls|>"
)


def test_single_quotes_around_a_string_argument_are_the_syntaxs_not_the_values():
    result = infer_template(SINGLE_QUOTED_CALLS)
    assert result.passed
    message = parse_response(
        "<|calls|>\nget_weather(city='São Paulo', days=3)\nset_alarm(hour=7, enabled=true)\n"
        "<|/calls|><|eot|>",
        result.template,
        prefix="<|user|>hi<|eot|>\n<|assistant|>",
    )
    assert [call["function"] for call in message["tool_calls"]] == [
        {"name": "get_weather", "arguments": {"city": "São Paulo", "days": 3}},
        {"name": "set_alarm", "arguments": {"hour": 7, "enabled": True}},
    ]


# The last user message carries an instruction only while it is the last message (the
# finished conversation writes it without), and the generation prompt adds nothing.
INSTRUCTION_WHILE_LAST = (
    "{%- for m in messages -%}{%- if m.role == 'user' -%}[INST] "
    "{%- if loop.last %}Answer briefly.\n\n{% endif -%}{{ m.content }}[/INST]"
    "{%- elif m.role == 'assistant' -%}{%- if m.tool_calls -%}[CALLS] "
    "{{ m.tool_calls | map(attribute='function') | list | tojson }}"
    "{%- else %} {{ m.content }}{%- endif -%}</s>"
    "{%- else -%}[RESULT] {{ m.content }}[/RESULT]{%- endif -%}{%- endfor -%}"
)


def test_a_turn_follows_the_prompt_though_the_prompt_adds_an_instruction_the_conversation_drops():
    result = infer_template(INSTRUCTION_WHILE_LAST)
    assert result.passed
    assert sorted(result.template["fields"]) == ["content", "tool_calls"]
    prompt = "[INST] Answer briefly.\n\nWeather in Paris?[/INST]"
    assert parse_response(
        '[CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]</s>',
        result.template,
        prefix=prompt,
    )["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": {"city": "Paris"}}
    assert parse_response(" Sunny.</s>", result.template, prefix=prompt)["content"] == "Sunny."


# Each argument in markup of its own, 44 characters from one value to the next key.
VERBOSE_ARGUMENT_MARKUP = assistant_calls_chat_template(
    "<|open|>tools<|sep|>{% for c in m.tool_calls %}"
    '<|open|>call tool="{{ c.function.name }}"<|sep|>'
    "{% for k, v in c.function.arguments.items() %}"
    '<|open|>argument key="{{ k }}"<|sep|>{{ v | tojson }}<|close|>argument<|sep|>'
    "{% endfor %}<|close|>call<|sep|>{% endfor %}<|close|>tools<|sep|>"
)


def test_arguments_apart_by_long_markup_are_read_as_pairs():
    result = infer_template(VERBOSE_ARGUMENT_MARKUP)
    assert result.passed
    message = parse_response(
        '<|open|>tools<|sep|><|open|>call tool="get_weather"<|sep|>'
        '<|open|>argument key="city"<|sep|>"Paris"<|close|>argument<|sep|>'
        '<|open|>argument key="days"<|sep|>3<|close|>argument<|sep|>'
        "<|close|>call<|sep|><|close|>tools<|sep|><|eot|>",
        result.template,
        prefix="<|user|>hi<|eot|>\n<|assistant|>",
    )
    assert [call["function"] for call in message["tool_calls"]] == [
        {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}
    ]
