"""The path a template author walks from a new model's chat template to a verified template:
inference as the front door, a failed inference with its way out, the author's outputs as
evidence and test cases, never "Parsed" over a lost region, the author's work kept, changed
values shown; and the smaller faults met on the way. Handlers called as the page calls them,
real inference in worker processes, real chat templates (tests/support/chat_templates)."""

from __future__ import annotations

import copy
import html
import json
import re

import pytest

from engine import parse_response
from engine.chat_templates.conformance import TOOLS as CHECK_TOOLS
from engine.chat_templates.conformance import check_conformance
from engine.template_files import load_template_file
from playground import catalog, handlers
from playground.authoring.chat_template_check import difference_summary, root_causes
from playground.authoring.diagnostics import editor_place, findings
from playground.authoring.inference import findings_for_template, with_workspace_output
from playground.authoring.inference_failures import candidate_changes, failure_groups
from playground.authoring.template_edits import apply_edit
from playground.authoring.test_cases import as_examples, examples_jsonl
from playground.catalog import template_text_of
from playground.panels.failing_rows import candidates_html
from playground.panels.inference_panel import findings_html
from playground.panels.status import status_html
from playground.panels.value_changes import value_changes, value_changes_html
from playground.parse.parse_view import LiveParse, traced_view
from playground.parse.session import Session
from playground.parse.workspace import WorkspaceInputs
from tests.support.paths import CHAT_TEMPLATE_FIXTURES, CHAT_TEMPLATES, needs_shared
from tests.support.real_outputs import (
    MORE,
    cases_by_chat_template,
    load_cases,
    manifest,
    needs_real_outputs,
)


def jinja(name: str) -> str:
    return (CHAT_TEMPLATE_FIXTURES / f"{name}.jinja").read_text(encoding="utf-8")


def text_of(markup: str) -> str:
    # <wbr> (a break point inside a key path) draws nothing.
    markup = markup.replace("<wbr>", "")
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", markup))).strip()


def infer(chat_template: str, session: Session, test_cases_text: str = "", template_text=""):
    """The Infer button to the end: its last outputs."""
    return list(
        handlers.infer_chat_template(
            chat_template,
            "",
            "",
            "",
            True,
            WorkspaceInputs(template_text, "", "", ""),
            test_cases_text,
            session,
        )
    )[-1]


# -- 4. a failed inference names what is wrong and offers the way out ---------------------


def test_a_failed_inference_groups_its_rows_by_the_finding_they_contradict_and_applies_the_fix():
    session = Session()
    infer(jinja("opened-reasoning"), session)
    # The template an author (or an older inference) wrote: an anchor that takes the opener the
    # prompt ends with (GLM-4.7's "<|assistant|><think>").
    result = copy.deepcopy(session.inference)
    result["template"]["start_anchor"] = "<|assistant|><mind>"
    report = check_conformance(
        result["template"], jinja("opened-reasoning"), bos_token="", eos_token=""
    )
    result["report"], result["passed"] = report.to_dict(), False
    groups = failure_groups(result)
    assert [(g.key, len(g.rows), g.fix, g.sketch) for g in groups] == [
        ("start_anchor", 13, {"start_anchor": "<|assistant|>"}, False),
        # The prompt's own '</mind>' after the anchor took '<mind>': read leniently, with an error.
        ("fields.reasoning_content.close_pattern", 2, None, False),
    ]
    assert groups[0].cause == (
        "start_anchor: end the start anchor before '<mind>': set start_anchor to '<|assistant|>' "
        "(fields.reasoning_content.open stays '<mind>')"
    )
    # The findings of that key are offered: what inference found there, with its evidence.
    assert [result["findings"][i]["key"] for i in groups[0].findings] == ["start_anchor"]
    result["failure_groups"] = [group.to_dict() for group in groups]
    session.inference = result
    panel = text_of(findings_html(result))
    assert "✘ fails its matrix 5 passed, 15 failed, 0 not renderable" in panel
    assert (
        "What fails, and the way out 13 rows contradict start_anchor : start_anchor: end the start "
        "anchor before '<mind>'" in panel
    )
    assert 'The edit: + start_anchor = "<|assistant|>" Apply the fix' in panel
    # Apply: the editor gets the fix (the text before kept for Restore), the rows pass again.
    damaged = template_text_of(result["template"])
    rows = result["report"]["situations"]
    row = next(r for r in rows if r["name"] == "first-turn/round-trip:reasoning-and-answer")
    cases = session.test_cases_text
    applied = handlers.inference_click(
        {"apply": 0}, WorkspaceInputs(damaged, row["prompt"], row["generation"], ""), cases, session
    )
    assert json.loads(applied["template_text"])["start_anchor"] == "<|assistant|>"
    assert session.view.message == row["expected"]
    assert text_of(applied["status"]).startswith("✔ Parsed: reasoning_content, content")
    assert 'data-passed="20" data-total="20"' in applied["test_results"]
    assert applied["restore_button"] == {
        "value": "↶ Restore the template before the Apply",
        "visible": True,
    }
    # A finding clicked still shows the evidence behind it.
    shown = handlers.inference_click(
        {"finding": groups[0].findings[0]}, WorkspaceInputs("", "", "", ""), "", session
    )
    assert text_of(shown["explain"]).startswith('start_anchor = "<|assistant|>"')


def test_failure_groups_trace_within_the_parses_deadline_and_caps(monkeypatch):
    import dataclasses
    import time

    from playground.server import limits

    session = Session()
    infer(jinja("opened-reasoning"), session)
    result = copy.deepcopy(session.inference)
    result["template"]["start_anchor"] = "<|assistant|><mind>"
    report = check_conformance(
        result["template"], jinja("opened-reasoning"), bos_token="", eos_token=""
    )
    result["report"] = report.to_dict()
    # Past the deadline a row is grouped by what its message shows: no trace of a hostile row
    # runs on in the server's process.
    late = failure_groups(result, deadline=time.perf_counter() - 1)
    by_message = [(g.key, len(g.rows), g.fix) for g in late]
    assert by_message == [
        ("fields.content", 9, None),
        ("fields.reasoning_content.close_pattern", 6, None),
    ]
    assert "start_anchor" not in {g.key for g in late}  # what only the trace tells
    # A trace stopped at a cap still diagnoses what it read (the anchor is at the start).
    monkeypatch.setattr(limits, "LIMITS", dataclasses.replace(limits.LIMITS, value_chars=1))
    capped = failure_groups(result)
    assert [(g.key, len(g.rows)) for g in capped] == [
        ("start_anchor", 13),
        ("fields.reasoning_content.close_pattern", 2),
    ]


def test_calls_keyed_by_their_name_are_learnt_from_the_renders_and_keep_brackets_in_prose():
    session = Session()
    last = infer(jinja("keyed-calls"), session)
    panel = text_of(last["inference"])
    # The renders, aligned with the messages they were rendered from, teach the calls: a call
    # opens at each object of the list, its name read from the key; no sketch is needed, and
    # the first candidate holds them.
    assert "✔ passes its matrix 20 passed, 0 failed, 0 not renderable" in panel
    assert [c["description"] for c in session.inference["candidates"]] == ["as learnt"]
    # Each marker the content drops shows its evidence, the list's brackets as the pattern
    # the close writes them with.
    assert "found for a candidate the chosen template is not" not in panel
    assert r'fields.content.close = "<|eot|>" / "<|calls|>" / "\\[(?=\\s*\\{)"' in panel
    # The same evidence where the editor or the map asks for the pattern's key.
    asked = findings_for_template(
        session.inference, session.inference["template"], "fields.content.close_pattern"
    )
    assert sorted(f["value"] for f in asked) == [
        "(?<=\\})\\s*\\]",
        "<|/calls|>",
        "<|calls|>",
        "<|eot|>",
        "\\[(?=\\s*\\{)",
    ]
    assert "Apply the sketch" not in panel
    learnt = json.loads(last["template_text"])
    assert learnt["fields"]["content"] == {
        "close_pattern": r"\[(?=\s*\{)|(?<=\})\s*\]|<\|/calls\|>|<\|calls\|>|<\|eot\|>"
    }
    output = 'See [1].<|calls|>[{"get_weather": {"city": "Oslo", "days": 2}}, {"get_time": {}}]<|/calls|><|eot|>'
    assert parse_response(output, learnt, prefix="<|assistant|>") == {
        "role": "assistant",
        "content": "See [1].",
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}},
            },
            {"type": "function", "function": {"name": "get_time", "arguments": {}}},
        ],
    }
    # The workspace shows a row that passes, no failure banner.
    assert text_of(last["status"]).startswith("✔ Parsed")
    # A call in content while the template lacks the field: not green.
    tools_text = template_text_of(CHECK_TOOLS)
    output = 'On it.<|calls|>[{"get_weather": {"city": "Oslo", "days": 2}}]<|/calls|><|eot|>'
    partial = template_text_of(
        {"start_anchor": "<|assistant|>", "fields": {"content": {"close": "<|eot|>"}}}
    )
    # In a session of its own: no inference there speaks for the markers.
    parsed = handlers.parse(
        WorkspaceInputs(partial, "<|assistant|>", output, tools_text), "", Session()
    )
    status = text_of(parsed["status"])
    assert status.startswith(
        "✘ Does not fit: the template claims nothing: no region opened, so all of the generation "
        "went to content, special tokens included ('<|calls|>', '<|/calls|>')"
    )
    assert "✔" not in status


PYTHON_PROMPT = "<|user|>Weather in Oslo?<|eot|>\n<|assistant|>"
PYTHON_OUTPUT = 'Checking.<|calls|>get_weather(city="Oslo", days=2)<|/calls|><|eot|>'


def test_python_style_calls_with_nested_object_arguments_are_learnt_from_the_renders():
    session = Session()
    chat_template = jinja("bare-python-calls")
    first = infer(chat_template, session)
    panel = text_of(first["inference"])
    # The renders, aligned with their messages, teach the calls, a nested object argument
    # (`details={"room": {"floor": 2, ...}, "tags": [...]}`) included: every row passes.
    assert "✔ passes its matrix 20 passed, 0 failed, 0 not renderable" in panel
    assert "No edit is offered" not in panel and "Apply the sketch" not in panel
    template = json.loads(first["template_text"])
    assert template["fields"]["content"] == {"close": ["<|eot|>", "<|calls|>", "<|/calls|>"]}
    assert template["fields"]["tool_calls"]["content"] == "xml-inline"
    nested = '<|calls|>plan(where={"room": {"floor": 2, "tags": ["a", "}"]}}, days=[[1], [2, 3]])<|/calls|><|eot|>'
    assert parse_response(nested, template, prefix=PYTHON_PROMPT)["tool_calls"] == [
        {
            "type": "function",
            "function": {
                "name": "plan",
                "arguments": {
                    "where": {"room": {"floor": 2, "tags": ["a", "}"]}},
                    "days": [[1], [2, 3]],
                },
            },
        }
    ]
    # The author pastes an output that shows a call and infers again: the same template, which
    # reads it, and the panel never says the outputs did not show the calls.
    again = list(
        handlers.infer_chat_template(
            chat_template,
            "",
            "",
            "",
            True,
            WorkspaceInputs(
                first["template_text"], PYTHON_PROMPT, PYTHON_OUTPUT, template_text_of(CHECK_TOOLS)
            ),
            first["test_cases_text"],
            session,
        )
    )[-1]
    assert json.loads(again["template_text"]) == template
    assert parse_response(PYTHON_OUTPUT, template, prefix=PYTHON_PROMPT) == {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}},
            }
        ],
    }
    panel = text_of(again["inference"])
    assert "did not show it" not in panel and "partial" not in panel
    assert (
        "✔ passes its matrix 20 passed, 0 failed, 0 not renderable; 1 of your outputs given as examples"
        in panel
    )


def test_calls_whose_arguments_stand_by_position_get_no_edit_that_cannot_work():
    # Positional arguments (`get_weather("Zürich", 3)`): no field of a template can name a value
    # by its place, so no tool-call field is inferred, and the panel offers no edit.
    session = Session()
    panel = text_of(infer(jinja("positional-calls"), session)["inference"])
    assert "✘ fails its matrix ◐ partial: tool_calls missing 12 passed, 8 failed" in panel
    assert "△ No edit is offered: no tool-call field reads these calls back" in panel
    assert "Apply the sketch" not in panel
    assert session.inference["call_sketch"]["fix"] is None


def test_a_sketch_is_offered_only_once_it_reads_the_rows_and_passes_the_matrix():
    from playground.authoring.call_sketch import sketch_calls

    session = Session()
    chat_template = jinja("pythonic")
    infer(chat_template, session)
    # A template without its tool_calls field (an older inference, or the author's deletion).
    result = copy.deepcopy(session.inference)
    del result["template"]["fields"]["tool_calls"]
    report = check_conformance(result["template"], chat_template, bos_token="", eos_token="")
    result["report"], result["passed"] = report.to_dict(), False
    sketch = sketch_calls(result, chat_template)
    assert sketch.fix == {
        "fields.tool_calls": {
            "open_pattern": "(?=\\[\\s*[A-Za-z_][\\w\\-]*(?:\\.[\\w\\-]+)*\\()",
            "content": "python-call-list",
            "transform_each": True,
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{arguments}"},
            },
            # Only right after the list's bracket: inside a string argument it is text.
            "close_pattern": "(?<=\\])\\s*\\|eot\\|",
        }
    }
    assert sketch.how == (
        "learnt from the calls: a Python-style list of calls; checked: it reads 8 matrix row(s) "
        "with calls back, and with it the matrix passes 20 of 20 rows"
    )
    result["call_sketch"] = sketch.to_dict()
    groups = failure_groups(result)
    assert [(g.key, len(g.rows), g.sketch, g.calls) for g in groups] == [
        ("fields.tool_calls", 8, True, True)
    ]
    result["failure_groups"] = [group.to_dict() for group in groups]
    session.inference = result
    panel = text_of(findings_html(result))
    assert (
        "learnt from the calls: a Python-style list of calls; checked: it reads 8 matrix row(s) "
        "with calls back, and with it the matrix passes 20 of 20 rows Apply the sketch" in panel
    )
    # Applied, it reads a row with two calls.
    row = next(
        r
        for r in result["report"]["situations"]
        if r["name"] == "first-turn-tools/round-trip:content-and-tool-calls"
    )
    handlers.inference_click(
        {"apply": 0},
        WorkspaceInputs(
            template_text_of(result["template"]),
            row["prompt"],
            row["generation"],
            template_text_of(CHECK_TOOLS),
        ),
        "",
        session,
    )
    assert session.view.message == row["expected"]


def test_candidates_are_shown_as_changes_against_the_chosen_one():
    chosen = {
        "start_anchor": "<a>",
        "fields": {
            "reasoning_content": {"open": "<t>", "close_pattern": "</t>|(?=<c>)"},
            "tool_calls": {"open": "<c>", "close": "</c>", "content": "json"},
            "content": {"close": "<e>"},
        },
    }
    without = copy.deepcopy(chosen)
    del without["fields"]["tool_calls"]
    without["fields"]["reasoning_content"]["close_pattern"] = "</t>"
    assert candidate_changes(chosen, without) == [
        ("fields.reasoning_content.close_pattern", "</t>|(?=<c>)", "</t>"),
        ("fields.tool_calls", chosen["fields"]["tool_calls"], None),
    ]
    counts = {"passed": 3, "failed": 1, "not_renderable": 0}
    result = {
        "template": chosen,
        "candidates": [
            {
                "description": "as learnt",
                "passed": False,
                "counts": counts,
                "example_problems": [],
                "template": chosen,
            },
            {
                "description": "without tool calls",
                "passed": False,
                "counts": counts,
                "example_problems": [],
                "template": without,
            },
        ],
    }
    assert text_of(candidates_html(result)) == (
        "Candidates checked ✘ as learnt (3 passed, 1 failed) chosen ✘ without tool calls (3 passed, "
        '1 failed) fields.reasoning_content.close_pattern : "</t>|(?=<c>)" → "</t>" − '
        "fields.tool_calls (not in this candidate)"
    )


# -- 1, 2, 3. the front door, the workspace after Infer, the Tests tab ----------------------


def test_a_link_naming_a_model_opens_the_start_tab_with_it():
    out = handlers.open_page(
        {"chat_template_model": "samples/demo-model", "eos_token": "<|im_end|>"}, Session()
    )
    assert out["chat_template_model"] == "samples/demo-model" and out["eos_token"] == "<|im_end|>"
    assert out["modes"] == {"selected": "model"}
    too_long = handlers.open_page({"chat_template_model": "x" * 301}, Session())
    assert "chat_template_model" not in too_long
    assert "?chat_template_model= is longer than 300 characters; it is left out" in text_of(
        too_long["status"]
    )


def test_the_authors_outputs_are_test_cases_and_examples_that_teach_what_no_render_shows():
    session = Session()
    first = infer(jinja("listed-tools"), session, template_text="{}")
    panel = text_of(first["inference"])
    assert "◐ partial: tool_calls missing" in panel and "The way out: paste an output" in panel
    # The author pastes a real output with a call: the partial template reads it as content,
    # and the status says so instead of "Parsed".
    tools_text = template_text_of(CHECK_TOOLS)
    prefix = "<|sys|>Tools: []<|eot|>\n<|user|>Weather in Oslo?<|eot|>\n<|assistant|>"
    output = 'Checking.<<go>>[get_weather(city="Oslo", days=2)]<</go>><|eot|>'
    parsed = handlers.parse(
        WorkspaceInputs(first["template_text"], prefix, output, tools_text),
        first["test_cases_text"],
        session,
    )
    assert text_of(parsed["status"]).startswith("△ Parsed, but text was probably lost")
    added = handlers.add_test_case(
        WorkspaceInputs(first["template_text"], prefix, output, tools_text),
        first["test_cases_text"],
        session,
    )
    cases = json.loads(added["test_cases_text"])
    assert (cases[0]["name"], cases[0]["source"], cases[0]["check"]) == (
        "your output 1",
        "output",
        "unverified: recorded from a parse with errors or warnings (the tool 'get_weather' is "
        "named at generation offset 16 in content, with its parameter 'city': a call the "
        "template did not read as one stays text there); correct expected if needed, then Confirm",
    )
    assert [case["source"] for case in cases[1:]] == ["matrix"] * 16
    # Sent as an example (its unchecked expected left out), it teaches the call syntax.
    assert as_examples(cases[:1]) == [{"prefix": prefix, "output": output, "tools": CHECK_TOOLS}]
    again = infer(jinja("listed-tools"), session, added["test_cases_text"], first["template_text"])
    template = json.loads(again["template_text"])
    assert template["fields"]["tool_calls"]["open"] == "<<go>>"
    assert "✔ passes its matrix" in again["inference"] and "partial" not in again["inference"]
    assert "1 of your outputs given as examples" in text_of(again["inference"])
    # The author's case stays first; the author corrects its expected message: it passes.
    kept = json.loads(again["test_cases_text"])
    assert kept[0]["generation"] == output and len(kept) == 17
    kept[0]["expected"] = {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}},
            }
        ],
    }
    del kept[0]["check"]
    corrected = json.dumps(kept)
    ran = handlers.run_tests(again["template_text"], corrected, session)["test_results"]
    assert (
        'data-passed="17" data-total="17">17 of 17 cases pass: 1 of 1 your outputs, 16 of 16 matrix rows'
        in ran
    )
    # An edit that breaks the call syntax turns the author's case red.
    broken = again["template_text"].replace('"<<go>>"', '"<<run>>"')
    red = handlers.parse(WorkspaceInputs(broken, prefix, output, tools_text), corrected, session)[
        "test_results"
    ]
    assert 'data-passed="16" data-total="17"' in red
    assert '<details class="rt-case" data-source="output" open><summary>✘ your output 1' in red
    # The cases download as the examples file the command line reads.
    assert examples_jsonl(kept[:1]).splitlines() == [
        json.dumps(as_examples(kept[:1])[0], ensure_ascii=False)
    ]
    exported = handlers.export_cases(again["template_text"], corrected)
    with open(exported["examples_file"], encoding="utf-8") as file:
        assert len(file.read().splitlines()) == 17


def test_infer_learns_from_the_output_pasted_in_the_workspace():
    session = Session()
    listed = jinja("listed-tools")
    first = infer(listed, session, template_text="{}")
    assert "◐ partial: tool_calls missing" in text_of(first["inference"])
    # The workspace holds the matrix row Infer loaded: a render of this chat template, no example.
    assert (first["prefix"], first["generation"]) != ("", "")
    shown = list(
        handlers.infer_chat_template(
            listed,
            "",
            "",
            "",
            True,
            WorkspaceInputs(
                first["template_text"], first["prefix"], first["generation"], first["tools_text"]
            ),
            "",
            session,
        )
    )[-1]
    assert "given as examples" not in text_of(shown["inference"])
    assert "◐ partial: tool_calls missing" in text_of(shown["inference"])
    # The author pastes a real output with a call and Infers again, with no test case added.
    tools_text = template_text_of(CHECK_TOOLS)
    prefix = "<|sys|>Tools: []<|eot|>\n<|user|>Weather in Oslo?<|eot|>\n<|assistant|>"
    output = 'Checking.<<go>>[get_weather(city="Oslo", days=2)]<</go>><|eot|>'
    examples = with_workspace_output([], prefix, output, tools_text)
    assert examples == [{"prefix": prefix, "output": output, "tools": CHECK_TOOLS}]
    # The same output already a test case is sent once; a sample's output is not sent.
    assert with_workspace_output(examples, prefix, output, "") == examples
    assert with_workspace_output([], prefix, output, "", {output}) == []

    def infer_pasted(use_examples: bool) -> dict:
        return list(
            handlers.infer_chat_template(
                listed,
                "",
                "",
                "",
                use_examples,
                WorkspaceInputs(first["template_text"], prefix, output, tools_text),
                "",
                session,
            )
        )[-1]

    again = infer_pasted(True)
    assert json.loads(again["template_text"])["fields"]["tool_calls"]["open"] == "<<go>>"
    assert "✔ passes its matrix" in again["inference"] and "partial" not in again["inference"]
    assert "1 of your outputs given as examples" in text_of(again["inference"])
    # With "Send my outputs as examples" off, the pasted output is not sent.
    off = infer_pasted(False)
    assert "◐ partial: tool_calls missing" in text_of(off["inference"])
    assert "given as examples" not in text_of(off["inference"])


# -- 5. never green over a lost region ------------------------------------------------------


ANCHOR_PAST_OPEN = {
    "start_anchor": "<|assistant|><think>",
    "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "content": {"close": ["<|user|>", "</think>"]},
    },
}


def test_an_anchor_that_cut_past_the_opener_is_never_parsed_green_and_the_advice_names_it():
    session = Session()
    out = handlers.parse(
        WorkspaceInputs(
            template_text_of(ANCHOR_PAST_OPEN),
            "<|user|>Weather?<|assistant|><think>",
            "hmm, sunny</think>It is sunny.<|user|>",
            "",
        ),
        "",
        session,
    )
    lines = [
        text_of(line)
        for line in re.findall(r"<div class=\"rt-status[^>]*>.*?</div>", out["status"])
    ]
    assert lines[0].startswith(
        "⚠ Cause ( start_anchor ): The prompt ends with '<think>', the open delimiter of "
        "reasoning_content (fields.reasoning_content.open), but the start anchor"
    )
    assert lines[1] == "△ Parsed, but text was probably lost (see the cause above): content"
    assert "✔" not in out["status"] and "pass the prompt text" not in out["status"]


def test_stop_before_the_first_token_is_parsed_not_a_misfit():
    # A prompt that pre-writes the reasoning opener, and nothing generated yet (Stop at once).
    template = catalog.samples_by_id()["qwen3/reasoning-and-answer"].template
    live = LiveParse(
        template, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n", None
    )
    live.finalize()
    shown = text_of(status_html(live.view([])))
    assert shown.startswith("✔ Parsed (nothing after the prompt):")
    assert "Does not fit" not in shown


# -- 6. the author's work is safe -----------------------------------------------------------


def test_every_replaced_editor_text_can_be_restored():
    session = Session()
    first = handlers.load_sample("qwen3/reasoning-and-answer", session, template_text="")
    assert first["restore_button"] == {"visible": False}
    mine = first["template_text"].replace('"<think>"', '"<reasoning>"')
    loaded = handlers.load_sample("hermes-2-pro/typed-arguments", session, template_text=mine)
    assert loaded["restore_button"] == {
        "value": "↶ Restore the template before loading a sample",
        "visible": True,
    }
    chosen = handlers.choose_template(
        "smollm3",
        WorkspaceInputs(loaded["template_text"], loaded["prefix"], loaded["generation"], ""),
        session,
    )
    assert chosen["restore_button"]["value"] == "↶ Restore the template before loading smollm3"
    back = handlers.restore_template(
        WorkspaceInputs(chosen["template_text"], loaded["prefix"], loaded["generation"], ""),
        "",
        session,
    )
    assert back["template_text"] == loaded["template_text"]
    back = handlers.restore_template(
        WorkspaceInputs(back["template_text"], loaded["prefix"], loaded["generation"], ""),
        "",
        session,
    )
    assert back["template_text"] == mine and back["restore_button"] == {"visible": False}


def test_the_text_restore_replaced_can_be_put_back():
    session = Session()
    sample = handlers.load_sample("qwen3/reasoning-and-answer", session, template_text="")
    assert sample["restore_back_button"] == {"visible": False}
    mine = sample["template_text"].replace('"<think>"', '"<reasoning>"')
    loaded = handlers.load_sample("hermes-2-pro/typed-arguments", session, template_text=mine)
    hermes = loaded["template_text"]
    edited = hermes.replace('"<tool_call>"', '"<call>"')
    assert edited != hermes

    def workspace(text: str) -> WorkspaceInputs:
        return WorkspaceInputs(text, loaded["prefix"], loaded["generation"], "")

    # Restore brings back the author's text, and keeps the edited one for Back.
    restored = handlers.restore_template(workspace(edited), "", session)
    assert restored["template_text"] == mine
    assert restored["restore_button"] == {"visible": False}
    assert restored["restore_back_button"] == {
        "value": "↷ Back to the text Restore replaced",
        "visible": True,
    }
    assert session.view.template == json.loads(mine)
    # Back puts the edited text back, parsed, and Restore is offered again.
    back = handlers.restore_back(workspace(mine), "", session)
    assert back["template_text"] == edited
    assert back["restore_button"] == {
        "value": "↶ Restore the template before loading a sample",
        "visible": True,
    }
    assert back["restore_back_button"] == {"visible": False}
    assert session.view.template == json.loads(edited)
    # Restore again works as before, and so does Back after it.
    again = handlers.restore_template(workspace(edited), "", session)
    assert again["template_text"] == mine
    assert again["restore_back_button"]["visible"] is True
    # Any other replacement is a new step: the way back is gone, Restore keeps that text.
    reset = handlers.reset_template(workspace(mine), "", session)
    assert reset["template_text"] == hermes
    assert reset["restore_button"] == {
        "value": "↶ Restore the template before Reset",
        "visible": True,
    }
    assert reset["restore_back_button"] == {"visible": False}
    assert session.restored == []
    assert handlers.restore_back(workspace(hermes), "", session) == {
        "restore_button": {"value": "↶ Restore the template before Reset", "visible": True},
        "restore_back_button": {"visible": False},
    }


# -- 7. changed values are shown --------------------------------------------------------------


SEED_LIKE = {
    "start_anchor": "<seed:bos>assistant",
    "fields": {
        "tool_calls": {
            "open_pattern": "<seed:tool_call>\\s*<function=(?P<name>[\\w.\\-]+)>",
            "close_pattern": "</function>\\s*</seed:tool_call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": "<parameter=(?P<key>[^>\\s]+)>\\n?(?P<value>.*?)\\n?</parameter>",
                "value_parser": {"name": "json", "args": {"allow_non_json": True}},
            },
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
        "content": {"close": "<seed:eos>"},
    },
}
NOTE_CALL = (
    '<seed:tool_call>\n<function=note>\n<parameter=text>\nsay "bar"\n\n</parameter>\n'
    "<parameter=days>\n3\n</parameter>\n</function>\n</seed:tool_call>"
)


def test_arguments_whose_values_changed_are_marked_beside_the_message():
    view = traced_view(SEED_LIKE, "<seed:bos>assistant", NOTE_CALL, None)
    assert [(c.path, c.written, c.value, c.how) for c in value_changes(view)] == [
        (
            "tool_calls[0].function.arguments.text",
            'say "bar"\n',
            'say "bar"',
            "whitespace around it stripped",
        ),
        ("tool_calls[0].function.arguments.days", "3", 3, "number read from the text"),
    ]
    assert text_of(value_changes_html(view)) == (
        "△ 2 values not as the model wrote them tool_calls[0].function.arguments.text : whitespace "
        'around it stripped: "say \\"bar\\"\\n" → "say \\"bar\\"" tool_calls[0].function.arguments.days '
        ': number read from the text: "3" → 3'
    )
    # The tool's schema casts only strings: the value parser's values stay (transformers' rule);
    # a JSON string cast to a number is marked.
    tools = [
        {
            "type": "function",
            "function": {
                "name": "note",
                "parameters": {
                    "type": "object",
                    "properties": {"text": {"type": "string"}, "days": {"type": "integer"}},
                },
            },
        }
    ]
    typed = traced_view(SEED_LIKE, "<seed:bos>assistant", NOTE_CALL, tools)
    assert [(c.path, c.how) for c in value_changes(typed)] == [
        ("tool_calls[0].function.arguments.text", "whitespace around it stripped"),
        ("tool_calls[0].function.arguments.days", "number read from the text"),
    ]
    qwen3 = catalog.shipped_template_text("qwen3")
    json_call = '<tool_call>\n{"name": "note", "arguments": {"days": "4"}}\n</tool_call>'
    cast = traced_view(json.loads(qwen3), "<|im_start|>assistant\n", json_call, tools)
    assert [(c.path, c.written, c.value, c.how) for c in value_changes(cast)] == [
        (
            "tool_calls[0].function.arguments.days",
            "4",
            4,
            "number read from a string (the tool's schema says so)",
        )
    ]
    # The handler draws it with the parse.
    out = handlers.parse(
        WorkspaceInputs(template_text_of(SEED_LIKE), "<seed:bos>assistant", NOTE_CALL, ""),
        "",
        Session(),
    )
    assert out["value_changes"].startswith('<div class="rt-value-changes" id="value-changes">')


# -- 8. the smaller faults ---------------------------------------------------------------------


def test_the_root_cause_summary_names_keys_never_garbled_quotes():
    expected = {
        "role": "assistant",
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {}}}],
    }
    got = {"role": "assistant", "content": '<x>[{"type": "function", "function": "f"}]'}
    assert difference_summary(expected, got) == "unexpected content; tool_calls missing"
    row = {
        "name": "first-turn-tools/round-trip:tool-call",
        "passed": False,
        "renderable": True,
        "detail": f"tool_calls missing (expected {json.dumps(expected['tool_calls'])})",
        "expected": expected,
        "got": got,
        "prompt": None,
        "generation": "",
    }
    assert root_causes([row], None) == ["unexpected content; tool_calls missing"]
    assert "“…”" not in root_causes([row], None)[0]


def test_a_lint_fix_never_copies_a_delimiter_the_output_shows_is_misspelt():
    # A typo in the tool call's open: the lint's fix would copy it into the reasoning's close.
    template = {
        "start_anchor": "<seed:bos>assistant",
        "fields": {
            "reasoning_content": {"open": "<seed:think>", "close": "</seed:think>"},
            "tool_calls": {
                "open": "<seed:tool-call>",
                "close": "</seed:tool_call>",
                "content": "json",
            },
            "content": {"close": "<seed:eos>"},
        },
    }
    text = template_text_of(template)
    lint = next(f for f in findings(text) if f.code == "tool-call-swallowed-by-reasoning")
    assert lint.fixed is not None  # without the output, the fix is offered
    session = Session()
    output = '<seed:think>hmm</seed:think><seed:tool_call>{"name": "f", "arguments": {}}</seed:tool_call>'
    out = handlers.parse(WorkspaceInputs(text, "<seed:bos>assistant", output, ""), "", session)
    assert "Fix: use close_pattern" not in out["diagnostics"]
    assert (
        "first fix fields.tool_calls.open: the output has '<seed:tool_call>' where it expects "
        "'<seed:tool-call>' (then this fix copies the right text)"
        in html.unescape(out["diagnostics"])
    )
    assert "Fix: use close_pattern" not in handlers.diagnose(text, session)["diagnostics"]
    # The lint's pattern escapes only what needs it (no "\-" that reads like a typo).
    fixed = template_text_of(
        {
            **template,
            "fields": {
                **template["fields"],
                "tool_calls": {**template["fields"]["tool_calls"], "open": "<seed:tool_call>"},
            },
        }
    )
    fix = next(f for f in findings(fixed) if f.code == "tool-call-swallowed-by-reasoning")
    assert (
        fix.fixed["fields"]["reasoning_content"]["close_pattern"]
        == "</seed:think>|(?=<seed:tool_call>)"
    )


def test_a_regex_error_is_marked_at_its_own_key_not_at_a_key_of_the_same_name_before_it():
    template = {
        "start_anchor": "<a>",
        "fields": {
            "tool_calls": {"open": "<t>", "content": "json", "close_pattern": "</t>"},
            "content": {"close_pattern": "(<end>"},
        },
    }
    text = json.dumps(template, indent=2)
    [error] = findings(text)
    assert (error.path, editor_place(text, error)) == ("fields.content.close_pattern", (10, 31))
    assert text.splitlines()[9][30] == '"'  # the pattern's end: its group never closed


def test_a_click_on_the_map_before_the_page_load_handler_still_explains():
    session = Session()  # the page-load handler has not run yet
    shown = handlers.explain_span({"selected": "anchor"}, session)["explain"]
    assert "Start anchor" in text_of(shown)
    assert session.sample_id == catalog.DEFAULT_SAMPLE


# -- the real outputs of the chat templates the issue names (skipped without them) -------------


@needs_real_outputs
@pytest.mark.parametrize(
    "name", ["GLM-4.7-Flash.jinja", "deepseek-ai-DeepSeek-V3.2.jinja", "ByteDance-Seed-OSS.jinja"]
)
def test_real_outputs_parse_green_only_when_nothing_is_lost(name):
    entry = next(e for e in manifest(MORE) if e["file"] == name)
    session = Session()
    list(
        handlers.infer_chat_template(
            (MORE / name).read_text(encoding="utf-8"),
            "",
            entry["bos_token"],
            entry["eos_token"],
            False,
            WorkspaceInputs("", "", "", ""),
            "",
            session,
        )
    )
    text = template_text_of(session.inference["template"])
    for case in cases_by_chat_template(load_cases())[name]:
        tools = json.dumps(case.get("tools")) if case.get("tools") else ""
        out = handlers.parse(
            WorkspaceInputs(text, case["prefix"], case["output"], tools), "", session
        )
        assert "✔ Parsed" in out["status"], (case["id"], text_of(out["status"]))
    # The anchor that cut past the reasoning's opener: never green where reasoning was written.
    if name.startswith("GLM"):
        damaged = copy.deepcopy(session.inference["template"])
        damaged["start_anchor"] = "<|assistant|><think>"
        damaged.pop("start_anchor_pattern", None)
        reasoned = [
            case
            for case in cases_by_chat_template(load_cases())[name]
            if case["expected"].get("reasoning_content")
            and case["prefix"].endswith("<|assistant|><think>")
        ]
        assert reasoned
        for case in reasoned:
            tools = json.dumps(case.get("tools")) if case.get("tools") else ""
            out = handlers.parse(
                WorkspaceInputs(template_text_of(damaged), case["prefix"], case["output"], tools),
                "",
                session,
            )
            assert "✔" not in out["status"], case["id"]
            assert 'data-key="start_anchor"' in out["status"]
            assert "pass the prompt text" not in out["status"]


def test_an_edit_puts_a_new_field_before_the_implicit_one_and_replaces_the_anchor_kind():
    template = {"start_anchor_pattern": "<a>\\s*", "fields": {"r": {"open": "<r>"}, "c": {}}}
    edited = apply_edit(template, {"fields.t": {"open": "<t>"}, "start_anchor": "<a>"})
    assert edited == {
        "fields": {"r": {"open": "<r>"}, "t": {"open": "<t>"}, "c": {}},
        "start_anchor": "<a>",
    }
    assert list(edited["fields"]) == ["r", "t", "c"] and "start_anchor_pattern" in template


# Two minimax-m2 calls; each output misspells one close the template has right.
MINIMAX_PREFIX = "]~b]ai\n<think>\n"


def minimax_output(call_close: str = "</invoke>", section_close: str = "</minimax:tool_call>"):
    def call(city: str, days: int, close: str) -> str:
        return (
            f'<invoke name="get_weather">\n<parameter name="city">{city}</parameter>\n'
            f'<parameter name="days">{days}</parameter>\n{close}\n'
        )

    return (
        "Two cities.\n</think>\n\n<minimax:tool_call>\n"
        + call("Paris", 3, call_close)
        + call("Tokyo", 5, "</invoke>")
        + section_close
    )


def test_parse_api_is_never_plain_parsed_over_a_lost_call_or_a_misspelt_close():
    from playground import api

    template = json.dumps(load_template_file("minimax-m2").response_template)
    lost = api.parse(template, MINIMAX_PREFIX, minimax_output(call_close="</invok>"))
    assert [c["function"]["arguments"] for c in lost["message"]["tool_calls"]] == [
        {"city": "Tokyo", "days": "5"}
    ]
    assert lost["status"].startswith(
        "Parsed, but text was probably lost (the tool call opened by '<invoke name=\"get_weather\">' "
        "at generation offset 42 is lost: its close '</invoke>' never came (the output has '</invok>' "
        "there, a near miss of it)"
    )
    assert lost["warnings"][1].startswith(
        "the key 'city' appears 2 times in one tool_calls call's arguments: only the last value is kept"
    )
    misspelt = api.parse(
        template, MINIMAX_PREFIX, minimax_output(section_close="</minimax:tool_cal>")
    )
    assert misspelt["message"]["content"] == "</minimax:tool_cal>"
    assert misspelt["status"].startswith(
        "Parsed, but text was probably lost (fields.content.close expects '</minimax:tool_call>', but "
        "the text has '</minimax:tool_cal>' at generation offset 274"
    )
    # Cut short after a whole word, never inside one.
    assert misspelt["status"].endswith(
        "ran to the end of the text. Fix: change…): reasoning_content, tool_calls, content"
    )
    clean = api.parse(template, MINIMAX_PREFIX, minimax_output())
    assert clean["status"] == "Parsed: reasoning_content, tool_calls" and clean["warnings"] == []


def test_a_failure_group_says_what_differs_in_the_calls_and_why():
    from engine import parse_response

    template = {
        "start_anchor": "<|assistant|>",
        "defaults": {"role": "assistant"},
        "fields": {
            "tool_calls": {
                "open_pattern": '<call name="(?P<name>[^"]+)">',
                "close": "</call>",
                "repeats": True,
                "content": "xml-inline",
                "content_args": {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>"},
                "transform": {
                    "type": "function",
                    "function": {"name": "{name}", "arguments": "{content}"},
                },
            },
            "content": {},
        },
    }
    generation = '<call name="create_event"><title>Lunch</title><details><where>Paris</where></details></call>'
    got = parse_response(generation, template, prefix="")
    expected = {
        "role": "assistant",
        "tool_calls": [
            {
                "type": "function",
                "function": {
                    "name": "create_event",
                    "arguments": {"title": "Lunch", "details": {"where": "Paris"}},
                },
            }
        ],
    }
    assert got["tool_calls"][0]["function"]["arguments"]["details"] == "<where>Paris</where>"
    row = {
        "name": "first-turn-tools/round-trip:content-and-tool-calls",
        "passed": False,
        "renderable": True,
        "detail": "tool_calls differs",
        "expected": expected,
        "got": got,
        "prompt": "",
        "generation": generation,
        "tools": True,
    }
    [group] = failure_groups({"template": template, "report": {"situations": [row]}})
    assert group.key == "fields.tool_calls"
    assert group.cause == (
        "argument 'details' came back as text, not an object: the chat template writes it as nested "
        "tags, and xml-inline reads one level of tags, so the inner tags stay a raw string. Read that "
        "value as JSON (content_args.value_parser) when the model writes JSON there, or accept the "
        "text and convert it after parsing"
    )
    assert root_causes([row], template) == [group.cause]
    # One call read where two were written says so, not "tool_calls differs".
    two = {**expected, "tool_calls": expected["tool_calls"] * 2}
    assert difference_summary(two, got, template) == (
        "2 tool calls expected, 1 read (a call lost, or two read as one: check where each call's "
        "region closes)"
    )


def test_findings_list_each_key_once_only_what_the_template_holds_in_the_authors_words():
    from engine.chat_templates.infer import infer_template

    result = infer_template(jinja("xml-parameters")).to_dict()
    # Two findings of one key (as inference gives for a close list), and a finding of a key the
    # chosen template does not have.
    result["findings"].append({**result["findings"][0], "how": "seen again in another render"})
    assert result["template"]["fields"]["tool_calls"].pop("repeats") is True
    shown = findings_html(result)
    keys = re.findall(r'data-finding="\d+"><code class="rt-key">([^<]+)</code>', shown)
    assert len(keys) == len(set(keys))
    assert "fields.tool_calls.repeats" not in keys
    assert "fields.tool_calls.repeats" in text_of(shown.split('id="inference-unused"')[1])
    first = result["findings"][0]
    assert f"{first['how']}; seen again in another render" in html.unescape(shown)
    # Probe names never reach the author's text; the renders (evidence) keep them.
    # Arguments written by value alone: no content parser names them, a part is missing.
    positional = (
        "{%- for m in messages -%}<{{ m.role }}>{{ m.content or '' }}"
        "{%- for c in m.tool_calls or [] %}CALL {{ c.function.name }} WITH "
        "{% for k, v in c.function.arguments.items() %}{{ v | tojson }} | {% endfor %}END"
        "{% endfor %}</>{% endfor -%}{%- if add_generation_prompt %}<assistant>{% endif -%}"
    )
    missing = infer_template(positional).to_dict()
    assert "zq_fn_alpha" in json.dumps(missing["missing"])
    panel = text_of(findings_html(missing))
    assert "zq" not in panel
    assert r'explains "CALL a_tool WITH \"some text\" | 73519 | END"' in panel


def test_the_same_template_pasted_back_is_not_stale():
    from playground.outputs import derived_views as stale_derived
    from playground.parse.derived import remember_derived

    session = Session()
    text = template_text_of(load_template_file("qwen3").response_template)
    remember_derived(session, "conformance", "<p>the check</p>", text)
    same = json.dumps(json.loads(text), indent=4).replace("\n", "\r\n") + "\n"
    assert stale_derived(session, WorkspaceInputs(same, "", "", "")) == {}
    changed = text.replace("</think>", "</thought>")
    [banner] = stale_derived(session, WorkspaceInputs(changed, "", "", "")).values()
    assert banner.startswith('<div class="rt-stale-banner rt-derived-stale" id="conformance-stale"')
    # Pasted back: the check is shown again without the banner.
    assert stale_derived(session, WorkspaceInputs(text, "", "", "")) == {
        "conformance": "<p>the check</p>"
    }


def test_a_failed_parse_in_the_tests_shows_its_error_not_a_null_diff():
    from playground.authoring.test_cases import run_cases
    from playground.panels.test_results import results_html

    template = load_template_file("qwen3").response_template
    case = {
        "name": "broken call",
        "prefix": "<|im_start|>assistant\n",
        "generation": '<tool_call>\n{"name": "f", "arguments": {]}\n</tool_call>',
        "expected": {"role": "assistant", "content": "x"},
    }
    [result] = run_cases(template, [case])
    assert not result.passed and result.got is None and result.diff == []
    assert result.error.startswith("The output does not parse: fields.tool_calls: json:")
    shown = results_html([result], 1)
    assert "null" not in shown and 'class="rt-diff"' not in shown
    assert "The output does not parse: fields.tool_calls: json:" in html.unescape(shown)


def test_the_page_names_an_output_that_misspells_a_delimiter_the_test_cases_confirm():
    qwen3 = template_text_of(load_template_file("qwen3").response_template)
    prefix = "<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"
    good = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    misspelt = good.replace("</tool_call>", "</tool_calsl>")
    cases = json.dumps([{"prefix": prefix, "generation": good, "expected": {"role": "assistant"}}])
    page = handlers.parse(WorkspaceInputs(qwen3, prefix, misspelt, ""), cases, Session())
    status = text_of(page["status"])
    assert (
        "The output misspells '</tool_call>' as '</tool_calsl>' at generation offset 68: a generation "
        "error, not a template fault (other outputs of the model hold it"
    ) in status
    assert "instead of" not in status and "Fix:" not in status
    # Without test cases the shipped template's own samples confirm its side.
    alone = text_of(
        handlers.parse(WorkspaceInputs(qwen3, prefix, misspelt, ""), "", Session())["status"]
    )
    assert (
        "The output misspells '</tool_call>' as '</tool_calsl>' at generation offset 68: a "
        "generation error, not a template fault (the shipped template's samples hold it"
    ) in alone
    assert "instead of" not in alone and "Fix:" not in alone


def test_outputs_made_for_one_chat_template_never_reach_the_inference_of_another():
    session = Session()
    first = infer(jinja("listed-tools"), session, template_text="{}")
    tools_text = template_text_of(CHECK_TOOLS)
    prefix = "<|sys|>Tools: []<|eot|>\n<|user|>Weather in Oslo?<|eot|>\n<|assistant|>"
    output = 'Checking.<<go>>[get_weather(city="Oslo", days=2)]<</go>><|eot|>'
    pasted = WorkspaceInputs(first["template_text"], prefix, output, tools_text)
    added = handlers.add_test_case(pasted, first["test_cases_text"], session)
    # Another chat template, with the first model's output in the workspace and in Tests.
    other = list(
        handlers.infer_chat_template(
            jinja("xml-parameters"), "", "", "", True, pasted, added["test_cases_text"], session
        )
    )[-1]
    panel = text_of(other["inference"])
    assert "given as examples" not in panel
    assert (
        "Started fresh for this chat template: 1 output made for the previous chat template was not "
        "sent as examples and left out of Tests (they belong to that model)."
    ) in panel
    cases = json.loads(other["test_cases_text"])
    assert {case["source"] for case in cases} == {"matrix"}
    assert all("<<go>>" not in case["generation"] for case in cases)
    assert "<<go>>" not in other["template_text"] and output not in other["generation"]
    # The same chat template again: the author's outputs count for it.
    mine = json.dumps([json.loads(added["test_cases_text"])[0]] + cases)
    again = list(
        handlers.infer_chat_template(
            jinja("xml-parameters"), "", "", "", True, other_workspace(other), mine, session
        )
    )[-1]
    assert "1 of your outputs given as examples" in text_of(again["inference"])


def other_workspace(outputs: dict) -> WorkspaceInputs:
    return WorkspaceInputs(
        outputs["template_text"], outputs["prefix"], outputs["generation"], outputs["tools_text"]
    )


@needs_shared
@pytest.mark.parametrize("close", ["</invoke>", "</invok>"])
def test_the_status_of_a_matrix_row_agrees_with_the_matrix(close):
    # A row passes only when every region ended at its own close, so the page never shows
    # "text was probably lost ... never closed" above a row the matrix calls passed.
    from engine.chat_templates.conformance import TOOLS
    from playground.panels.status import parse_judgement

    template = copy.deepcopy(load_template_file("minimax-m2").response_template)
    template["fields"]["tool_calls"]["close"] = close
    chat_template = (CHAT_TEMPLATES / "minimax-m2.jinja").read_text(encoding="utf-8")
    report = check_conformance(template, chat_template)
    judged = {}
    for row in report.situations:
        if row.renderable:
            view = traced_view(template, row.prompt, row.generation, TOOLS if row.tools else None)
            judged[row.name] = (row.passed, parse_judgement(view)[0])
    assert all(passed == clean for passed, clean in judged.values()), judged
    assert sum(passed for passed, _ in judged.values()) == (16 if close == "</invoke>" else 12)
