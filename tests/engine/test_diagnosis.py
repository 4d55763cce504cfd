"""Diagnosis: the cause of a parse in the author's terms, on damaged shipped templates."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

from engine import trace
from engine.authoring.delimiter_evidence import (
    DelimiterEvidence,
    blame_the_output,
    shipped_outputs,
)
from engine.authoring.diagnosis import near_misses
from engine.authoring.pattern_explain import explain_pattern, literal_runs, pieces_taken
from engine.authoring.samples import load_samples
from engine.template_files import load_template_file
from tests.support.paths import CHAT_TEMPLATES, ROOT, needs_shared

SAMPLES = {sample.id: sample for sample in load_samples()}
QWEN3_CASE = SAMPLES["qwen3/text-then-tool-calls"]


def damaged(family: str, field: str, key: str, old: str, new: str) -> dict:
    template = copy.deepcopy(load_template_file(family).response_template)
    value = template["fields"][field][key] if field else template[key]
    changed = (
        [v.replace(old, new, 1) for v in value]
        if isinstance(value, list)
        else value.replace(old, new, 1)
    )
    if field:
        template["fields"][field][key] = changed
    else:
        template[key] = changed
    return template


def first(family: str, template: dict):
    case = next(s for s in load_samples() if s.id == f"{family}/text-then-tool-calls")
    result = trace(case.generation, template, prefix=case.prefix, on_error="keep")
    assert result.diagnoses, (family, result.message, result.warnings)
    return result.diagnoses[0]


def test_the_wrong_close_is_named_with_what_to_change_and_what_it_swallowed():
    template = damaged("qwen3", "tool_calls", "close_pattern", "</tool_call>", "</toolcall>")
    diagnosis = first("qwen3", template)
    assert (diagnosis.code, diagnosis.severity, diagnosis.key) == (
        "near-miss",
        "error",
        "fields.tool_calls.close_pattern",
    )
    assert (diagnosis.expected, diagnosis.found, diagnosis.how) == (
        "</toolcall>",
        "</tool_call>",
        "edit",
    )
    assert (diagnosis.source, diagnosis.start, diagnosis.end) == ("generation", 105, 117)
    assert diagnosis.message == (
        "fields.tool_calls.close_pattern expects '</toolcall>', but the text has '</tool_call>' at generation offset 105 "
        "(1 character differs), so the tool_calls region never closed and swallowed '<tool_call>' at generation offset 118 "
        "(another tool_calls open), '<|im_end|>' at generation offset 206 (the close of content). "
        "Fix: in fields.tool_calls.close_pattern, write '</tool_call>' instead of '</toolcall>'."
    )


def test_an_anchor_not_in_the_prefix_comes_first_with_what_the_prefix_has():
    template = damaged("qwen3", "", "start_anchor", "assistant", "model")
    result = trace(QWEN3_CASE.generation, template, prefix=QWEN3_CASE.prefix)
    assert (
        result.error is not None and result.error.source == "prefix"
    )  # the symptom: the system prompt's example
    diagnosis = result.diagnoses[0]
    assert (diagnosis.code, diagnosis.key, diagnosis.found, diagnosis.how) == (
        "anchor-not-in-prefix",
        "start_anchor",
        "<|im_start|>assistant\n",
        "prefix",
    )
    assert (
        "The prefix's last '<|im_start|>' (at prefix offset 1,246) is followed by 'assistant\\n', where the anchor has 'model\\n'"
        in diagnosis.message
    )
    assert diagnosis.change == "change start_anchor to '<|im_start|>assistant\\n'"


@pytest.mark.parametrize(
    ("family", "field", "key", "old", "new", "expected_key", "how"),
    [
        (
            "hermes-2-pro",
            "tool_calls",
            "close_pattern",
            "</tool_call>",
            "</toolcall>",
            "fields.tool_calls.close_pattern",
            "edit",
        ),
        (
            "glm-4.5",
            "tool_calls",
            "close",
            "</tool_call>",
            "</TOOL_CALL>",
            "fields.tool_calls.close",
            "case",
        ),
        (
            "granite-4",
            "tool_calls",
            "close_pattern",
            "</tool_call>",
            "</tool_ call>",
            "fields.tool_calls.close_pattern",
            "whitespace",
        ),
        (
            "hermes-2-pro",
            "tool_calls",
            "open",
            "<tool_call>",
            "<toolcall>",
            "fields.tool_calls.open",
            "edit",
        ),
        (
            "mistral",
            "tool_calls",
            "open",
            "[TOOL_CALLS]",
            "[tool_calls]",
            "fields.tool_calls.open",
            "case",
        ),
        (
            "gpt-oss",
            "tool_calls",
            "open_pattern",
            "<\\|message\\|>",
            "<\\|mes sage\\|>",
            "fields.tool_calls.open_pattern",
            "whitespace",
        ),
        (
            "qwen3-coder",
            "tool_calls",
            "open_pattern",
            "<tool_call>",
            "<toolcall>",
            "fields.tool_calls.open_pattern",
            "edit",
        ),
        (
            "gpt-oss",
            "",
            "start_anchor",
            "<|start|>assistant",
            "<|start|>ssistant",
            "start_anchor",
            "edit",
        ),
        (
            "llama-3.1",
            "",
            "start_anchor",
            "<|start_header_id|>",
            "<|START_HEADER_ID|>",
            "start_anchor",
            "case",
        ),
        ("granite-4", "", "start_anchor", "assistant", "assi stant", "start_anchor", "whitespace"),
        ("mistral", "", "start_anchor", "[/INST]", "[/IST]", "start_anchor", "edit"),
    ],
)
def test_damaged_shipped_templates_are_diagnosed_at_the_damaged_key(
    family, field, key, old, new, expected_key, how
):
    template = damaged(family, field, key, old, new)
    assert template != load_template_file(family).response_template
    diagnosis = first(family, template)
    assert (diagnosis.key, diagnosis.how) == (expected_key, how), diagnosis.message


def test_a_missing_generation_prompt_names_the_anchor():
    case = SAMPLES["qwen3/text-then-tool-calls"]
    prefix = case.prefix[: case.prefix.rindex("<|im_start|>assistant")]
    result = trace(case.generation, load_template_file("qwen3").response_template, prefix=prefix)
    assert result.diagnoses[0].code == "anchor-not-in-prefix"
    assert result.diagnoses[0].message.startswith(
        "The start anchor '<|im_start|>assistant\\n' is not in the prefix, so the whole prefix (1,246 characters"
    )


def test_a_pattern_whose_literal_is_there_but_its_context_is_not():
    template = load_template_file("qwen3").response_template
    generation = '<tool_call>\n{"name": "f", "arguments": [1]]\n</tool_call><|im_end|>'
    result = trace(generation, template, prefix="")
    diagnosis = result.diagnoses[0]
    assert (diagnosis.code, diagnosis.key, diagnosis.found, diagnosis.start) == (
        "pattern-context",
        "fields.tool_calls.close_pattern",
        "</tool_call>",
        44,
    )
    assert "'(?<=\\\\})\\\\s*' must come before it" in diagnosis.message
    # The JSON before the close is broken: the model's output is at fault, not the pattern.
    assert diagnosis.message.endswith(
        "The tool_calls text before it does not parse as json (json: Expecting ',' delimiter "
        "(line 2, column 31, offset 31)): the model's json is broken there, and "
        "fields.tool_calls.close_pattern waits for one that ends well. The template is right for "
        "a well-formed output; loosen fields.tool_calls.close_pattern only if the model writes "
        "this on purpose."
    ), diagnosis.message
    assert diagnosis.change == (
        "none in the template: the model's json is broken before '</tool_call>'"
    )


def test_a_well_formed_body_whose_close_context_fails_points_at_the_pattern():
    template = {
        "start_anchor": "<s>",
        "fields": {
            "call": {"open": "<call>", "close_pattern": "</call>(?=\\n)", "content": "json"},
            "content": {},
        },
    }
    result = trace('<call>{"a": 1}</call> and more', template, prefix="")
    diagnosis = result.diagnoses[0]
    assert (diagnosis.code, diagnosis.key) == ("pattern-context", "fields.call.close_pattern")
    assert diagnosis.message.endswith(
        "Fix: make fields.call.close_pattern accept what the model writes around '</call>'."
    ), diagnosis.message
    assert diagnosis.change == "make fields.call.close_pattern accept the text around '</call>'"


def test_every_shipped_sample_that_parses_as_expected_has_no_cause_to_report():
    loud = []
    for sample in load_samples():
        result = trace(
            sample.generation,
            sample.template,
            prefix=sample.prefix,
            tools=sample.tools,
            on_error="keep",
        )
        if sample.expected is not None and result.message == sample.expected:
            loud += [(sample.id, d.code) for d in result.diagnoses if d.severity != "note"]
    assert loud == [
        ("field-reports/tool-call-opened-inside-reasoning-plain-close", "region-never-closed")
    ]


def test_near_misses_by_kind():
    assert [(m.text, m.how) for m in near_misses("</tool_call>", "a </TOOL_CALL> b")] == [
        ("</TOOL_CALL>", "case")
    ]
    assert [
        (m.text, m.how) for m in near_misses("<|im_start|>assistant\n", "x<|im_start|>assistant")
    ] == [("<|im_start|>assistant", "whitespace")]
    assert [
        (m.text, m.how, m.errors) for m in near_misses("</toolcall>", "text </tool_call> more")
    ] == [("</tool_call>", "edit", 1)]
    assert near_misses("</tool_call>", "</tool_call> exactly") == []
    assert (
        near_misses("<|start|>assistant", "<|im_start|>assistant") == []
    )  # a piece cut from a longer token is not one
    assert near_misses("<x>", "<y>") == []  # too short to tell


def test_near_misses_stay_quick_on_a_long_text():
    import time

    text = (
        "The weather in Paris is mild today, with a light breeze from the west. " * 3000
        + "</tool_call>"
    )
    started = time.perf_counter()
    found = near_misses("</toolcall>", text)
    assert [(m.start, m.text) for m in found] == [(len(text) - 12, "</tool_call>")]
    assert (
        time.perf_counter() - started < 5
    )  # a guard against a hang, not a speed figure (bench_engine measures)


def test_a_pattern_explained_piece_by_piece_and_what_each_piece_took():
    explanation = explain_pattern(r"(?<=\})\s*</tool_call>")
    assert [(depth, piece.kind, piece.text) for depth, piece in explanation.lines()] == [
        (0, "lookbehind", r"(?<=\})"),
        (1, "literal", r"\}"),
        (0, "repeat", r"\s*"),
        (1, "class", r"\s"),
        (0, "literal", "</tool_call>"),
    ]
    assert explanation.lines()[2][1].meaning.startswith(
        "any run of whitespace (spaces, tabs, newlines), possibly none: it takes as much as there is"
    )
    assert (
        explanation.lines()[0][1].meaning
        == "looks behind: the text just before this point must match `\\}`; it takes no characters"
    )
    taken = pieces_taken(r"(?<=\})\s*</tool_call>", '{"a": 1}\n </tool_call>', 8)
    assert [(piece.text, took) for piece, took in taken] == [
        (r"(?<=\})", ""),
        (r"\s*", "\n "),
        ("</tool_call>", "</tool_call>"),
    ]
    alternatives = explain_pattern(r"</think>|(?=<tool_call>\s*\{)").alternatives
    assert [a.text for a in alternatives] == ["</think>", r"(?=<tool_call>\s*\{)"]
    assert [
        (r.literal, r.inside_lookahead) for r in literal_runs(r"</think>|(?=<tool_call>\s*\{)")
    ] == [("</think>", False), ("<tool_call>", True)]
    broken = explain_pattern("(a|b")
    assert (broken.error, broken.error_position) == ("missing ) at position 4", 4)


def test_the_cli_shows_the_cause_first_then_the_symptom(tmp_path):
    for name, template in (
        ("close", damaged("qwen3", "tool_calls", "close_pattern", "</tool_call>", "</toolcall>")),
        ("anchor", damaged("qwen3", "", "start_anchor", "assistant", "model")),
    ):
        (tmp_path / f"{name}.json").write_text(json.dumps(template))
        (tmp_path / "prefix.txt").write_text(QWEN3_CASE.prefix)
        (tmp_path / "generation.txt").write_text(QWEN3_CASE.generation)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "engine",
                "parse",
                str(tmp_path / f"{name}.json"),
                "--prefix",
                str(tmp_path / "prefix.txt"),
                str(tmp_path / "generation.txt"),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        lines = done.stdout.splitlines()
        assert done.returncode == 1, done.stdout + done.stderr
        assert lines[0].startswith(
            "cause: fields.tool_calls.close_pattern expects '</toolcall>'"
            if name == "close"
            else "cause: The start anchor '<|im_start|>model\\n' is not in the prefix"
        ), lines
        assert lines[1].startswith("error: fields.tool_calls: json:"), lines
    explained = subprocess.run(
        [sys.executable, "-m", "engine", "explain", r"(?<=\})\s*</tool_call>"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert explained.returncode == 0 and explained.stdout.splitlines()[0].startswith(
        "(?<=\\})  looks behind"
    )


def test_diagnoses_are_json_ready():
    template = damaged("qwen3", "tool_calls", "close_pattern", "</tool_call>", "</toolcall>")
    result = trace(QWEN3_CASE.generation, template, prefix=QWEN3_CASE.prefix, on_error="keep")
    assert (
        json.loads(json.dumps(result.to_dict()))["diagnoses"][0]["key"]
        == "fields.tool_calls.close_pattern"
    )


# A chat template that pre-writes the reasoning's opener, and a start anchor that takes it.
PAST_OPEN = {
    "start_anchor": ["<|assistant|><think>", "<|observation|>"],
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "content": {"close": ["<|user|>", "</think>"]},
    },
}
PAST_OPEN_PREFIX = "<|user|>Weather?<|assistant|><think>"


def test_an_anchor_that_cut_past_the_opener_the_prompt_ends_with_is_the_cause_with_its_fix():
    result = trace("hmm, sunny</think>It is sunny.<|user|>", PAST_OPEN, prefix=PAST_OPEN_PREFIX)
    # The reasoning went to content, and nothing else looks wrong: only the cause says so.
    assert result.message == {"content": "hmm, sunnyIt is sunny."}
    assert result.warnings == []
    [diagnosis] = result.diagnoses
    assert (diagnosis.code, diagnosis.severity, diagnosis.key, diagnosis.found) == (
        "anchor-past-open",
        "error",
        "start_anchor",
        "<think>",
    )
    assert (diagnosis.source, diagnosis.start, diagnosis.end) == ("prefix", 29, 36)
    assert diagnosis.fix == {"start_anchor": ["<|assistant|>", "<|observation|>"]}
    assert diagnosis.message == (
        "The prompt ends with '<think>', the open delimiter of reasoning_content "
        "(fields.reasoning_content.open), but the start anchor '<|assistant|><think> | <|observation|>' "
        "cuts the prefix after it, so reasoning_content never opens; the model closed it ('</think>' at "
        "generation offset 10), so what it wrote before that goes to content. Fix: end the start anchor "
        "before '<think>': set start_anchor to ['<|assistant|>', '<|observation|>'] "
        "(fields.reasoning_content.open stays '<think>')."
    )
    # The fix applied: the reasoning is read.
    fixed = {**PAST_OPEN, **diagnosis.fix}
    assert trace(
        "hmm, sunny</think>It is sunny.<|user|>", fixed, prefix=PAST_OPEN_PREFIX
    ).message == {
        "reasoning_content": "hmm, sunny",
        "content": "It is sunny.",
    }


def test_an_anchor_that_takes_the_opener_before_a_prefilled_answer_is_not_a_cause():
    # The prompt's tail holds text after the opener: the anchor takes the opener on purpose.
    result = trace("and more.", PAST_OPEN, prefix=PAST_OPEN_PREFIX + "Prefilled answer")
    assert [d.code for d in result.diagnoses] == []
    # Without a close in the output the cut is still a cause, as a warning, with the fix.
    pattern = {
        **PAST_OPEN,
        "start_anchor": None,
        "start_anchor_pattern": r"<\|assistant\|>\s*<think>",
    }
    del pattern["start_anchor"]
    [diagnosis] = trace("hmm", pattern, prefix=PAST_OPEN_PREFIX).diagnoses
    assert (diagnosis.code, diagnosis.severity, diagnosis.fix) == (
        "anchor-past-open",
        "warning",
        None,
    )
    assert diagnosis.change == (
        "make start_anchor_pattern end before '<think>', so the prompt's '<think>' opens reasoning_content"
    )


def test_a_fix_inside_a_pattern_gives_the_text_as_the_pattern_writes_it():
    template = damaged("gpt-oss", "tool_calls", "close_pattern", r"<\|call\|>", r"<\|cal\|>")
    diagnosis = first("gpt-oss", template)
    assert (diagnosis.code, diagnosis.key, diagnosis.expected, diagnosis.found) == (
        "near-miss",
        "fields.tool_calls.close_pattern",
        "<|cal|>",
        "<|call|>",
    )
    assert diagnosis.message.endswith(
        "Fix: in fields.tool_calls.close_pattern, write '<|call|>' instead of '<|cal|>' "
        r"(escaped: <\|call\|>)."
    )


# A qwen3 call whose close the output misspells; the template's close is the model's own.
MISSPELT_CLOSE_OUTPUT = (
    "<think>\nLet me check.\n</think>\n\n<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_calsl>'
)


def parse_cli(tmp_path, *args):
    (tmp_path / "generation.txt").write_text(MISSPELT_CLOSE_OUTPUT)
    return subprocess.run(
        [sys.executable, "-m", "engine", "parse", *args, str(tmp_path / "generation.txt")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_cli_blames_an_output_that_misspells_a_delimiter_its_samples_confirm(tmp_path):
    done = parse_cli(tmp_path, "qwen3")
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == (
        "cause: The output misspells '</tool_call>' as '</tool_calsl>' at generation offset 100: "
        "a generation error, not a template fault (other outputs of the model hold it, as "
        "fields.tool_calls.close_pattern expects), so the tool_calls region never closed and ran "
        "to the end of the text. Leave the template as it is."
    )
    assert "Fix" not in done.stdout and "instead of" not in done.stdout


@needs_shared
def test_the_cli_blames_the_output_when_the_chat_template_renders_the_delimiter(tmp_path):
    # A template file (no samples to go by): the chat template's render is the evidence.
    args = ["templates/qwen3.json", "--chat-template", str(CHAT_TEMPLATES / "qwen3.jinja")]
    done = parse_cli(tmp_path, *args)
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith(
        "cause: The output misspells '</tool_call>' as '</tool_calsl>' at generation offset 100: "
        "a generation error, not a template fault (the chat template renders it; "
    )
    # A shipped template's file is evidence too: its samples confirm its delimiters.
    alone = parse_cli(tmp_path, "templates/qwen3.json")
    assert alone.stdout.splitlines()[0] == (
        "cause: The output misspells '</tool_call>' as '</tool_calsl>' at generation offset 100: "
        "a generation error, not a template fault (the shipped template's samples hold it, as "
        "fields.tool_calls.close_pattern expects), so the tool_calls region never closed and ran "
        "to the end of the text. Leave the template as it is."
    )


def test_a_template_nothing_confirms_gets_both_readings_and_no_edit(tmp_path):
    template = load_template_file("qwen3").response_template
    template["fields"]["content"]["close"] = ["<|im_end|>"]  # no longer the shipped one
    (tmp_path / "own.json").write_text(json.dumps(template))
    done = parse_cli(tmp_path, str(tmp_path / "own.json"))
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == (
        "cause: fields.tool_calls.close_pattern expects '</tool_call>', but the text has "
        "'</tool_calsl>' at generation offset 100 (1 character differs), so the tool_calls region "
        "never closed and ran to the end of the text. Either the output misspells '</tool_call>' "
        "(a generation error: leave the template as it is), or the model writes '</tool_calsl>' "
        "there (in fields.tool_calls.close_pattern, write '</tool_calsl>' instead of "
        "'</tool_call>'); nothing given says which: an example output of the model, its chat "
        "template or its tokenizer would."
    )
    assert "Fix:" not in done.stdout


def test_a_close_is_never_a_near_miss_of_its_own_open():
    template = load_template_file("qwen3").response_template
    template["fields"]["tool_calls"]["close_pattern"] = r"(?<=\})\s*<tool_call>"
    output = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    result = trace(output, template, prefix="<|im_start|>assistant\n", on_error="keep")
    assert [d.code for d in result.diagnoses] == ["close-is-open"]
    assert result.diagnoses[0].message == (
        "fields.tool_calls.close_pattern expects '<tool_call>', the open delimiter of tool_calls "
        "itself, so the tool_calls region never closed and ran to the end of the text. Fix: set "
        "fields.tool_calls.close_pattern to the text the model writes to end a tool_calls region "
        "(the output's close is not a misspelling of the open)."
    )
    assert "misspell" not in result.diagnoses[0].message.split("(the output")[0]


def test_two_swapped_characters_are_a_near_miss():
    prefix = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    output = "The user greets me.\n</thnik>\n\nHello! How can I help?<|im_end|>"
    result = trace(output, "qwen3", prefix=prefix)
    [near] = [d for d in result.diagnoses if d.code == "near-miss"]
    assert (near.expected, near.found, near.how, near.start) == ("</think>", "</thnik>", "swap", 20)
    assert "(two neighbouring characters are swapped)" in near.message
    [blamed] = blame_the_output([near], DelimiterEvidence.of(shipped=shipped_outputs("qwen3")))
    assert blamed.message.startswith(
        "The output misspells '</think>' as '</thnik>' at generation offset 20: a generation "
        "error, not a template fault (the shipped template's samples hold it"
    )
    assert blamed.change == "" and blamed.fix is None


def test_a_delimiter_the_tokenizer_holds_as_one_token_is_confirmed():
    result = trace(MISSPELT_CLOSE_OUTPUT, "qwen3", prefix="", on_error="keep")
    [near] = [d for d in result.diagnoses if d.code == "near-miss"]
    assert near.fix is None and near.change.startswith("in fields.tool_calls.close_pattern")
    [blamed] = blame_the_output(
        [near], DelimiterEvidence.of(tokens=["<tool_call>", "</tool_call>"])
    )
    assert blamed.change == "" and blamed.fix is None
    assert blamed.confirmed_by == ("the tokenizer has it as one token",)
    assert (blamed.code, blamed.severity, blamed.start) == ("near-miss", "error", 100)
    # Evidence that holds neither side: both readings, and no edit.
    [both] = blame_the_output([near], DelimiterEvidence.of(prefix="<|im_start|>user\nhi"))
    assert both.change == "" and both.fix is None and both.confirmed_by == ()
    assert "Either the output misspells '</tool_call>' (a generation error" in both.message
    # Evidence that holds the output's text: the template is the suspect, as before.
    [kept] = blame_the_output([near], DelimiterEvidence.of(outputs=["a </tool_calsl> b"]))
    assert kept == near
