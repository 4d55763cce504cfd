"""The Template tab's "Start from a chat template": inference in a worker process, the inferred
template in the editor with its matrix, and the renders that found each delimiter in #explain
(for a finding clicked, and for a delimiter clicked on the map). Real worker processes, real
chat templates (tests/support/chat_templates), no mocks."""

from __future__ import annotations

import dataclasses
import html
import json
import re

import pytest

from engine.chat_templates.conformance import TOOLS as CHECK_TOOLS
from engine.chat_templates.render import hub_reachable
from playground import handlers
from playground.authoring import inference
from playground.catalog import template_text_of
from playground.parse.session import Session
from playground.parse.workspace import WorkspaceInputs
from playground.server import limits
from playground.server.workers import JobError
from tests.support.paths import CHAT_TEMPLATE_FIXTURES

CHAT_TEMPLATES = CHAT_TEMPLATE_FIXTURES
KV_LINES = (CHAT_TEMPLATES / "kv-lines.jinja").read_text(encoding="utf-8")
PREFIX = "<user>Weather?</user>\n<assistant>"
GENERATION = "Checking.\n<action get_weather>\ncity: Oslo\ndays: 3\n</action></assistant>"
LOOPS = "{% for i in range(99999) %}{% for j in range(99999) %}{{ i }}{% endfor %}{% endfor %}"


def infer(
    chat_template_text=KV_LINES, chat_template_model="", session=None, test_cases_text="", **kw
):
    """Run the Infer handler to the end: (its outputs in order, the session)."""
    session = session or Session()
    outputs = list(
        handlers.infer_chat_template(
            chat_template_text,
            chat_template_model,
            kw.get("bos_token", ""),
            kw.get("eos_token", ""),
            kw.get("use_examples", True),
            WorkspaceInputs(kw.get("template_text", ""), "", "", ""),
            test_cases_text,
            session,
        )
    )
    return outputs, session


def text_of(markup: str) -> str:
    # <wbr> (a break point inside a key path) draws nothing.
    markup = markup.replace("<wbr>", "")
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", markup))).strip()


def test_the_inferred_template_goes_into_the_editor_and_a_matrix_row_shows_it_working():
    outputs, session = infer(template_text='{"my": "draft"}')
    assert outputs[0] == {
        "inference": '<div class="rt-status rt-status-live" id="inference-pending">⏳ Inferring… (at most 30 s)</div>'
    }
    last = outputs[-1]
    template = json.loads(last["template_text"])
    assert template == session.inference["template"]
    assert template["fields"]["tool_calls"]["content"] == "xml-inline"
    assert (
        'id="inference-badge">✔ passes its matrix</span> 20 passed, 0 failed, 0 not renderable'
        in last["inference"]
    )
    assert (
        '<div class="rt-note" id="inference-verdict">the inferred template passes its matrix (20 rows)</div>'
        in last["inference"]
    )
    assert (
        'data-passed="true">✔ conforms</span> 20 passed, 0 failed, 0 not renderable — against the pasted chat template'
        in last["conformance"]
    )
    # The workspace shows one of the chat template's own renders, parsed: no failure banner.
    assert last["prefix"] == "<user>What's the weather in Paris today?</user>\n<assistant>"
    assert last["generation"].startswith("Checking both now.<action get_weather>\ncity: Zürich")
    assert json.loads(last["tools_text"]) == CHECK_TOOLS
    assert text_of(last["status"]) == (
        "✔ Parsed: tool_calls, content Matrix row first-turn-tools/round-trip:content-and-tool-calls "
        "(passed): a render of the pasted chat template, parsed with the inferred template."
    )
    assert "rt-status-error" not in last["status"] and "rt-status-misfit" not in last["status"]
    assert session.view.message["content"] == "Checking both now."
    assert [call["function"]["name"] for call in session.view.message["tool_calls"]] == [
        "get_weather",
        "create_event",
    ]
    # The Tests tab holds the matrix rows, never another family's samples, and they pass.
    cases = json.loads(last["test_cases_text"])
    assert len(cases) == 20 and {case["source"] for case in cases} == {"matrix"}
    assert [case.get("tools") is not None for case in cases[:3]] == [False, False, True]
    assert (
        'id="test-summary" data-passed="20" data-total="20">20 of 20 cases pass'
        in (last["test_results"])
    )
    # The editor's text before is kept for Restore.
    assert last["restore_button"] == {
        "value": "↶ Restore the template before Infer",
        "visible": True,
    }
    assert session.replaced == [("Infer", '{"my": "draft"}')]
    assert last["start_from"] is None  # the editor no longer holds a templates/ file
    # Every finding is a button that shows its renders.
    assert last["inference"].count('class="rt-finding" data-finding=') == len(
        session.inference["findings"]
    )


def test_a_finding_clicked_shows_the_two_renders_that_found_it():
    _, session = infer()
    index = next(
        i
        for i, f in enumerate(session.inference["findings"])
        if f["key"] == "fields.tool_calls.open_pattern"
    )
    shown = handlers.show_finding({"finding": index}, session)["explain"]
    assert text_of(shown).startswith(
        'fields.tool_calls.open_pattern = "<action\\\\s*(?P<name>[A-Za-z_][\\\\w\\\\-]*(?:\\\\.[\\\\w\\\\-]+)*)>\\\\s*" '
        "what every render writes where a call starts, aligned with its message's calls"
    )
    assert "found by comparing these two renders (the difference marked):" in shown
    assert (
        "first turn: one call of zq_fn_alpha" in shown
        and "first turn: two calls, zq_fn_alpha then zq_fn_beta" in shown
    )
    assert shown.count('<mark class="rt-evidence-diff">') == 2
    assert handlers.show_finding({"finding": 999}, session) == {}


def test_a_delimiter_clicked_on_the_map_says_how_inference_found_it():
    _, session = infer()
    opening = next(
        i
        for i, span in enumerate(session.view.spans)
        if span.kind == "open" and span.field == "tool_calls"
    )
    shown = handlers.explain_span({"selected": str(opening)}, session)["explain"]
    assert (
        '<div class="rt-explain" id="explain-inferred"><div class="rt-explain-title">How inference found it</div>'
        in shown
    )
    assert "what every render writes where a call starts" in html.unescape(shown)
    # Once the editor holds another delimiter there, the inference's evidence is not shown for it.
    template = dict(session.inference["template"])
    template["fields"] = {
        **template["fields"],
        "tool_calls": {
            **template["fields"]["tool_calls"],
            "open_pattern": "<action (?P<name>\\w+)>",
        },
    }
    handlers.parse(WorkspaceInputs(template_text_of(template), PREFIX, GENERATION, ""), "", session)
    opening = next(
        i
        for i, span in enumerate(session.view.spans)
        if span.kind == "open" and span.field == "tool_calls"
    )
    assert (
        "How inference found it"
        not in handlers.explain_span({"selected": str(opening)}, session)["explain"]
    )


def test_a_delimiter_clicked_in_the_editor_says_how_inference_found_it():
    outputs, session = infer()
    text = outputs[-1]["template_text"]
    at = text.index("<action") + 2  # inside the open pattern's string
    shown = handlers.show_event({"editor_at": at}, text, session)["explain"]
    assert shown.index("Open pattern") < shown.index(
        "How inference found it"
    )  # the pattern first, then its evidence
    assert "what every render writes where a call starts" in html.unescape(shown)
    # A key that is no pattern but was inferred: only its evidence.
    end = session.inference["template"]["fields"]["content"].get("close")
    assert end is not None
    at = text.index(json.dumps(end)[1:-1], text.index('"content"')) + 1
    shown = handlers.show_event({"editor_at": at}, text, session)["explain"]
    assert shown.startswith(
        '<div class="rt-explain" id="explain-inferred"><div class="rt-explain-title">How inference found it</div>'
    )
    # Edited away from what inference found: nothing to say about a plain delimiter.
    edited = text.replace(json.dumps(end), '"@@"', 1)
    assert handlers.show_event({"editor_at": edited.index('"@@"') + 1}, edited, session) == {}


def test_bad_input_says_what_is_wrong(monkeypatch):
    outputs, _ = infer("", "")
    assert text_of(outputs[-1]["inference"]) == (
        "⚠ Paste a chat template (the Jinja text of the model's chat_template), or name "
        "a model (a local folder or a hub id) to take it from."
    )
    outputs, _ = infer("{{ raise_exception('no chat here') }}")
    assert text_of(outputs[-1]["inference"]) == (
        "⚠ the chat template does not render a first user turn with a generation "
        "prompt: user + generation prompt: no chat here"
    )
    monkeypatch.setattr(
        limits, "LIMITS", dataclasses.replace(limits.LIMITS, chat_template_chars=100)
    )
    outputs, _ = infer(KV_LINES)
    assert (
        text_of(outputs[-1]["inference"])
        == f"⚠ The chat template is too large: {len(KV_LINES):,} characters (limit 100)."
    )


def test_a_chat_template_that_loops_is_cut_off_within_the_check_budget(monkeypatch):
    monkeypatch.setattr(
        limits, "LIMITS", dataclasses.replace(limits.LIMITS, conformance_seconds=2.0)
    )
    outcome = inference.infer_from_page(LOOPS, "")
    assert outcome.result is None
    assert outcome.error == (
        "Inference ran out of time: it was cut off after 2 s (the chat template may render too "
        "slowly, or loop). The time limit is PLAYGROUND_LIMITS' conformance_seconds."
    )


@pytest.mark.skipif(
    hub_reachable()[0], reason="the Hugging Face Hub is reachable here: a hub id would be fetched"
)
def test_a_hub_id_without_network_fails_with_advice_for_the_page():
    outcome = inference.infer_from_page("", "Qwen/Qwen3-0.6B")
    assert outcome.result is None and outcome.error.startswith(
        "the Hugging Face Hub is not reachable ("
    )
    assert outcome.error.endswith(
        "and give their folder, or paste the chat template instead."
    )  # no command-line option


def test_an_inference_past_its_budget_names_the_pages_time_limit():
    slow = (
        "{% for i in range(300000) %}{% endfor %}"
        "{%- for m in messages %}<|{{ m.role }}|>{{ m.content }}<|eot|>{% endfor -%}"
        "{%- if add_generation_prompt %}<|assistant|>{% endif -%}"
    )
    with pytest.raises(JobError) as raised:
        inference.infer_job({"chat_template": slow, "seconds": 0.001})
    assert str(raised.value) == (
        "inference ran out of time after 0.001 s: the time budget ran out while rendering: the "
        "chat template renders too slowly. The time limit is PLAYGROUND_LIMITS' "
        "conformance_seconds."
    )


# -- the author's outputs as examples: one click from Generate live, the text a learn leaves --


def test_an_output_generated_live_becomes_an_example_with_one_click():
    from playground.authoring.test_cases import as_examples
    from playground.handlers import generate_live as live

    session = Session()
    before = handlers.use_live_output("", "", session)
    assert before == {
        "live_example_note": "Generate first: the output the model writes can then become an "
        "example for Infer (Start from a model)."
    }
    tools_text = template_text_of(CHECK_TOOLS)
    out = list(
        live.generate(
            "samples/demo-model",
            "",
            "Weather in Paris?",
            "",
            tools_text,
            False,
            24,
            0.7,
            0.9,
            0,
            True,
            "",
            session,
        )
    )[-1]
    generated, prefix = out["generation"], out["prefix"]
    assert generated.strip() and prefix.endswith("assistant\n")
    assert session.live_output == {"prefix": prefix, "output": generated, "tools": CHECK_TOOLS}
    clicked = handlers.use_live_output(out["template_text"], "", session)
    cases = json.loads(clicked["test_cases_text"])
    assert cases == [
        {
            "name": "live output 1",
            "source": "output",
            "prefix": prefix,
            "generation": generated,
            "expected": session.view.message,
            "tools": CHECK_TOOLS,
        }
    ]
    assert clicked["live_example_note"] == (
        "✔ Added to Tests as 'live output 1', one of your outputs: Infer (Start from a model) "
        "sends it as an example, the output, the tools it was given and the message it parsed to."
    )
    assert 'data-passed="1" data-total="1"' in clicked["test_results"]
    # Its parse had no error or warning: sent to inference with the message it parsed to.
    assert as_examples(cases) == [
        {
            "prefix": prefix,
            "output": generated,
            "tools": CHECK_TOOLS,
            "expected": session.view.message,
        }
    ]
    again = handlers.use_live_output(out["template_text"], clicked["test_cases_text"], session)
    assert again == {
        "live_example_note": "This output is already in Tests: Infer sends it as an example."
    }
    # Infer from the model's chat template: the live output is one of the examples given.
    outputs, _ = infer("", "samples/demo-model", session, clicked["test_cases_text"])
    assert "1 of your outputs given as examples" in text_of(outputs[-1]["inference"])
    assert session.inference["example_outputs"] == [generated]


KEYED = (CHAT_TEMPLATES / "keyed-calls.jinja").read_text(encoding="utf-8")
# A call with positional arguments: no payload parser of the template language reads it.
POSITIONAL = 'On it.<|calls|>get_weather("Oslo", 2)<|/calls|><|eot|>'


def test_a_failed_learn_highlights_per_example_the_text_it_could_not_explain():
    # Two outputs: the first with a call no field can read, the second plain text. The panel
    # marks, in the first output only, what no field reads and why, instead of saying the
    # outputs did not show the calls.
    cases = [
        {
            "name": "mine",
            "source": "output",
            "prefix": "<|user|>Weather in Oslo?<|eot|>\n<|assistant|>",
            "generation": POSITIONAL,
            "expected": {},
            "check": "unchecked",
            "tools": CHECK_TOOLS,
        },
        {
            "name": "plain",
            "source": "output",
            "prefix": "<|user|>Hi<|eot|>\n<|assistant|>",
            "generation": "Hello there.<|eot|>",
            "expected": {"role": "assistant", "content": "Hello there."},
        },
    ]
    outputs, session = infer(KEYED, test_cases_text=json.dumps(cases))
    panel = outputs[-1]["inference"]
    assert session.inference["example_outputs"] == [POSITIONAL, "Hello there.<|eot|>"]
    # The chat template's renders teach the keyed calls (the aligner reads the renders), so the
    # markers around them are explained: only the call no field reads is left.
    assert session.inference["unexplained"] == {
        "0": [
            {
                "start": 15,
                "end": 26,
                "why": "'get_weather' is written as a call but no call was read",
            },
        ]
    }
    shown = text_of(panel)
    assert "did not show it" not in shown
    assert (
        "What the template could not explain in your outputs (highlighted) example 1: your output "
        "On · it.<|calls|> get_weather (\"Oslo\", · 2)<|/calls|><|eot|> 'get_weather' is written "
        "as a call but no call was read What inference found" in shown
    )
    assert "example 2: your output" not in shown
    marks = re.findall(r'<mark class="rt-unexplained-text" title="([^"]*)">(.*?)</mark>', panel)
    assert [(html.unescape(why), html.unescape(text)) for why, text in marks[:3]] == [
        ("'get_weather' is written as a call but no call was read", "get_weather"),
    ]


def test_the_inference_panel_draws_every_text_it_is_given_as_text():
    from playground.panels.inference_panel import evidence_html, findings_html

    hostile = '<img src=x onerror="alert(1)">'
    finding = {
        "key": "fields.content.close",
        "value": hostile,
        "how": hostile,
        "renders": [{"label": hostile, "text": f"a{hostile}b", "difference": [1, 31]}],
    }
    result = {
        "template": {"fields": {"content": {"close": hostile}}},
        "passed": False,
        "complete": False,
        "missing": [{"part": "tool_calls", "why": hostile, "construct": ""}],
        "report": {"counts": {"passed": 0, "failed": 1, "not_renderable": 0}, "situations": []},
        "findings": [finding],
        "verdict": hostile,
        "fallbacks": [hostile],
        "notes": [hostile],
        "candidates": [],
    }
    for shown in (findings_html(result), evidence_html(finding), findings_html(None, hostile)):
        assert "<img" not in shown and "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in shown
    assert text_of(findings_html(result)).startswith(
        "✘ fails its matrix ◐ partial: tool_calls missing 0 passed, 1 failed, 0 not renderable "
        f"{hostile} ◐ tool_calls not inferred: {hostile}. The way out: paste an output"
    )
