"""Template inference's real-output rules on the small chat templates in tests/support/chat_templates
(no development material needed): what real models vary (blanks, a closer without its opener,
joined calls, a value's own newline, string arguments), the evidence besides renders (the
chat template's source, its system prompt for tools, a tokenizer, example outputs), partial
results, and templates that transformers' own parser reads the same way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine import infer_template, parse_response
from engine.chat_templates.evidence import load_examples_file, read_examples
from engine.chat_templates.markup import closes, marker_pairs
from engine.chat_templates.tokens import marker_tokens, token_pairs
from tests.support.paths import CHAT_TEMPLATE_FIXTURES, ROOT
from tests.support.tokenizers import demo_tokenizer_with_placeholders, placeholder_tokens

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
RUN = [
    {
        "type": "function",
        "function": {
            "name": "run",
            "parameters": {
                "type": "object",
                "properties": {
                    "code": {"type": "string"},
                    "zip": {"type": "string"},
                    "n": {"type": "integer"},
                },
            },
        },
    }
]


def inferred(name: str, **options):
    return infer_template(
        (CHAT_TEMPLATE_FIXTURES / f"{name}.jinja").read_text(encoding="utf-8"), **options
    )


@pytest.fixture(scope="module")
def templates():
    names = [
        "xml-parameters",
        "key-value-tags",
        "forced-open",
        "bare-json-parameters",
        "reasoning-in-turn",
        "recipient",
        "lead-reasoning",
        "typed-tags",
        "split-reasoning",
        "described-calls",
    ]
    return {name: inferred(name) for name in names}


def call(name: str, arguments: dict) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


# (chat template, prefix, output, tools, message): outputs written the way real models vary.
OUTPUTS = {
    "newlines around a tagged value, the value's own trailing newline and a string argument kept": (
        "xml-parameters",
        "<turn assistant>",
        "<tool name=run>\n<arg=code>\ndef f():\n    return 1\n\n</arg>\n<arg=zip>75001</arg>\n<arg=n>3</arg>\n</tool></turn>",
        RUN,
        {
            "role": "assistant",
            "tool_calls": [
                call("run", {"code": "def f():\n    return 1\n", "zip": "75001", "n": 3})
            ],
        },
    ),
    "a quoted string argument keeps its quotes": (
        "xml-parameters",
        "<turn assistant>",
        '<tool name=run><arg=code>"foo"</arg></tool></turn>',
        RUN,
        {"role": "assistant", "tool_calls": [call("run", {"code": '"foo"'})]},
    ),
    "blanks between two tags the render writes side by side": (
        "key-value-tags",
        "### assistant",
        "<invoke>get_weather\n<k>city</k>\n<v>Oslo</v>\n<k>days</k>\n<v>3</v>\n</invoke>### stop",
        WEATHER,
        {"role": "assistant", "tool_calls": [call("get_weather", {"city": "Oslo", "days": 3})]},
    ),
    "two calls joined by a semicolon where the chat template renders one a turn": (
        "bare-json-parameters",
        "[assistant]:",
        '{"name": "get_weather", "parameters": {"city": "Oslo"}}; { "name":"get_weather","parameters": {"city": "Rome"}}[end]',
        None,
        {
            "role": "assistant",
            "tool_calls": [
                call("get_weather", {"city": "Oslo"}),
                call("get_weather", {"city": "Rome"}),
            ],
        },
    ),
    "a call quoted inside reasoning that is closed later stays reasoning": (
        "reasoning-in-turn",
        "<|begin|>assistant\n",
        '<mind>I could write <invoke>{"name": "x", "arguments": {}}</invoke> but no.</mind>Answer<|finish|>',
        None,
        {
            "role": "assistant",
            "reasoning_content": 'I could write <invoke>{"name": "x", "arguments": {}}</invoke> but no.',
            "content": "Answer",
        },
    ),
    "a call written inside reasoning that never closes ends it": (
        "reasoning-in-turn",
        "<|begin|>assistant\n",
        '<mind>need it <invoke>{"name": "get_weather", "arguments": {"city": "Oslo"}}</invoke><|finish|>',
        None,
        {
            "role": "assistant",
            "reasoning_content": "need it",
            "tool_calls": [call("get_weather", {"city": "Oslo"})],
        },
    ),
    "a recipient format: the prompt writes the first segment's marker": (
        "recipient",
        "<|turn|>user\nWeather?<|stop|>\n<|turn|>assistant\n::to=",
        'all\nLet me look.::to=get_weather\n{"city": "Oslo"}::to=get_weather\n{"city": "Rome"}<|stop|>',
        None,
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                call("get_weather", {"city": "Oslo"}),
                call("get_weather", {"city": "Rome"}),
            ],
        },
    ),
    "reasoning that starts the turn with no opener, after a plain-text lead the prompt writes": (
        "lead-reasoning",
        "<|user|>\nHi<|end|>\n<|assistant|>\nMy thoughts first:\n",
        "The user greets me.\n[[ANSWER]]\nHello!<|end|>",
        None,
        {"role": "assistant", "reasoning_content": "The user greets me.", "content": "Hello!"},
    ),
    "a tag attribute that names the value's type": (
        "typed-tags",
        "<|a|>",
        '<call name="run">\n<arg name="zip" text="yes">75001</arg>\n<arg name="n" text="no">3</arg>\n</call><|z|>',
        RUN,
        {"role": "assistant", "tool_calls": [call("run", {"zip": "75001", "n": 3})]},
    ),
    "reasoning markers only the chat template's source names": (
        "split-reasoning",
        "<|user|>Hi<|eot|>\n<|assistant|>",
        "<ponder>hm</ponder>Hello<|eot|>",
        None,
        {"role": "assistant", "reasoning_content": "hm", "content": "Hello"},
    ),
    "a call syntax only the system prompt for tools describes": (
        "described-calls",
        "<|user|>Weather?<|eot|>\n<|assistant|>",
        '<exec>{"tool": "get_weather", "args": {"city": "Oslo"}}</exec><|eot|>',
        WEATHER,
        {"role": "assistant", "tool_calls": [call("get_weather", {"city": "Oslo"})]},
    ),
}


@pytest.mark.parametrize("case", sorted(OUTPUTS))
def test_an_inferred_template_reads_what_models_really_write(templates, case):
    name, prefix, output, tools, message = OUTPUTS[case]
    assert parse_response(output, templates[name].template, prefix=prefix, tools=tools) == message


@pytest.mark.parametrize("case", sorted(OUTPUTS))
def test_transformers_reads_the_inferred_template_the_same_way(templates, case):
    reference = pytest.importorskip("transformers.utils.chat_parsing")
    name, prefix, output, tools, _ = OUTPUTS[case]
    template = templates[name].template
    ours = parse_response(output, template, prefix=prefix, tools=tools)
    assert reference.parse_response(output, template, prefix=prefix, tools=tools) == ours


NEW_TEMPLATES = {  # tests/support/chat_templates/NAME.jinja -> the inferred fields that show the rule
    "recipient": {
        "start_anchor": "<|turn|>assistant",
        "tool_calls.open_pattern": "::to=(?P<name>[A-Za-z_][\\w\\-]*(?:\\.[\\w\\-]+)*)\\s*(?=\\s*\\{)",
        "tool_calls.close_pattern": "(?<=[}\\]])(?:\\s*[,;])?(?=\\s*(?:::to=|<\\|stop\\|>|$))",
        "content.close": ["<|stop|>", "::to=all", "::to=", "<|turn|>"],
    },
    "lead-reasoning": {
        "start_anchor_pattern": "<\\|assistant\\|>(?:\\s*(?:My\\s*thoughts\\s*first:))?",
        "reasoning_content.open_pattern": "^(?=.*?\\[\\[ANSWER\\]\\])",
    },
    "typed-tags": {
        "tool_calls.content_args": {
            "tag_pattern": '<arg\\s*name="(?P<key>[A-Za-z_][\\w.\\-]*)"\\s*text="(?P<kind>[\\w\\-]+)">\\n?(?P<value>.*?)\\n?</arg>',
            "value_parser_by": {
                "group": "kind",
                "parsers": {"no": {"name": "json", "args": {"allow_non_json": True}}, "yes": None},
            },
            "value_parser": {"name": "json", "args": {"allow_non_json": True}},
        },
    },
    "split-reasoning": {
        "reasoning_content.open": "<ponder>",
        "reasoning_content.close": "</ponder>",
    },
}


def _at(template: dict, path: str):
    value = template if path.startswith("start_anchor") else template["fields"]
    for key in path.split("."):
        value = value[key]
    return value


@pytest.mark.parametrize("name", sorted(NEW_TEMPLATES))
def test_each_new_chat_template_gives_the_delimiters_of_its_rule_and_passes_its_matrix(
    templates, name
):
    result = templates[name]
    for path, value in NEW_TEMPLATES[name].items():
        assert _at(result.template, path) == value, path
    assert result.passed and result.complete and result.exit_code == 0


def test_markers_only_the_source_names_are_found_with_the_source_as_evidence(templates):
    result = templates["split-reasoning"]
    finding = next(f for f in result.findings if f.key == "fields.reasoning_content.open")
    assert finding.how == (
        "the chat template's source looks for it (or for its closer), and drops an earlier turn's "
        "text up to the closer"
    )
    assert finding.renders[0].label == "the chat template's source: the markers it looks for"
    assert finding.renders[0].text == "</ponder>"


def test_a_syntax_only_the_system_prompt_describes_is_a_fallback_with_its_evidence(templates):
    result = templates["described-calls"]
    assert result.fallbacks == [
        "tool calls between '<exec>' and '</exec>': only the system prompt's instructions "
        "describe them, no render writes one"
    ]
    finding = next(f for f in result.findings if f.key == "fields.tool_calls")
    assert [render.label for render in finding.renders] == [
        "first turn without tools",
        "first turn with tools",
    ]


def test_a_chat_template_that_lists_tools_but_writes_no_call_gives_a_partial_template():
    result = inferred("listed-tools")
    assert "tool_calls" not in result.template["fields"]
    assert result.passed and not result.complete and result.exit_code == 1
    assert [missing.part for missing in result.missing] == ["tool_calls"]
    assert result.verdict() == (
        "a partial template: tool_calls could not be inferred; the parts inferred pass the "
        "matrix (16 rows)"
    )
    assert (
        "missing: tool_calls not inferred: the chat template writes the tools into the prompt "
        in ("\n".join(result.template_file("listed-tools")["notes"]))
    )


EXAMPLES = [
    {"prefix": "<|user|>Hi<|eot|>\n<|assistant|>", "output": "Hello!<|eot|>"},
    {
        "prefix": "<|sys|>Tools: []<|eot|>\n<|user|>Weather?<|eot|>\n<|assistant|>",
        "output": 'Checking.<<go>>[get_weather(city="Oslo")]<</go>><|eot|>',
        "tools": WEATHER,
    },
]


def test_an_example_whose_prompt_lacks_the_pre_written_opener_makes_its_closer_read_without_it():
    plain = inferred("forced-open")
    assert plain.template["fields"]["reasoning_content"]["open"] == "[reflect]"
    prefix = "<<user>>\nWeather?<<done>>\n<<assistant>>\n"  # another stack's prompt: no [reflect]
    examples = [
        {
            "prefix": prefix,
            "output": "Need the forecast.[/reflect]Sunny.<<done>>",
            "expected": {"reasoning_content": "Need the forecast.", "content": "Sunny."},
        }
    ]
    result = inferred("forced-open", examples=examples)
    assert result.template["fields"]["reasoning_content"]["open_pattern"] == (
        "\\[reflect\\]|^(?=(?:(?!\\[reflect\\]).)*?\\[/reflect\\])"
    )
    assert result.passed and result.candidates[-1].example_problems == []
    finding = next(f for f in result.findings if f.key == "fields.reasoning_content.open_pattern")
    assert finding.how.startswith("the prompt pre-writes '[reflect]', so the model starts inside")
    assert parse_response("Hello there.<<done>>", result.template, prefix=prefix) == {
        "role": "assistant",
        "content": "Hello there.",
    }
    assert parse_response("[reflect]Hm.[/reflect]Hi.<<done>>", result.template, prefix=prefix) == {
        "role": "assistant",
        "reasoning_content": "Hm.",
        "content": "Hi.",
    }


def test_examples_teach_a_call_syntax_no_render_shows():
    result = inferred("listed-tools", examples=EXAMPLES)
    assert result.template["fields"]["tool_calls"] == {
        "open": "<<go>>",
        "content": "python-call-list",
        "transform_each": True,
        "transform": {
            "type": "function",
            "function": {"name": "{name}", "arguments": "{arguments}"},
        },
        "close_pattern": "(?<=\\])\\s*<</go>>",
    }
    assert result.passed and result.complete and result.exit_code == 0
    finding = next(f for f in result.findings if f.key == "fields.tool_calls")
    assert [render.label for render in finding.renders] == [
        "example 1: the output",
        "example 2: the output",
    ]
    assert "the tool-call syntax comes from the example outputs (example 2)" in result.notes
    later = 'Sure.<<go>>[get_weather(city="Rome", days=2), get_weather(city="Oslo")]<</go>><|eot|>'
    assert parse_response(later, result.template, prefix="<|assistant|>", tools=WEATHER) == {
        "role": "assistant",
        "content": "Sure.",
        "tool_calls": [
            call("get_weather", {"city": "Rome", "days": 2}),
            call("get_weather", {"city": "Oslo"}),
        ],
    }


def test_examples_overrule_a_syntax_the_system_prompt_describes_but_the_model_does_not_write():
    examples = [
        {
            "prefix": "<|user|>Weather?<|eot|>\n<|assistant|>",
            "output": '<<go>>[get_weather(city="Oslo")]<</go>><|eot|>',
            "tools": WEATHER,
        }
    ]
    result = inferred("described-calls", examples=examples)
    assert result.template["fields"]["tool_calls"]["open"] == "<<go>>"
    assert result.fallbacks == []
    assert result.candidates[-1].example_problems == []


def test_a_marker_an_example_writes_that_no_field_explains_becomes_a_content_close():
    examples = [
        {
            "prefix": "<|assistant|>",
            "output": "Hello!<|eom|><|eot|>",
            "expected": {"content": "Hello!"},
        }
    ]
    result = inferred("listed-tools", examples=examples)
    assert result.template["fields"]["content"]["close"] == ["<|eot|>", "<|eom|>"]
    finding = next(f for f in result.findings if f.value == "<|eom|>")
    assert finding.how == (
        "example 1 writes it between the parts of its message, where no field explains it: a "
        "marker, dropped (aligned with the example outputs)"
    )


def test_the_tokenizers_paired_tokens_propose_reasoning_the_chat_template_confirms():
    transformers = pytest.importorskip("transformers")
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(ROOT / "samples" / "demo-model"))
    without = inferred("hidden-reasoning")
    assert "reasoning_content" not in without.template["fields"]
    result = inferred("hidden-reasoning", tokenizer=tokenizer)
    assert result.template["fields"]["reasoning_content"] == {
        "open": "<think>",
        "close": "</think>",
    }
    finding = next(f for f in result.findings if f.key == "fields.reasoning_content.open")
    assert finding.renders[0].label == "the tokenizer's added and special tokens"
    assert (
        "the tokenizer pairs <tool_call> … </tool_call>, which no render writes: if the model "
        "writes them (calls, reasoning), example outputs that show them let inference learn them"
    ) in result.notes


def test_a_thousand_numbered_special_tokens_never_pair_and_change_nothing():
    pytest.importorskip("transformers")
    tokenizer = demo_tokenizer_with_placeholders(1000)
    tokens = marker_tokens(tokenizer)
    assert tokens[-1000:] == placeholder_tokens(1000)
    assert token_pairs(tokens) == [
        ("<|im_start|>", "<|im_end|>"),
        ("<think>", "</think>"),
        ("<tool_call>", "</tool_call>"),
    ]
    result = inferred("hidden-reasoning", tokenizer=tokenizer)
    assert result.template["fields"]["reasoning_content"] == {
        "open": "<think>",
        "close": "</think>",
    }
    assert [note for note in result.notes if note.startswith("the tokenizer pairs")] == [
        "the tokenizer pairs <tool_call> … </tool_call>, which no render writes: if the model "
        "writes them (calls, reasoning), example outputs that show them let inference learn them"
    ]


def test_only_an_opening_word_or_a_slash_pairs_two_markup_tokens():
    markers = [
        "<|x_begin|>",
        "<|x_3|>",
        "<|x_7|>",
        "<|x_end|>",
        "<|fim_prefix|>",
        "<|fim_suffix|>",
        "<|START_X|>",
        "<|END_X|>",
        "<box>",
        "</box>",
        "</lone>",
        "<|assistant|>",
    ]
    assert marker_pairs(markers) == [
        ("<|x_begin|>", "<|x_end|>"),
        ("<|START_X|>", "<|END_X|>"),
        ("<box>", "</box>"),
    ]
    # A closer found alone proposes its opening form, after the pairs found whole.
    assert marker_pairs(markers, lone_closers=True) == [
        ("<|x_begin|>", "<|x_end|>"),
        ("<|START_X|>", "<|END_X|>"),
        ("<box>", "</box>"),
        ("<lone>", "</lone>"),
    ]
    assert not closes("<|x_3|>", "<|x_7|>")
    assert not closes("<|x_end|>", "<|x_begin|>")
    assert not closes("<|assistant|>", "</box>")


def test_calls_keyed_by_the_functions_name_are_learnt_by_aligning_the_renders():
    """The aligner run over the renders (each the message rendered and the text it became) reads
    a JSON object keyed by the function's name, and its field, with the list's brackets as closes only next to a call, is the first candidate's."""
    keyed = (
        "{%- for m in messages -%}<|{{ m.role }}|>{{ m.content or '' }}"
        "{%- if m.tool_calls %}<calls>[{% for c in m.tool_calls %}{% if not loop.first %}, {% endif %}"
        '{"{{ c.function.name }}": {{ c.function.arguments | tojson }}}{% endfor %}]</calls>{% endif %}'
        "<|eot|>{% endfor -%}{%- if add_generation_prompt %}<|assistant|>{% endif -%}"
    )
    result = infer_template(keyed)
    assert result.missing == []
    assert result.exit_code == 0
    assert [(c.description, c.passed) for c in result.candidates] == [("as learnt", True)]
    assert result.template["fields"]["content"] == {
        "close_pattern": "\\[(?=\\s*\\{)|(?<=\\})\\s*\\]|</calls>|<\\|eot\\|>|<calls>"
    }
    assert result.template["fields"]["tool_calls"]["transform"] == {
        "type": "function",
        "function": {"name": "{name}", "arguments": "{content}"},
    }
    finding = next(f for f in result.findings if f.key == "fields.tool_calls")
    assert finding.how == (
        "the renders write their calls as the name, then its arguments as a JSON object; this "
        "content parser reads them back"
    )
    output = '<calls>[{"get_weather": {"city": "Oslo"}}, {"get_time": {}}]</calls><|eot|>'
    message = parse_response(output, result.template, prefix="<|user|>hi<|eot|><|assistant|>")
    assert [call["function"] for call in message["tool_calls"]] == [
        {"name": "get_weather", "arguments": {"city": "Oslo"}},
        {"name": "get_time", "arguments": {}},
    ]
    assert message.get("content") in (None, "")


def test_a_chat_template_that_reads_variables_no_caller_passes_is_rendered_with_them_empty():
    needy = (
        "{%- set header = 'Today is ' + today + '.' -%}<|sys|>{{ header }}<|eot|>"
        "{%- for tool in tools %}{{ tool.function.name }}{% endfor -%}"
        "{%- for m in messages -%}<|{{ m.role }}|>{{ m.content }}<|eot|>{% endfor -%}"
        "{%- if add_generation_prompt %}<|assistant|>{% endif -%}"
    )
    result = infer_template(needy)
    assert result.passed
    assert result.template["start_anchor"] == "<|assistant|>"
    assert result.notes[-2:] == [
        "the chat template reads 'today', which no caller passes (apply_chat_template does not): "
        "rendered with it empty",
        "the chat template iterates tools even when none are given: rendered with tools=[]",
    ]


def test_a_turn_the_chat_template_appends_to_every_conversation_is_not_the_models():
    appending = (
        "{%- for m in messages -%}<|start|><|{{ m.role }}|>{{ m.content or '' }}<|stop|>{% endfor -%}"
        "<|start|><|sys|>Answer briefly, and only about the weather in the question.<|stop|>"
        "{%- if add_generation_prompt %}<|start|><|assistant|>{% endif -%}"
    )
    result = infer_template(appending)
    assert result.passed
    assert result.template["start_anchor"] == "<|start|><|assistant|>"
    assert all(
        "Answer briefly" not in close for close in result.template["fields"]["content"]["close"]
    )
    check = next(
        row for row in result.report.situations if row.name == "prefill/round-trip:continuation"
    )
    assert check.passed and check.normalisations == (
        "the chat template ends every conversation with '<|start|><|sys|>Answer briefly, and only "
        "about the weather in the question.<|stop|>', cut off",
    )


# -- examples: the API and the command line ----------------------------------------------------------


@pytest.mark.parametrize(
    "examples, message",
    [
        ([["a"]], "examples[0]: an example is a dict with prefix and output, got list"),
        ([{"prefix": "", "output": 3}], "examples[0].output: a string is required"),
        ([{"output": ""}], "examples[0].prefix: a string is required"),
        (
            [{"prefix": "", "output": "", "tools": {}}],
            "examples[0].tools: a list of tool schemas is required, got dict",
        ),
        (
            [{"prefix": "", "output": "", "expected": "x"}],
            "examples[0].expected: a message dict is required, got str",
        ),
    ],
)
def test_a_malformed_example_is_named_with_its_key(examples, message):
    with pytest.raises(ValueError) as raised:
        read_examples(examples)
    assert str(raised.value) == message


def test_an_examples_file_that_is_not_json_lines_names_the_line(tmp_path):
    path = tmp_path / "examples.jsonl"
    path.write_text('{"prefix": "", "output": "a"}\n\nnot json\n', encoding="utf-8")
    with pytest.raises(ValueError) as raised:
        load_examples_file(path)
    assert str(raised.value).startswith(f"{path}:3: not a JSON object: ")


def run_infer(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "engine", "infer", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_the_command_takes_examples_and_says_a_partial_template(tmp_path):
    chat_template = str(CHAT_TEMPLATE_FIXTURES / "listed-tools.jinja")
    partial = run_infer("--chat-template", chat_template, "--output", "partial.json", cwd=tmp_path)
    assert partial.returncode == 1, partial.stdout + partial.stderr
    assert (
        "a partial template: tool_calls could not be inferred; the parts inferred pass the matrix (16 rows)"
        in partial.stdout.splitlines()
    )
    (tmp_path / "examples.jsonl").write_text(
        "".join(json.dumps(example) + "\n" for example in EXAMPLES), encoding="utf-8"
    )
    done = run_infer(
        "--chat-template",
        chat_template,
        "--examples",
        "examples.jsonl",
        "--output",
        "full.json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads((tmp_path / "full.json").read_text(encoding="utf-8"))
    assert data["response_template"]["fields"]["tool_calls"]["open"] == "<<go>>"
    assert "the inferred template passes its matrix (16 rows)" in done.stdout.splitlines()
    bad = run_infer("--chat-template", chat_template, "--examples", "missing.jsonl", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stdout.startswith("error: [Errno 2] No such file or directory: 'missing.jsonl'")


def test_examples_that_write_json_calls_teach_a_json_call_syntax():
    examples = [
        {
            "prefix": "<|assistant|>",
            "output": '<<go>>{"type": "function", "tool": "get_weather", "with": {"city": "Oslo"}}<</go>><|eot|>',
            "tools": WEATHER,
        }
    ]
    result = inferred("listed-tools", examples=examples)
    assert result.template["fields"]["tool_calls"] == {
        "open": "<<go>>",
        # The end of turn after the last call is the calls' (it may follow; nothing is lost),
        # and a comma or semicolon between two calls too.
        "close_pattern": "(?<=\\})\\s*<</go>>(?:\\s*<\\|eot\\|>)?(?:\\s*[,;](?=\\s*(?:<<go>>)))?",
        "repeats": True,
        "content": "json",
        # Arguments written as JSON text are read too.
        "content_args": {"decode_json_strings": ["with"]},
        "transform": {
            "type": "function",
            "function": {"name": "{content.tool}", "arguments": "{content.with}"},
        },
    }
    two = '<<go>>{"tool": "get_weather", "with": {"city": "Rome"}}<</go>><<go>>{"tool": "get_weather", "with": {}}<</go>>'
    assert parse_response(two, result.template, prefix="<|assistant|>")["tool_calls"] == [
        call("get_weather", {"city": "Rome"}),
        call("get_weather", {}),
    ]


# A chat template that writes each call's id after a marker of its own.
CALL_ID_MARKER = (
    "{%- for m in messages -%}<{{ m.role }}>{{ m.content or '' }}"
    "{%- for c in m.tool_calls or [] %}<call>{{ c.function.name }}<id>{{ c.id }}<args>"
    "{{ c.function.arguments | tojson }}</call>{% endfor %}</>{% endfor -%}"
    "{%- if add_generation_prompt %}<assistant>{% endif -%}"
)


def test_a_call_id_written_after_a_marker_of_its_own_is_optional_with_that_marker():
    result = infer_template(CALL_ID_MARKER)
    assert result.passed
    assert result.template["fields"]["tool_calls"]["open_pattern"] == (
        "<call>\\s*(?P<name>[A-Za-z_][\\w\\-]*(?:\\.[\\w\\-]+)*)(?:<id>[\\w\\-]+)?<args>"
    )
    expected = [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}
    ]
    for output in (
        '<call>get_weather<id>abc123<args>{"city": "Oslo"}</call></>',
        '<call>get_weather<args>{"city": "Oslo"}</call></>',
    ):
        message = parse_response(output, result.template, prefix="<assistant>")
        assert message["tool_calls"] == expected, output


# A chat template whose turn end depends on an option no caller passes: another marker in the
# other branch of the same condition.
OPTIONAL_END = (
    "{%- for m in messages -%}<{{ m.role }}>{{ m.content or '' }}"
    "{%- if long_mode is defined %}{{ '<|pause|>' }}{% else %}{{ '<|done|>' }}{% endif %}"
    "{%- endfor -%}{%- if add_generation_prompt %}<assistant>{% endif -%}"
)


def test_a_marker_the_source_writes_instead_of_the_turn_end_is_a_content_close_too():
    result = infer_template(OPTIONAL_END)
    assert result.template["fields"]["content"] == {"close": ["<|done|>", "<|pause|>"]}
    finding = next(f for f in result.findings if f.value == "<|pause|>")
    assert finding.how == (
        "the chat template's source writes it instead of '<|done|>', in another branch of the "
        "same condition: the turn ends either way"
    )
    message = parse_response("Sure.<|pause|>", result.template, prefix="<assistant>")
    assert message == {"role": "assistant", "content": "Sure."}
    # A branch that writes text besides the marker is not an alternative end.
    worded = infer_template(OPTIONAL_END.replace("{{ '<|pause|>' }}", "{{ 'more <|pause|>' }}"))
    assert worded.template["fields"]["content"] == {"close": "<|done|>"}


# A chat template that writes each call's id after a marker of its own, before the call's name.
ID_BEFORE_EACH_CALL = (
    "{%- for m in messages -%}<|{{ m.role }}|>{{ m.content or '' }}"
    "{%- for c in m.tool_calls or [] %}<|call_begin|>{{ c.id }}<|call_name|>{{ c.function.name }}"
    "<|call_args|>{{ c.function.arguments | tojson }}<|call_end|>{% endfor %}<|eot|>{% endfor -%}"
    "{%- if add_generation_prompt %}<|assistant|>{% endif -%}"
)


def test_a_marker_with_an_id_before_each_call_is_a_content_close_written_as_a_pattern():
    result = infer_template(ID_BEFORE_EACH_CALL)
    assert [(c.description, c.passed) for c in result.candidates] == [("as learnt", True)]
    assert result.template["fields"]["content"] == {
        "close_pattern": "<\\|call_begin\\|>[\\w\\-.]+|<\\|eot\\|>"
    }
    assert result.template["fields"]["tool_calls"]["open_pattern"] == (
        "<\\|call_name\\|>\\s*(?P<name>[A-Za-z_][\\w\\-]*(?:\\.[\\w\\-]+)*)<\\|call_args\\|>"
    )
    assert any(
        f.key == "fields.content.close" and f.value == "<\\|call_begin\\|>[\\w\\-.]+"
        for f in result.findings
    )
    prefix = "<|user|>hi<|eot|><|assistant|>"
    output = (
        '<|call_begin|>abc-1<|call_name|>get_weather<|call_args|>{"city": "Oslo"}<|call_end|>'
        "<|call_begin|>x<|call_name|>get_time<|call_args|>{}<|call_end|><|eot|>"
    )
    assert parse_response(output, result.template, prefix=prefix) == {
        "role": "assistant",
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Oslo"}},
            },
            {"type": "function", "function": {"name": "get_time", "arguments": {}}},
        ],
    }
    # The marker with no id after it is text.
    assert parse_response("See <|call_begin|> here.<|eot|>", result.template, prefix=prefix) == {
        "role": "assistant",
        "content": "See <|call_begin|> here.",
    }


def test_a_content_close_pattern_of_the_renders_is_kept_once_by_the_template_learnt_from_examples():
    prefix = "<|user|>hi<|eot|><|assistant|>"
    examples = [
        {
            "prefix": prefix,
            "output": "<think>Let me see.</think>Sunny.<|eot|>",
            "expected": {
                "role": "assistant",
                "reasoning_content": "Let me see.",
                "content": "Sunny.",
            },
        },
        {
            "prefix": prefix,
            "output": "<|call_begin|>c7<|call_name|>get_time<|call_args|>{}<|call_end|><|eot|>",
            "expected": {
                "role": "assistant",
                "tool_calls": [
                    {"type": "function", "function": {"name": "get_time", "arguments": {}}}
                ],
            },
        },
    ]
    result = infer_template(ID_BEFORE_EACH_CALL, examples=examples)
    assert [(c.description, c.passed) for c in result.candidates] == [
        ("learnt by aligning the example outputs", True)
    ]
    close = result.template["fields"]["content"]["close_pattern"]
    assert close.startswith("<\\|call_begin\\|>[\\w\\-.]+|") and close.count("[\\w\\-.]+") == 1
    output = (
        "<think>Hm.</think><|call_begin|>q-2<|call_name|>get_time<|call_args|>{}<|call_end|><|eot|>"
    )
    assert parse_response(output, result.template, prefix=prefix) == {
        "role": "assistant",
        "reasoning_content": "Hm.",
        "tool_calls": [{"type": "function", "function": {"name": "get_time", "arguments": {}}}],
    }
