"""The Template tab's chat-template check: its handlers, its worker process and `/conformance`,
on the real demo model's chat template (no mocks)."""

from __future__ import annotations

import dataclasses
import html
import json
import re

import psutil
import pytest

from engine.chat_templates.conformance import TOOLS, check_conformance
from engine.chat_templates.render import hub_reachable
from playground import api, handlers
from playground.authoring import chat_template_check
from playground.catalog import shipped_template_text
from playground.outputs import Update
from playground.parse.session import Session
from playground.server import limits
from tests.support.paths import ROOT

DEMO_CHAT_TEMPLATE = (ROOT / "samples" / "demo-model" / "chat_template.jinja").read_text(
    encoding="utf-8"
)
DEMO_TEXT = shipped_template_text("demo-model")
GPT_OSS_TEXT = shipped_template_text("gpt-oss")
# The demo chat template pre-writes `<think>\n` with thinking on but writes a tool-calling turn's
# content without it: the rendered turn cannot show how the model closes the reasoning.
NOT_RENDERABLE = [
    f"{situation}/thinking-on/round-trip:content-and-tool-calls"
    for situation in (
        "first-turn-tools",
        "multi-turn",
        "after-tool-result",
        "after-parallel-tool-results",
    )
]
LOOPS = "{% for i in range(99999) %}{% for j in range(99999) %}{{ i }}{% endfor %}{% endfor %}"


def check(
    template_text=DEMO_TEXT,
    chat_template_text=DEMO_CHAT_TEMPLATE,
    chat_template_model="",
    bos="",
    eos="",
    session=None,
):
    """Run the Check handler to the end; returns (its last output, the pending one, the session)."""
    session = session or Session()
    outputs = list(
        handlers.check_chat_template(
            template_text, chat_template_text, chat_template_model, bos, eos, session
        )
    )
    return outputs[-1]["conformance"], outputs[0]["conformance"], session


def summary(panel: str) -> str:
    return re.sub(
        r"<[^>]+>", "", re.search(r'id="conformance-summary">(.*?)</div>', panel).group(1)
    )


def row_index(session: Session, name: str) -> int:
    return next(i for i, row in enumerate(session.check_rows) if row["name"] == name)


def with_limits(monkeypatch, **caps):
    monkeypatch.setattr(limits, "LIMITS", dataclasses.replace(limits.LIMITS, **caps))


def test_the_demo_chat_template_conforms_and_the_worker_gives_the_library_report():
    panel, pending, session = check()
    assert (
        pending
        == '<div class="rt-status rt-status-live" id="conformance-pending">⏳ Checking… (at most 30 s)</div>'
    )
    text = summary(panel)
    assert text.startswith(
        "✔ conforms 36 passed, 0 failed, 4 not renderable — against the pasted chat template ("
    )
    assert text.endswith(" s; thinking switch: enable_thinking)")
    # The worker's report is the library's, row for row (prompts and generations included).
    expected = check_conformance(
        json.loads(DEMO_TEXT), chat_template=DEMO_CHAT_TEMPLATE, regex_timeout=0.5
    ).to_dict()
    assert session.check_rows == expected["situations"]
    assert [row["name"] for row in session.check_rows if not row["renderable"]] == NOT_RENDERABLE
    # Every row with a prompt is clickable; each shows its situation, thinking mode and check.
    assert panel.count("<tr class=") == 40 and panel.count(" data-row=") == 40
    assert (
        '<b>after-tool-result</b><span class="rt-check"> · thinking off · round-trip: tool-call</span>'
        in panel
    )


def test_a_model_folder_gives_its_tokenizer_chat_template():
    panel, _, session = check(chat_template_text="", chat_template_model="samples/demo-model")
    assert (
        "36 passed, 0 failed, 4 not renderable — against the chat template of samples/demo-model ("
        in summary(panel)
    )
    assert len(session.check_rows) == 40


@pytest.mark.skipif(
    hub_reachable()[0], reason="the Hugging Face Hub is reachable here: a hub id would be fetched"
)
def test_a_hub_id_without_network_fails_with_a_clear_message():
    panel, _, session = check(chat_template_text="", chat_template_model="Qwen/Qwen3-0.6B")
    error = html.unescape(re.search(r'id="conformance-error">⚠ (.*?)</div>', panel).group(1))
    assert error.startswith("the Hugging Face Hub is not reachable (")
    assert error.endswith(
        "and 'Qwen/Qwen3-0.6B' is not in the local cache. Download the tokenizer files elsewhere (tokenizer_config.json, "
        "tokenizer.json, chat_template.jinja) and give their folder, or paste the chat template instead."
    )
    assert session.check_rows == []


def test_a_mismatched_template_fails_and_says_what_differs():
    panel, _, session = check(template_text=GPT_OSS_TEXT)
    expected = check_conformance(
        json.loads(GPT_OSS_TEXT), chat_template=DEMO_CHAT_TEMPLATE, regex_timeout=0.5
    )
    counts = expected.counts()
    assert counts["failed"] > 0
    assert summary(panel).startswith(
        f"✘ does not conform {counts['passed']} passed, {counts['failed']} failed, {counts['not_renderable']} not renderable"
    )
    assert session.check_rows == expected.to_dict()["situations"]
    assert panel.count('class="rt-row-fail"') == counts["failed"]
    # The lint finding that needs the rendered prompts is shown above the rows.
    assert [d.code for d in expected.diagnostics] == ["anchor-not-in-prompts"]
    assert "occurs in none of the" in panel


def test_a_row_click_loads_its_prompt_and_generation_into_paste_and_parse():
    _, _, session = check()
    name = "after-tool-result/thinking-on/round-trip:tool-call"
    row = session.check_rows[row_index(session, name)]
    out = handlers.load_check_row({"row": row_index(session, name)}, DEMO_TEXT, "", session)
    assert out["prefix"] == row["prompt"] and out["generation"] == row["generation"]
    assert json.loads(out["tools_text"]) == TOOLS
    assert out["modes"] == Update(selected="paste") and session.tab == "paste"
    assert out["template_choice"] == "demo-model"
    # The page's parse of the row is the check's.
    assert session.view.message == row["got"] == row["expected"]
    assert (
        f'<div class="rt-status rt-status-note">Chat-template check, {name} (passed)</div>'
        in out["status"]
    )


def test_a_failed_row_loads_with_its_detail_and_an_edited_template_is_noted():
    _, _, session = check(template_text=GPT_OSS_TEXT)
    index = next(
        i for i, row in enumerate(session.check_rows) if row["renderable"] and not row["passed"]
    )
    row = session.check_rows[index]
    out = handlers.load_check_row({"row": index}, GPT_OSS_TEXT, "", session)
    assert session.view.message == row["got"]
    assert f"Chat-template check, {row['name']} (failed): " in out["status"]
    edited = handlers.load_check_row({"row": index}, DEMO_TEXT, "", session)
    assert "The template has changed since the check.</div>" in edited["status"]
    assert handlers.load_check_row({"row": 999}, DEMO_TEXT, "", session) == {}
    assert handlers.load_check_row({}, DEMO_TEXT, "", session) == {}


@pytest.mark.parametrize(
    ("inputs", "error"),
    [
        (
            {"chat_template_text": "", "chat_template_model": ""},
            "Paste a chat template (the Jinja text of the model's chat_template), or name a model (a local folder or a hub id) "
            "to take it from.",
        ),
        (
            {"template_text": "{"},
            "The template is not valid JSON: Expecting property name enclosed in double quotes at line 1, column 2.",
        ),
        (
            {"template_text": '{"fields": {}}'},
            "fields: must be a non-empty object of field name -> field spec",
        ),
        (
            {"chat_template_model": "./no/such/folder", "chat_template_text": ""},
            "'./no/such/folder' is not a model this server can load: name a Hugging Face hub id (owner/name) or the bundled "
            "demo model (samples/demo-model); other server folders are only allowed through PLAYGROUND_LIMITS model_folders.",
        ),
        # A folder that exists but is not allowed: the same answer, so nothing is learnt about the server.
        (
            {"chat_template_model": "/root/.ssh", "chat_template_text": ""},
            "'(a server path)' is not a model this server can load: name a Hugging Face hub id (owner/name) or the bundled "
            "demo model (samples/demo-model); other server folders are only allowed through PLAYGROUND_LIMITS model_folders.",
        ),
    ],
)
def test_bad_input_says_what_is_wrong(inputs, error):
    panel, _, session = check(**inputs)
    assert (
        html.unescape(panel)
        == f'<div id="conformance-report"><div class="rt-status rt-status-error" id="conformance-error">⚠ {error}</div></div>'
    )
    assert session.check_rows == []


def test_an_oversized_chat_template_and_both_inputs(monkeypatch):
    with_limits(monkeypatch, chat_template_chars=100)
    panel, _, _ = check()
    assert (
        f"The chat template is too large: {len(DEMO_CHAT_TEMPLATE):,} characters (limit 100)."
        in panel
    )
    monkeypatch.undo()
    panel, _, _ = check(chat_template_model="samples/demo-model")
    assert (
        "The pasted chat template is used; the model box (samples/demo-model) is ignored." in panel
    )
    assert "against the pasted chat template" in panel


def workers() -> list[psutil.Process]:
    return [
        p
        for p in psutil.Process().children()
        if "playground.server.workers" in " ".join(p.cmdline())
    ]


def test_a_chat_template_that_loops_is_cut_off_and_its_worker_killed(monkeypatch):
    with_limits(monkeypatch, conformance_seconds=2.0)
    outcome = chat_template_check.check_from_page(DEMO_TEXT, LOOPS, "")
    assert outcome.cut_off and outcome.report is None
    assert outcome.error == (
        "The check was cut off after 2 s: the chat template takes too long to render (or loops). "
        "The time limit is PLAYGROUND_LIMITS' conformance_seconds."
    )
    # Only the spare started for the next check is left, waiting for its job.
    assert len(workers()) == 1
    result = api.conformance(DEMO_TEXT, LOOPS)
    assert (
        result["cut_off"] is True
        and result["situations"] == []
        and result["error"] == outcome.error
    )


def test_a_chat_template_that_allocates_without_end_is_refused_by_the_sandbox():
    outcome = chat_template_check.check_from_page(DEMO_TEXT, '{{ "x" * 10000000000 }}', "")
    assert outcome.error is None and outcome.report["counts"] == {
        "passed": 0,
        "failed": 0,
        "not_renderable": 6,
    }
    refusals = {
        row["name"]: row["detail"].removeprefix("the chat template refuses this conversation: ")
        for row in outcome.rows
    }
    # Refused before the memory is asked for, with no Python type name.
    out_of_memory = (
        "the chat template builds with '*' a value (characters, items or bits) of "
        "10,000,000,000 (at most 1,000,000 in this sandbox)"
    )
    assert refusals == {
        **{
            f"{situation}/anchor": out_of_memory
            for situation in (
                "first-turn",
                "first-turn-tools",
                "multi-turn",
                "after-tool-result",
                "after-parallel-tool-results",
            )
        },
        # A prefill renders with continue_final_message, which this template (it never writes a
        # message's content) refuses before any memory is used.
        "prefill/anchor": 'continue_final_message is set to "content" but this is not an accepted field '
        "in the chat_template",
    }


def test_the_conformance_endpoint_takes_the_page_inputs_by_name():
    result = api.conformance(
        template_text=DEMO_TEXT,
        chat_template_text=DEMO_CHAT_TEMPLATE,
        chat_template_model="",
        bos_token="",
        eos_token="<|im_end|>",
    )
    assert result["passed"] is True and result["counts"] == {
        "passed": 36,
        "failed": 0,
        "not_renderable": 4,
    }
    assert (
        result["error"] is None
        and result["cut_off"] is False
        and result["source"] == "the pasted chat template"
    )
    assert set(result["situations"][0]) == {
        "name",
        "passed",
        "renderable",
        "detail",
        "expected",
        "got",
        "prompt",
        "generation",
        "normalisations",
        "tools",
    }
    bad = api.conformance("{", DEMO_CHAT_TEMPLATE)
    assert (
        bad["error"].startswith("The template is not valid JSON")
        and bad["situations"] == []
        and bad["passed"] is False
    )


def test_a_row_name_stays_inside_its_attribute():
    from playground.authoring.chat_template_check import CheckOutcome
    from playground.panels.check_matrix import matrix_html

    name = 'plain" onmouseover="alert(1)'
    row = {
        "name": name,
        "passed": False,
        "renderable": True,
        "detail": "<b>bad</b>",
        "normalisations": [],
        "prompt": "p",
    }
    report = {
        "passed": False,
        "counts": {"passed": 0, "failed": 1, "not_renderable": 0},
        "thinking_switch": None,
        "diagnostics": [],
        "situations": [row],
    }
    shown = matrix_html(CheckOutcome(report, source="a <chat> template"), causes=["<i>cause</i>"])
    assert (
        '<tr class="rt-row-fail" data-row="0" tabindex="0" title="plain&#34; onmouseover=&#34;alert(1)">'
        in shown
    )
    assert "<b>bad" not in shown and "<i>cause" not in shown and "<chat>" not in shown
    assert html.unescape(re.search(r'id="conformance-causes">(.*?)</div>', shown)[1]) == (
        "Failing rows by root cause:<ul><li><b>1 row</b>: <i>cause</i></li></ul>"
    )
