"""Lint: one minimal template per diagnostic, with exact codes, paths and suggestions."""

import pytest

from engine import Diagnostic, lint, lint_prompts
from engine.template_files import list_templates


def T(**fields):
    """A template with `fields`, plus an implicit content field when none is implicit
    (so the drops-unclaimed-text warning only shows where a test asks for it)."""
    if all("open" in spec or "open_pattern" in spec for spec in fields.values()):
        fields = {**fields, "content": {}}
    return {"start_anchor": "<S>", "fields": fields}


def codes(template):
    return [(d.severity, d.code, d.path) for d in lint(template)]


def test_template_that_fails_to_load():
    assert lint({"start_anchor": "<S>", "fields": {"a": {"open": ""}}}) == [
        Diagnostic("error", "template-error", "fields.a.open", "must not be an empty string", "")
    ]


def test_clean_template_has_no_findings():
    assert (
        lint(
            T(
                reasoning_content={"open": "<think>", "close_pattern": "</think>|(?=<tool_call>)"},
                tool_calls={
                    "open": "<tool_call>",
                    "close_pattern": r"(?<=\})\s*</tool_call>",
                    "content": "json",
                    "repeats": True,
                    "transform": {"type": "function", "function": "{content}"},
                },
                content={},
            )
        )
        == []
    )


def test_open_never_fires():
    [d] = lint(T(a={"open_pattern": r"<\w+>"}, b={"open": "<b>"}))
    assert (d.severity, d.code, d.path) == ("error", "open-never-fires", "fields.b.open")
    assert (
        d.message
        == "'<b>' never opens b: a's open '<\\\\w+>' matches the same text at the same place and wins the tie"
    )


def test_open_prefix_of_other():
    assert codes(T(a={"open": "<a"}, b={"open": "<ab>"})) == [
        ("warning", "open-prefix-of-other", "fields.a.open")
    ]


def test_close_equals_open():
    [d] = lint(T(a={"open": "<a>", "close": "<b>"}, b={"open": "<b>"}))
    assert (d.code, d.path, d.suggestion) == (
        "close-equals-open",
        "fields.a.close",
        "close a with a lookahead instead: close_pattern '(?=<b>)'",
    )


def test_anchor_inside_delimiter():
    assert codes(
        {"start_anchor": "<|start|>", "fields": {"a": {"open": "<|start|>x"}, "content": {}}}
    ) == [("warning", "anchor-inside-delimiter", "start_anchor")]


def test_delimiter_that_is_the_anchor_is_not_cut_in_half():
    # gpt-oss: the implicit content swallows the '<|start|>assistant' header between messages.
    assert (
        lint(
            {
                "start_anchor": "<|start|>assistant",
                "fields": {"content": {"close": ["<|start|>assistant", "<|end|>"]}},
            }
        )
        == []
    )


def test_pattern_alternative_that_is_the_anchor_is_not_cut_in_half():
    # gpt-oss again, with the closes written as one pattern; an anchor inside a longer alternative still counts.
    assert (
        lint(
            {
                "start_anchor": "<|start|>assistant",
                "fields": {"content": {"close_pattern": r"<\|start\|>assistant|<\|end\|>"}},
            }
        )
        == []
    )
    assert codes(
        {
            "start_anchor": "<|start|>assistant",
            "fields": {"content": {"close_pattern": r"<\|start\|>assistant to=\w+|<\|end\|>"}},
        }
    ) == [("warning", "anchor-inside-delimiter", "start_anchor")]


def test_drops_unclaimed_text():
    assert lint(
        {
            "start_anchor": "<S>",
            "fields": {"reasoning_content": {"open": "<think>", "close": "</think>"}},
        }
    ) == [
        Diagnostic(
            "warning",
            "drops-unclaimed-text",
            "fields",
            "no field is implicit (none lacks an open delimiter) and no open matches any text, so text outside every "
            "region (unknown headers, a format variant the delimiters miss, the model answering without markers) is "
            "dropped without a trace",
            'add an implicit field such as "content": {"close": [...]} to keep it, and list the markers it should '
            "swallow as its closes",
        )
    ]


def test_catch_all_open_keeps_unclaimed_text():
    # An open that matches at any character leaves no text outside a region.
    assert (
        lint({"start_anchor": "<S>", "fields": {"content": {"open_pattern": ".", "close": "<E>"}}})
        == []
    )


def test_anchor_not_in_prompts():
    template = {
        "start_anchor": "<start_of_turn>model\n",
        "fields": {"content": {"close": "<end_of_turn>"}},
    }
    prompts = [
        "<start_of_turn>user\nHi<end_of_turn><start_of_turn>model",
        "<start_of_turn>user\nOslo?<end_of_turn><start_of_turn>model",
    ]
    assert lint_prompts(template, prompts) == [
        Diagnostic(
            "warning",
            "anchor-not-in-prompts",
            "start_anchor",
            "the start anchor '<start_of_turn>model\\n' occurs in none of the 2 rendered prompts, so every prompt is "
            "parsed whole, earlier turns included (the first ends 'user\\nHi<end_of_turn><start_of_turn>model')",
            "anchor on the assistant header the chat template's generation prompt writes",
        )
    ]
    assert lint_prompts({**template, "start_anchor": "<start_of_turn>model"}, prompts) == []
    assert lint_prompts(template, []) == []


def test_lint_prompts_reports_a_broken_template():
    assert lint_prompts({"start_anchor": "", "fields": {"content": {}}}, ["x"]) == [
        Diagnostic("error", "template-error", "start_anchor", "must not be an empty string", "")
    ]


def test_reasoning_field_name():
    assert codes(T(thinking={"open": "<think>", "close": "</think>"})) == [
        ("warning", "reasoning-field-name", "fields.thinking")
    ]


def test_content_field_name():
    assert codes(T(answer={})) == [("warning", "content-field-name", "fields.answer")]


def test_tool_call_field_name():
    assert codes(
        T(calls={"open": "[", "content": "json", "transform": {"function": "{content}"}})
    ) == [("warning", "tool-call-field-name", "fields.calls")]


def test_repeats_text_without_join():
    [d] = lint(T(notes={"open": "<n>", "close": "</n>", "repeats": True}))
    assert (d.code, d.path, d.suggestion) == (
        "repeats-text-without-join",
        "fields.notes.repeats",
        'add "join": "\\n" to concatenate the regions',
    )


def test_unused_capture():
    [d] = lint(
        T(x={"open_pattern": r"<x (?P<id>\d+)>", "close": "</x>", "transform": {"v": "{content}"}})
    )
    assert (d.code, d.path, d.message) == (
        "unused-capture",
        "fields.x.open_pattern",
        "named group 'id' is captured but the transform never uses it",
    )


def test_json_tool_call_closed_by_literal():
    [d] = lint(
        T(
            tool_calls={
                "open": "<tool_call>",
                "close": "</tool_call>",
                "content": "json",
                "repeats": True,
                "transform": {"type": "function", "function": "{content}"},
            }
        )
    )
    assert (d.severity, d.code, d.path) == (
        "warning",
        "json-close-literal",
        "fields.tool_calls.close",
    )
    assert (
        d.suggestion
        == r"use close_pattern '(?<=[}\\]])\\s*</tool_call>' (close only after a brace)"
    )


def test_tool_call_swallowed_by_reasoning():
    diagnostics = lint(
        T(
            reasoning_content={"open": "<think>", "close": "</think>"},
            tool_calls={
                "open": "<tool_call>",
                "close_pattern": r"(?<=\})\s*</tool_call>",
                "content": "json",
                "repeats": True,
                "transform": {"type": "function", "function": "{content}"},
            },
        )
    )
    assert [(d.code, d.path, d.suggestion) for d in diagnostics] == [
        (
            "tool-call-swallowed-by-reasoning",
            "fields.reasoning_content.close",
            "use close_pattern '</think>|(?=<tool_call>)'",
        )
    ]
    assert diagnostics[0].message.startswith("tool-call open inside reasoning is swallowed")


GLM_CALL = {
    "open_pattern": r"<tool_call>\s*(?P<name>[^\s<]+)",
    "close": "</tool_call>",
    "repeats": True,
    "content": "xml-inline",
    "content_args": {"tag_pattern": "<k>(?P<key>.*?)</k><v>(?P<value>.*?)</v>"},
    "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
}


def test_tool_call_pattern_swallowed_by_reasoning():
    # GLM-4.7 writes <tool_call>NAME inside unclosed <think>: the reasoning must end where the pattern starts.
    diagnostics = lint(
        T(reasoning_content={"open": "<think>", "close": "</think>"}, tool_calls=GLM_CALL)
    )
    assert [(d.code, d.path, d.suggestion) for d in diagnostics] == [
        (
            "tool-call-swallowed-by-reasoning",
            "fields.reasoning_content.close",
            "use close_pattern '</think>|(?=<tool_call>)', narrowing the look-ahead to what follows in a real call "
            "if the reasoning may mention it",
        )
    ]
    assert diagnostics[0].message == (
        "tool-call open inside reasoning is swallowed: if the model writes tool_calls's open_pattern (which starts "
        "'<tool_call>') before closing reasoning_content, the call stays reasoning text"
    )


@pytest.mark.parametrize(
    "close",
    [
        r"</think>|(?=<tool_call>)",
        r"</think>|(?=<tool_call>\s*[^\s<]+\s*(?:<k>|</tool_call>))",  # needs more text to decide: still ends there
    ],
)
def test_reasoning_that_ends_at_the_tool_call_pattern(close):
    assert (
        lint(T(reasoning_content={"open": "<think>", "close_pattern": close}, tool_calls=GLM_CALL))
        == []
    )


def test_reasoning_that_is_a_message_of_its_own():
    # gpt-oss: analysis ends at the end-of-message marker the content closes on too; calls come in a message of their own.
    call = {
        "open_pattern": r"<\|channel\|>commentary to=functions\.(?P<name>\w+)<\|message\|>",
        "close_pattern": r"(?<=\})\s*<\|call\|>",
        "repeats": True,
        "content": "json",
        "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
    }
    template = {
        "start_anchor": "<|start|>assistant",
        "fields": {
            "reasoning_content": {
                "open": "<|channel|>analysis<|message|>",
                "close": ["<|end|>", "<|return|>"],
            },
            "tool_calls": call,
            "content": {"close_pattern": r"<\|channel\|>final<\|message\|>|<\|end\|>|<\|return\|>"},
        },
    }
    assert lint(template) == []
    template["fields"]["content"] = {"close": "<|return|>"}
    assert [d.code for d in lint(template)] == ["tool-call-swallowed-by-reasoning"]


@pytest.mark.parametrize(
    "key, pattern, severity",
    [("open_pattern", "x*", "error"), ("close_pattern", r"(?<=\})\s*", "warning")],
)
def test_pattern_matches_empty(key, pattern, severity):
    field = {"open": "<x>", key: pattern} if key == "close_pattern" else {key: pattern}
    assert codes(T(x=field)) == [(severity, "pattern-matches-empty", f"fields.x.{key}")]


@pytest.mark.parametrize(
    "pattern, feature",
    [
        (r"<(x)>\1", "a backreference"),
        ("<(?>x)>", "an atomic group"),
        ("<x++>", "a possessive quantifier"),
        ("<(?R)?>", "recursion"),
    ],
)
def test_unportable_pattern(pattern, feature):
    [d] = [d for d in lint(T(x={"open_pattern": pattern})) if d.code == "unportable-pattern"]
    assert d.path == "fields.x.open_pattern" and f"uses {feature}," in d.message


def test_character_class_is_not_a_backreference():
    assert codes(T(x={"open_pattern": r"<[\1+]x{2}>"})) == []


def test_catastrophic_backtracking():
    [d] = lint(T(x={"open": "<x>", "close_pattern": "(a|aa)+$"}))
    assert (d.severity, d.code, d.path) == (
        "error",
        "catastrophic-backtracking",
        "fields.x.close_pattern",
    )


def test_shipped_templates_have_no_errors():
    for template_file in list_templates():
        assert [d for d in lint(template_file.response_template) if d.severity == "error"] == [], (
            template_file.name
        )


def test_shipped_templates_end_reasoning_at_a_tool_call():
    for template_file in list_templates():
        found = [
            d.path
            for d in lint(template_file.response_template)
            if d.code == "tool-call-swallowed-by-reasoning"
        ]
        assert found == [], template_file.name


@pytest.mark.parametrize("runtime", ["vllm", "sglang"])
def test_lint_for_a_runtime_accepts_the_name_its_export_gives_reasoning(tmp_path, runtime):
    import subprocess
    import sys

    from tests.support.paths import ROOT

    def engine(*args):
        return subprocess.run(
            [sys.executable, "-m", "engine", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )

    exported = tmp_path / "exported.json"
    assert engine("export", "qwen3", "--for", runtime, "--output", str(exported)).returncode == 0
    checked = engine("lint", str(exported), "--target", runtime)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "rename" not in checked.stdout and "reasoning-field" not in checked.stdout
    assert checked.stdout.startswith("info    fields.tool_calls:")
    # Named for no runtime, 'thinking' is still one transformers' chat templates do not read.
    assert [d.code for d in lint(exported.read_text()) if d.path == "fields.thinking"] == [
        "reasoning-field-name"
    ]


# -- with a tokenizer --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_tokenizer():
    from transformers import AutoTokenizer

    from tests.support.paths import ROOT

    return AutoTokenizer.from_pretrained(ROOT / "samples" / "demo-model")


def test_lint_tokenizer_is_silent_on_the_demo_models_own_template(demo_tokenizer):
    from engine.authoring.lint import lint_tokenizer

    assert lint_tokenizer(demo_tokenizer.response_template, demo_tokenizer) == []


def test_lint_tokenizer_flags_delimiters_that_are_not_one_control_token(demo_tokenizer):
    from engine.authoring.lint import lint_tokenizer

    template = {
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "reasoning_content": {"open": "<think", "close": "</think>"},
            "tool_calls": {"open": "<tool_call>", "close": "</tool_call >", "content": "json"},
            "content": {"close": "<|im_end|>"},
        },
    }
    assert [
        (d.severity, d.code, d.path, d.suggestion) for d in lint_tokenizer(template, demo_tokenizer)
    ] == [
        (
            "warning",
            "delimiter-not-a-control-token",
            "fields.reasoning_content.open",
            "write '<think>'",
        ),
        (
            "warning",
            "delimiter-not-a-control-token",
            "fields.tool_calls.close",
            "write '</tool_call>'",
        ),
        (
            "warning",
            "control-token-unused",
            "fields",
            "end a field with '</tool_call>', or open one with it, if the model writes it in its answers",
        ),
        (
            "warning",
            "control-token-unused",
            "fields",
            "end a field with '<think>', or open one with it, if the model writes it in its answers",
        ),
    ]


def test_lint_tokenizer_flags_a_control_token_the_chat_template_writes_and_the_template_ignores(
    demo_tokenizer,
):
    from engine.authoring.lint import lint_tokenizer

    template = {
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {"content": {"close_pattern": r"<\|im_end\|>"}},
    }
    found = [(d.code, d.message.split("'")[1]) for d in lint_tokenizer(template, demo_tokenizer)]
    # <|im_end|> is mentioned by a pattern; <|pad|> is special but the chat template never writes it
    assert found == [
        ("control-token-unused", "</think>"),
        ("control-token-unused", "</tool_call>"),
        ("control-token-unused", "<think>"),
        ("control-token-unused", "<tool_call>"),
    ]
