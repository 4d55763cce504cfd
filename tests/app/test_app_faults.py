"""The faults a new user met, each fixed (handler tests; the layout ones are in test_app_browser.py)."""

from __future__ import annotations

import copy
import html
import json
import os
import re
from pathlib import Path
from types import SimpleNamespace

import gradio as gr
import pytest

from engine.template_files import load_template_file
from playground import catalog, handlers
from playground.authoring.chat_template_check import CheckOutcome, root_causes
from playground.handlers import generate_live as live
from playground.panels.check_matrix import matrix_html
from playground.parse.replay import ReplayInputs, prepare_replay
from playground.parse.session import Session
from playground.parse.workspace import WorkspaceInputs
from playground.wiring import Page
from tests.support.paths import ROOT

QWEN3 = catalog.samples_by_id()["qwen3/text-then-tool-calls"]
GPT_OSS = catalog.samples_by_id()["gpt-oss/text-then-tool-calls"]
SHARED = Path(os.environ.get("RESPONSE_TEMPLATES_SHARED", ROOT.parent / "shared"))


def text_of(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def wrong_close() -> str:
    template = copy.deepcopy(load_template_file("qwen3").response_template)
    template["fields"]["tool_calls"]["close_pattern"] = r"(?<=\})\s*</toolcall>"
    return json.dumps(template)


def wrong_anchor() -> str:
    template = copy.deepcopy(load_template_file("qwen3").response_template)
    template["start_anchor"] = "<|im_start|>model\n"
    return json.dumps(template)


# -- the cause in the headline ---------------------------------------------------------


def test_the_wrong_close_is_the_headline_and_explain_points_at_its_key():
    session = Session()
    out = handlers.parse(
        WorkspaceInputs(wrong_close(), QWEN3.prefix, QWEN3.generation, ""), "", session
    )
    lines = re.findall(r'<div class="rt-status[^"]*"[^>]*>(.*?)</div>', out["status"])
    assert text_of(lines[0]).startswith(
        "⚠ Cause (fields.tool_calls.close_pattern): fields.tool_calls.close_pattern expects '&lt;/toolcall&gt;'"
    )
    assert text_of(lines[1]).startswith(
        "which gives: The output does not parse: fields.tool_calls: json: Extra data"
    )
    explained = handlers.explain_span({"selected": "e0"}, session)["explain"]
    assert '<code class="rt-key" data-key="fields.tool_calls.close_pattern">' in explained
    body = next(
        i for i, s in enumerate(session.view.spans) if s.kind == "body" and s.field == "tool_calls"
    )
    assert (
        'data-key="fields.tool_calls.close_pattern"'
        in handlers.explain_span({"selected": str(body)}, session)["explain"]
    )
    assert "≈ near miss" in out["region_map"]


def test_the_anchor_not_in_the_prefix_is_the_headline():
    session = Session()
    out = handlers.parse(
        WorkspaceInputs(wrong_anchor(), QWEN3.prefix, QWEN3.generation, ""), "", session
    )
    first = text_of(
        re.search(r'<div class="rt-status[^"]*"[^>]*>(.*?)</div>', out["status"]).group(1)
    )
    assert first.startswith(
        "⚠ Cause (start_anchor): The start anchor '&lt;|im_start|&gt;model\\n' is not in the prefix"
    )
    assert "Fix: change start_anchor to '&lt;|im_start|&gt;assistant\\n'." in first
    assert "start_anchor" in handlers.explain_span({"selected": "e0"}, session)["explain"]


# -- 1. Stop after Step; 8. a one-output handler that changes nothing -----------------


def qwen3_in_chunks_of_3(session: Session) -> ReplayInputs:
    """The default qwen3 sample loaded into `session`, as replay inputs of 3-character chunks."""
    loaded = handlers.load_sample(QWEN3.id, session)
    return ReplayInputs(
        loaded["template_text"],
        QWEN3.prefix,
        QWEN3.generation,
        loaded["tools_text"],
        "chars",
        3,
        0,
        "",
    )


def test_stop_after_steps_finalizes_the_parse_there():
    session = Session()
    inputs = qwen3_in_chunks_of_3(session)
    for _ in range(5):
        stepped = handlers.replay_step(inputs, session)
    assert json.loads(stepped["message_json"]) == {"role": "assistant"}
    stopped = handlers.replay_stop(session)
    assert json.loads(stopped["message_json"]) == {
        "role": "assistant",
        "content": "Let me check bo",
    }
    assert "■ Stopped at chunk 5 of 72" in stopped["status"] and session.view.finished


def test_a_stop_inside_a_tool_call_says_the_stop_cut_it():
    session = Session()
    inputs = qwen3_in_chunks_of_3(session)
    for _ in range(27):  # to `{"name": "get_weather", "arguments": {"city`
        handlers.replay_step(inputs, session)
    status = handlers.replay_stop(session)["status"]
    assert "The output does not parse: fields.tool_calls: json: Unterminated string" in status
    assert (
        "■ Stopped at chunk 27 of 72: the text so far is parsed as if the stream had ended there. "
        "The tool_calls region was still open there, so its unfinished text is what fails to "
        "parse above. Play or Step on to see it close."
    ) in status
    # A stop inside the implicit content names no region: nothing failed.
    session = Session()
    handlers.load_sample(QWEN3.id, session)
    for _ in range(5):
        handlers.replay_step(inputs, session)
    status = handlers.replay_stop(session)["status"]
    assert "■ Stopped at chunk 5 of 72" in status and "still open there" not in status


def test_a_handler_with_one_output_that_changes_nothing_skips_it():
    page = Page()
    page.status = gr.HTML()
    page.openai_stream = gr.Code()
    page.matches = gr.HTML()
    assert not isinstance(
        page.bound(live.request_stop)(Session()), tuple
    )  # Stop: was a one-item tuple shown as [object Object]
    event = SimpleNamespace(_data={"id": "message"})
    assert page.bound(handlers.select_results_tab)(Session(), event) == (gr.skip(), gr.skip())


# -- 2. derived views go stale ----------------------------------------------------------


def test_the_comparison_and_the_ranking_are_marked_stale_when_the_input_changes():
    session = Session()
    loaded = handlers.load_sample(QWEN3.id, session)
    template, tools = loaded["template_text"], loaded["tools_text"]
    assert (
        'id="reference-summary"'
        in handlers.compare_reference(
            WorkspaceInputs(template, QWEN3.prefix, QWEN3.generation, tools), session
        )["reference"]
    )
    handlers.fit_templates(QWEN3.prefix, QWEN3.generation, tools, session)
    same = handlers.parse(
        WorkspaceInputs(template, QWEN3.prefix, QWEN3.generation, tools), "", session
    )
    assert "reference" not in same and "fits" not in same
    changed = handlers.parse(
        WorkspaceInputs(template, QWEN3.prefix, QWEN3.generation + " more", tools), "", session
    )
    assert changed["reference"].startswith(
        '<div class="rt-stale-banner rt-derived-stale" id="reference-stale"'
    )
    assert changed["fits"].startswith(
        '<div class="rt-stale-banner rt-derived-stale" id="fits-stale"'
    )
    assert "reference" not in handlers.parse(
        WorkspaceInputs(template, QWEN3.prefix, QWEN3.generation + " more!", tools), "", session
    )  # marked once


# -- 3. which template fits, with a prefix left over ------------------------------------


def test_a_leftover_prefix_does_not_fool_the_ranking():
    session = Session()
    out = handlers.fit_templates(QWEN3.prefix, GPT_OSS.generation, "", session)
    names = re.findall(r"<td><code>([^<]+)</code></td>", out["fits"])
    claims_nothing = re.findall(
        r'class="[^"]*rt-claims-nothing[^"]*"><td>\d+</td><td><code>([^<]+)</code>', out["fits"]
    )
    assert names[0] == "gpt-oss" and session.best_template == "gpt-oss"
    assert (
        claims_nothing and names[-len(claims_nothing) :] == claims_nothing
    )  # every template that claims nothing ranks last
    assert (
        "The prefix does not look like gpt-oss&#39;s" in out["fits"]
        or "The prefix does not look like gpt-oss's" in out["fits"]
    )
    assert "<colgroup>" in out["fits"]


def test_using_a_template_that_claims_nothing_does_not_say_parsed():
    out = handlers.parse(
        WorkspaceInputs(
            catalog.shipped_template_text("qwen3"), QWEN3.prefix, GPT_OSS.generation, ""
        ),
        "",
        Session(),
    )
    assert "✔ Parsed" not in out["status"]
    assert (
        "✘ Does not fit: the template claims nothing: no region opened, so all of the generation went to content"
        in out["status"]
    )


# -- 7. token boundaries and the message label ------------------------------------------


def test_token_boundaries_are_off_after_the_run_unless_asked_and_the_label_follows():
    session = Session()
    inputs = qwen3_in_chunks_of_3(session)
    streaming = handlers.replay_step(inputs, session)
    assert (
        streaming["message_json"].label == "Message so far (streaming: the regions closed so far)"
    )
    ended = handlers.replay_seek(10**6, inputs, session)
    assert ended["message_json"].label == "Message"
    assert "rt-tok-odd" not in ended["region_map"]
    shown = handlers.set_display(False, False, "", "", 1, session, show_tokens=True)
    assert "rt-tok-odd" in shown["region_map"]


# -- 8. smaller faults --------------------------------------------------------------------


def test_the_scrubber_takes_a_chunk_before_any_replay():
    out = handlers.parse(
        WorkspaceInputs(catalog.shipped_template_text("qwen3"), QWEN3.prefix, QWEN3.generation, ""),
        "",
        Session(),
    )
    assert out["scrubber"] == {"value": 0, "maximum": len(QWEN3.generation)}


def test_start_from_shows_the_loaded_template():
    assert handlers.load_sample(QWEN3.id, Session())["start_from"] == "qwen3"


def test_an_invalid_template_shows_its_error_alone_over_the_stale_parse():
    session = Session()
    handlers.parse(WorkspaceInputs(wrong_close(), QWEN3.prefix, QWEN3.generation, ""), "", session)
    out = handlers.parse(
        WorkspaceInputs("{not json", QWEN3.prefix, QWEN3.generation, ""), "", session
    )
    assert out["status"].count("rt-status-error") == 1 and "not valid JSON" in out["status"]
    assert "json: Extra data" not in out["status"]
    banner = out["region_map"].split('id="stale-marker" role="status">')[1].split("</div>")[0]
    assert banner.startswith(
        "STALE: the last good parse, shown until the inputs parse again. The error: "
        "The template is not valid JSON"
    )


def test_a_replay_after_generate_live_steps_through_the_models_tokens():
    session = Session()
    session.generated = (QWEN3.generation, [4, 9, 26])
    inputs = ReplayInputs(
        catalog.shipped_template_text("qwen3"),
        QWEN3.prefix,
        QWEN3.generation,
        "",
        "tokens",
        1,
        0,
        "",
    )
    replay = prepare_replay(inputs, None, session.generated)
    assert replay.chunks[:4] == [
        QWEN3.generation[:4],
        QWEN3.generation[4:9],
        QWEN3.generation[9:26],
        QWEN3.generation[26:],
    ]
    assert replay.how_note == "the tokens Generate live streamed"


# -- 9. conformance failures by root cause ------------------------------------------------


@pytest.mark.skipif(
    not (SHARED / "chat_templates" / "qwen3.jinja").is_file(),
    reason="needs ../shared/chat_templates/qwen3.jinja",
)
def test_conformance_failures_are_grouped_by_their_root_cause():
    from engine import check_conformance

    template = json.loads(wrong_close())
    report = check_conformance(
        template,
        chat_template=(SHARED / "chat_templates" / "qwen3.jinja").read_text(),
        eos_token="<|im_end|>",
    )
    outcome = CheckOutcome(report=report.to_dict(), source="qwen3.jinja")
    shown = matrix_html(outcome, causes=root_causes(outcome.rows, template))
    causes = re.search(
        r'<div class="rt-status rt-status-error" id="conformance-causes">(.*?)</div>', shown
    ).group(1)
    assert html.unescape(text_of(causes)) == (
        "Failing rows by root cause:16 rows: fields.tool_calls.close_pattern expects '</toolcall>' where the text has "
        "'</tool_call>': in fields.tool_calls.close_pattern, write '</tool_call>' instead of '</toolcall>'"
    )
    assert shown.count('class="rt-cause-row"') == 1


# -- Copy as code ---------------------------------------------------------------------------


def test_copy_as_code_runs_and_gives_the_message_on_screen(capsys):
    session = Session()
    loaded = handlers.load_sample(QWEN3.id, session)
    out = handlers.copy_as_code(
        ReplayInputs(
            loaded["template_text"],
            QWEN3.prefix,
            QWEN3.generation,
            loaded["tools_text"],
            "chars",
            3,
            0,
            "",
        )
    )
    scope: dict = {}
    exec(compile(out["code_snippet"], "snippet", "exec"), scope)  # noqa: S102 - our own snippet, run as a user would
    assert scope["message"] == session.view.message and scope["streamed"] == session.view.message
    broken = ReplayInputs("{", "", "", "", "chars", 1, 0, "")
    assert (
        "error" in handlers.copy_as_code(broken)["share_warning"]
        or handlers.copy_as_code(broken)["share_warning"]
    )


def test_the_editor_marks_json_and_regex_errors_at_their_line_and_character():
    from playground.panels.diagnostics_panel import check_template

    line = '  "fields": {"x": {"open": "<x>", "close_pattern": "(a|b"}}'
    shown = check_template('{\n  "start_anchor": "<s>",\n' + line + "\n}")
    column = (
        line.index('"(a|b"') + 1 + 1 + 4
    )  # 1-based, past the quote, at position 4 of the pattern (where ")" is missing)
    assert f'data-line="3" data-column="{column}"' in shown
    assert 'data-line="1" data-column="12"' in check_template('{"fields": ')
