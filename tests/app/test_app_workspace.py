"""The playground as one workspace, through its handlers (no browser): explain, nothing wiped,
fit, authoring help, big inputs, replay transport, share and export, the public API and the wiring."""

from __future__ import annotations

import html
import inspect
import json
import re
import threading
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

from engine.authoring.pattern_explain import top_level_alternatives
from engine.authoring.samples import load_samples
from playground import api, catalog, handlers
from playground.authoring.diagnostics import apply_fix, findings
from playground.handlers import generate_live as live
from playground.outputs import CHUNKING_INPUTS, produces
from playground.panels.event_log import PAGE_ROWS
from playground.panels.explain import explain
from playground.panels.field_reference import field_keys, reference_html
from playground.parse.replay import ReplayInputs
from playground.parse.session import Session
from playground.parse.workspace import WorkspaceInputs
from playground.server import queues
from playground.wiring import Page
from tests.support.templates_for_tests import EXPECTED, GENERATION, PREFIX, SMOL_TEXT
from tests.support.templates_for_tests import SMOLLM3 as SMOL

QWEN3 = "qwen3/text-then-tool-calls"


def parsed(
    template_text=SMOL_TEXT, prefix=PREFIX, generation=GENERATION, tools_text="", session=None
):
    session = session or Session()
    return handlers.parse(
        WorkspaceInputs(template_text, prefix, generation, tools_text), "", session
    ), session


def event_number(view, kind, field):
    return next(
        e.number for e in view.events if e.event["type"] == kind and e.event.get("field") == field
    )


def index_of(view, kind, field=None, text=None):
    return next(
        i
        for i, s in enumerate(view.spans)
        if s.kind == kind
        and (field is None or s.field == field)
        and (text is None or view.stream[s.start : s.end] == text)
    )


# -- click to explain ---------------------------------------------------------------


def test_explaining_a_tool_call_open_names_key_delimiter_events_and_message_key():
    _, session = parsed()
    view = session.view
    shown = explain(view, index_of(view, "open", "tool_calls"))
    opened = event_number(view, "region_open", "tool_calls")
    for expected in (
        "Open delimiter",
        "<code>fields.tool_calls.open</code>",
        "&lt;tool_call&gt;",
        f'data-event="{opened}"',
        "region_open",
        '<code class="rt-key">tool_calls[0]</code>',
        "greet_user",
    ):
        assert expected in shown, expected
    body = explain(view, index_of(view, "body", "reasoning_content"))
    assert "Region body" in body and 'data-event="2"' in body and "I should greet the user" in body


def test_explaining_the_anchor_the_cut_and_a_pattern_alternative():
    _, session = parsed()
    view = session.view
    assert "Start anchor" in explain(
        view, "anchor"
    ) and f"its last match ends at prefix offset {len(PREFIX)}" in explain(view, "anchor")
    assert "Cut-away prefix" in explain(view, "cut")
    template = json.dumps(
        {
            "start_anchor": "<s>",
            "fields": {"x": {"open_pattern": "<x>|\\[X\\]", "close": "</x>"}, "content": {}},
        }
    )
    _, session = parsed(template, "", "a [X]b</x>")
    shown = explain(session.view, index_of(session.view, "open", "x"))
    assert "alternative 2 of 2: \\[X\\]" in shown
    assert top_level_alternatives(r"a(b|c)|[|]|\|") == ["a(b|c)", "[|]", r"\|"]


def test_an_event_link_pages_the_log_to_its_row_and_explains_its_span():
    out, session = parsed(generation=GENERATION + " tail" * 3)
    opened = event_number(session.view, "region_open", "tool_calls")
    result = handlers.show_event({"event": opened}, "", session)
    assert f'class="rt-selected" data-n="{opened}"' in result["event_log"]
    assert result["results_tabs"] == {"selected": "log"}
    assert "Open delimiter" in result["explain"]


# -- nothing is wiped -----------------------------------------------------------------


def test_an_invalid_template_keeps_the_last_good_parse_marked_stale():
    session = Session()
    handlers.parse(WorkspaceInputs(SMOL_TEXT, PREFIX, GENERATION, ""), "", session)
    good = session.view
    out = handlers.parse(WorkspaceInputs(SMOL_TEXT[:-1], PREFIX, GENERATION, ""), "", session)
    assert (
        "The template is not valid JSON" in out["status"]
        and "last good parse (stale)" in out["status"]
    )
    assert (
        'id="stale-marker"' in out["region_map"]
        and out["region_map"].count('class="rt-delim rt-open') == 2
    )
    assert (
        "message_json" not in out and "event_log" not in out
    )  # the message and the log stay as they were
    assert session.view is good
    out = handlers.parse(WorkspaceInputs(SMOL_TEXT, PREFIX, GENERATION, ""), "", session)
    assert "stale-marker" not in out["region_map"] and "✔ Parsed" in out["status"]


# -- does the template fit? -----------------------------------------------------------


def test_a_template_whose_anchor_is_not_in_the_prefix_does_not_say_parsed():
    sample = catalog.samples_by_id()[QWEN3]
    out, _ = parsed(catalog.shipped_template_text("gpt-oss"), sample.prefix, sample.generation)
    assert (
        "✘ Does not fit: the start anchor '&lt;|start|&gt;assistant' is not in the prefix"
        in out["status"]
    )
    assert "✔ Parsed" not in out["status"]


def test_a_template_that_claims_nothing_says_so():
    template = json.dumps(
        {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "close": "</x>"}}}
    )
    out, _ = parsed(template, "", "plain words")
    assert (
        "✘ Does not fit: the template claims nothing: the message has no field, and 11 of 11 characters were discarded"
        in out["status"]
    )


def test_which_template_fits_ranks_the_shipped_templates_and_uses_the_best():
    sample = catalog.samples_by_id()[QWEN3]
    session = Session()
    out = handlers.fit_templates(
        sample.prefix, sample.generation, catalog.template_text_of(sample.tools), session
    )
    # A row of figures per template, and its first problem on a row of its own under it.
    assert (
        out["fits"].count("<tr") - out["fits"].count('<tr class="rt-fit-problem')
        == len(catalog.template_names()) + 1
    )
    assert session.best_template in (
        "demo-model",
        "qwen3",
        "hermes-2-pro",
        "smollm3",
        "qwq",
        "ernie-4.5",
    )
    assert out["use_best_button"] == {"value": f"Use {session.best_template}", "visible": True}
    used = handlers.use_best(
        sample.prefix, sample.generation, catalog.template_text_of(sample.tools), session
    )
    assert used["template_choice"] == session.best_template and "✔ Parsed: " in used["status"]
    assert session.view.message.keys() == {"role", "content", "tool_calls"}


# -- authoring ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "message", "fixed"),
    [
        (
            {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "clsoe": "</x>"}}},
            "unknown key 'clsoe': did you mean 'close'?",
            {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "close": "</x>"}}},
        ),
        (
            {
                "start_anchor": "<s>",
                "fields": {"x": {"open": "<x>", "close": "</x>", "transform": {"v": "{contnet}"}}},
            },
            "placeholder {contnet} names nothing: did you mean {content}?",
            {
                "start_anchor": "<s>",
                "fields": {"x": {"open": "<x>", "close": "</x>", "transform": {"v": "{content}"}}},
            },
        ),
        (
            {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "content": "jsn"}}},
            "did you mean 'json'?",
            {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "content": "json"}}},
        ),
    ],
    ids=["key", "placeholder", "content-type"],
)
def test_did_you_mean_with_a_one_click_fix(template, message, fixed):
    text = json.dumps(template)
    first = findings(text)[0]
    assert first.severity == "error" and message in first.message
    assert json.loads(apply_fix(text, 0)) == fixed
    assert not [f for f in findings(apply_fix(text, 0)) if f.severity == "error"]


def test_a_lint_fix_applies_from_the_diagnostics_and_reparses():
    session = Session()
    found = findings(SMOL_TEXT)
    index = next(i for i, f in enumerate(found) if f.code == "json-close-literal")
    out = handlers.fix_template(
        {"fix": index}, WorkspaceInputs(SMOL_TEXT, PREFIX, GENERATION, ""), "", session
    )
    assert (
        json.loads(out["template_text"])["fields"]["tool_calls"]["close_pattern"]
        == r"(?<=[}\]])\s*</tool_call>"
    )
    assert "close" not in json.loads(out["template_text"])["fields"]["tool_calls"]
    assert session.view.message == EXPECTED and 'data-fix="' in out["diagnostics"]


def test_a_close_equal_to_an_open_is_fixed_with_a_lookahead_written_like_the_text():
    text = json.dumps(
        {
            "start_anchor": "<s>",
            "fields": {
                "a": {"open": "<a>", "close": "<|b-x|>"},
                "b": {"open": "<|b-x|>"},
                "content": {},
            },
        }
    )
    index = next(i for i, f in enumerate(findings(text)) if f.code == "close-equals-open")
    fixed = json.loads(apply_fix(text, index))["fields"]["a"]
    assert fixed == {"open": "<a>", "close_pattern": r"(?=<\|b-x\|>)"}


def test_the_field_reference_has_every_schema_key_with_an_example_from_templates():
    table = reference_html()
    for key in field_keys():
        assert f'id="ref-fields.{key}"' in table, key
    assert "Regex that closes the region." in table and "(qwen3)" in table


def test_test_cases_rerun_on_every_edit_with_a_diff():
    session = Session()
    out = handlers.load_sample(QWEN3, session)
    cases = json.loads(out["test_cases_text"])
    qwen3 = catalog.samples_by_id()[QWEN3].template
    assert len(cases) == sum(
        (s.template_name == "qwen3" or s.template == qwen3) and s.expected is not None
        for s in load_samples()
    )
    assert f'data-passed="{len(cases)}" data-total="{len(cases)}"' in out["test_results"]
    broken = out["template_text"].replace('"reasoning_content"', '"thoughts"', 1)
    edited = handlers.parse(
        WorkspaceInputs(broken, out["prefix"], out["generation"], out["tools_text"]),
        out["test_cases_text"],
        session,
    )
    assert (
        'data-passed="' in edited["test_results"]
        and f'data-passed="{len(cases)}"' not in edited["test_results"]
    )
    assert '<span class="rt-del">-  &#34;reasoning_content&#34;' in edited["test_results"]
    added = handlers.add_test_case(
        WorkspaceInputs(out["template_text"], "", "hello", ""),
        out["test_cases_text"],
        Session(view=session.view),
    )
    # The author's output comes first (before the samples), marked as theirs.
    first = json.loads(added["test_cases_text"])[0]
    assert (first["generation"], first["source"], first["name"]) == (
        "hello",
        "output",
        "your output 1",
    )


def test_the_reference_side_by_side_for_a_sample():
    sample = catalog.samples_by_id()["qwen3/reasoning-and-answer"]
    assert not sample.needs  # no deliberate difference from the reference
    tools = catalog.template_text_of(sample.tools) if sample.tools else ""
    out = handlers.compare_reference(
        WorkspaceInputs(
            catalog.template_text_of(sample.template), sample.prefix, sample.generation, tools
        ),
        Session(),
    )
    assert 'data-same="true"' in out["reference"] and "<th>transformers</th>" in out["reference"]


# -- big inputs -----------------------------------------------------------------------


def test_the_event_log_is_paged_searchable_and_filtered_by_field():
    generation = "".join(
        f'<tool_call>{{"name": "f{i}", "arguments": {{}}}}</tool_call>' for i in range(60)
    )
    session = Session()
    out = handlers.parse(WorkspaceInputs(SMOL_TEXT, PREFIX, generation, ""), "", session)
    total = len(session.view.events)
    assert (
        total > PAGE_ROWS and f"events 1–{PAGE_ROWS} of {total:,} · page 1 of 2" in out["event_log"]
    )
    assert out["log_page"] == {"value": 1, "maximum": 2}
    second = handlers.set_display(False, False, "", "", 2, session)
    assert f"events {PAGE_ROWS + 1}–{total} of {total:,}" in second["event_log"]
    found = handlers.set_display(False, False, '"f42"', "", 1, session)
    assert "of 1 (filtered from" in found["event_log"] or "events 1–1 of 1" in found["event_log"]
    only = handlers.set_display(True, False, "", "tool_calls", 1, session)
    assert (
        "region_chunk" not in only["event_log"]
        and "events 1–100 of 120 (filtered from" in only["event_log"]
    )


def test_the_chat_view_and_the_message_panel_stay_bounded():
    generation = "".join(
        f'<tool_call>{{"name": "f{i}", "arguments": {{}}}}</tool_call>' for i in range(120)
    )
    out, _ = parsed(generation=generation)
    assert len(out["chat"]) == 21 and out["chat"][-1]["content"].startswith(
        "… and 100 more tool calls"
    )
    long_text = "abcdefghij" * 1_000
    out, _ = parsed(generation=long_text)
    assert (
        out["chat"][-1]["content"]
        == long_text[:4_000]
        + "\n\n… and 6,000 more characters (the whole text is in the message JSON)"
    )
    assert (
        json.loads(out["message_json"])["content"] == long_text
        and out["message_json"].language == "json"
    )
    # A big message is shown uncoloured (a coloured one costs the browser seconds to draw), and whole.
    out, _ = parsed(generation=long_text * 6)
    assert (
        out["message_json"].language is None
        and json.loads(out["message_json"])["content"] == long_text * 6
    )


# -- the replay transport -------------------------------------------------------------


def test_step_back_and_the_scrubber_move_the_replay_both_ways():
    session = Session()
    inputs = ReplayInputs(SMOL_TEXT, PREFIX, GENERATION, "", "chars", 10, 0, "")
    for _ in range(3):
        out = handlers.replay_step(inputs, session)
    chunks = -(-len(GENERATION) // 10)
    assert session.replay.position == 3 and out["scrubber"] == {"value": 3, "maximum": chunks}
    # Every other chunk is underlined (the second of three here), and the last feed outlined.
    underlined = "".join(
        re.findall(r'class="[^"]*rt-tok-odd[^"]*"[^>]*>([^<]*)<', out["region_map"])
    )
    assert html.unescape(underlined) == GENERATION[10:20] and "rt-now" in out["region_map"]
    out = handlers.replay_back(inputs, session)
    assert session.replay.position == 2 and f"chunk 2 / {chunks}" in out["status"]
    out = handlers.replay_seek(chunks, inputs, session)
    assert (
        session.view.finished
        and session.view.message == EXPECTED
        and 'data-passed="true"' in out["stream_check"]
    )
    out = handlers.replay_seek(5, inputs, session)
    assert session.replay.position == 5 and not session.view.finished


def test_stop_during_play_leaves_a_finalized_parse():
    session = Session()
    generation = GENERATION + "x" * 3000
    updates = handlers.replay_play(
        ReplayInputs(SMOL_TEXT, PREFIX, generation, "", "chars", 1, 0, ""), 200, session
    )
    next(updates)
    threading.Timer(
        0.05, live.request_stop, (session,)
    ).start()  # Stop runs beside the replay, as the page does
    last = list(updates)[-1]
    assert "■ Stopped at chunk" in last["status"] and "⏳" not in last["status"]
    assert session.view.finished and session.view.message is not None
    assert 0 < session.replay.position < len(generation)


def test_playing_a_huge_input_coalesces_updates_and_draws_only_the_end():
    session = Session()
    generation = "word " * 40_000  # 200,000 characters, one chunk each
    updates = list(
        handlers.replay_play(
            ReplayInputs(SMOL_TEXT, PREFIX, generation, "", "chars", 1, 0, ""), 0, session
        )
    )
    assert len(updates) < 200  # far fewer updates than chunks
    playing = [
        u
        for u in updates[:-1]
        if "earlier characters (the whole map shows when the replay stops)" in u["region_map"]
    ]
    assert playing and all(len(u["region_map"]) < 200_000 for u in playing)
    assert session.view.finished and session.view.message == {
        "role": "assistant",
        "content": generation.strip(),
    }


# -- share, state files, deep links, export --------------------------------------------


def test_a_state_too_big_for_a_link_is_said_and_the_state_file_restores_it(tmp_path):
    import random

    rng = random.Random(3)
    generation = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(20_000))
    session = Session(tab="paste")
    inputs = ReplayInputs(SMOL_TEXT, PREFIX, generation, "", "chars", 500, 0, "")
    handlers.replay_step(inputs, session)
    out = handlers.share(QWEN3, "", inputs, "", session)
    assert "too big for a link" in out["share_warning"] and "generation" in out["share_warning"]
    assert "state=" not in out["share_link"] and "chunk=1" in out["share_link"]
    restored_session = Session()
    restored = handlers.upload_state(out["state_file"], restored_session)
    assert restored["generation"] == generation and restored["template_text"] == SMOL_TEXT
    assert restored["modes"] == {"selected": "paste"} and restored_session.replay.position == 1
    assert (restored["chunking"], restored["chunk_size"]) == ("chars", 500)
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    assert "not a playground state file" in handlers.upload_state(str(bad), Session())["status"]


def test_a_small_state_travels_in_the_link_with_its_tab_and_position():
    session = Session(tab="template")
    inputs = ReplayInputs(SMOL_TEXT, PREFIX, GENERATION, "", "chars", 20, 0, "")
    handlers.replay_step(inputs, session)
    handlers.replay_step(inputs, session)
    out = handlers.share(QWEN3, "", inputs, "", session)
    assert out["share_warning"] == ""
    params = dict(parse_qsl(out["share_link"][1:]))
    assert (params["tab"], params["chunk"], params["chunking"]) == ("template", "2", "chars:20")
    opened_session = Session()
    opened = handlers.open_page(params, opened_session)
    assert opened["generation"] == GENERATION and opened["modes"] == {"selected": "template"}
    assert opened_session.replay.position == 2


@pytest.mark.parametrize(
    ("params", "problem"),
    [
        (
            {"template": "qwen-3"},
            "The link: no template 'qwen-3' in templates/ (did you mean 'qwen3'?); the sample's template is used.",
        ),
        (
            {"chunking": "bytes:4"},
            "The link: ?chunking=bytes:4 is not a chunking (use chars:N, random:SEED, points:5,9 or tokens).",
        ),
        ({"sample": "qwen3/nope"}, "The link: no sample 'qwen3/nope'"),
        ({"smaple": "x"}, "The link: unknown parameter ?smaple= (did you mean ?sample=?)."),
        ({"chunk": "two"}, "The link: ?chunk=two is not a chunk number (0, 1, 2, ...)."),
    ],
)
def test_bad_deep_link_parameters_say_what_was_wrong(params, problem):
    out = handlers.open_page(params, Session())
    assert problem in html.unescape(out["status"])
    assert out["sample_id"] == catalog.DEFAULT_SAMPLE  # the rest of the page still loads


def test_export_merges_into_an_uploaded_tokenizer_config_keeping_its_keys(tmp_path):
    config = {
        "model_max_length": 4096,
        "chat_template": "{{ messages }}",
        "response_template": {"old": True},
        "eos_token": "<|im_end|>",
    }
    uploaded = tmp_path / "tokenizer_config.json"
    uploaded.write_text(json.dumps(config))
    out = handlers.export_template(SMOL_TEXT, str(uploaded))
    merged = json.loads(Path(out["tokenizer_config_file"]).read_text())
    assert (
        list(merged) == list(config)
        and merged["response_template"] == SMOL
        and merged["model_max_length"] == 4096
    )
    assert "merged into your tokenizer_config.json" in out["export_note"]
    uploaded.write_text("[1, 2]")
    assert (
        "must be a JSON object" in handlers.export_template(SMOL_TEXT, str(uploaded))["export_note"]
    )


# -- the public API ---------------------------------------------------------------------


def test_the_public_api_functions_take_the_page_inputs_by_name():
    result = api.parse(template_text=SMOL_TEXT, prefix=PREFIX, generation=GENERATION, tools_text="")
    assert (
        result["message"] == EXPECTED
        and result["status"] == "Parsed: reasoning_content, tool_calls"
    )
    assert api.parse("{", PREFIX, GENERATION)["error"].startswith("The template is not valid JSON")
    replayed = api.replay(SMOL_TEXT, PREFIX, GENERATION, "", "random:3")
    assert replayed["message"] == EXPECTED and replayed["stream_check"]["passed"] is True
    assert api.replay(SMOL_TEXT, PREFIX, GENERATION, "", "bytes")["error"].startswith(
        "?chunking=bytes is not a chunking"
    )
    assert (
        api.lint('{"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "clsoe": "</x>"}}}')[0][
            "fix"
        ]
        == "rename to close"
    )
    exported = api.export(SMOL_TEXT, '{"eos_token": "</s>"}')
    assert json.loads(exported["tokenizer_config.json"]) == {
        "eos_token": "</s>",
        "response_template": SMOL,
    }
    loaded = api.load_sample(QWEN3)
    assert loaded["sample_id"] == QWEN3 and loaded["template_name"] == "qwen3"


def test_the_api_status_is_the_page_status_line_judgement_when_text_is_lost():
    # A close delimiter with no open: the page reads leniently, so the close is consumed (a
    # delimiter never lands in content) and said. /parse's status and the page's status line
    # say the same sentence.
    said = (
        "The output has a slip, read leniently: fields.reasoning_content.close: lenient reading at "
        "stream offset 6: '</think>' is the close of reasoning_content where no reasoning_content region "
        "is open: consumed"
    )
    result = api.parse(SMOL_TEXT, PREFIX, "Hello </think> world", "")
    assert result["status"] == result["error"] == said
    assert result["message"] == {"role": "assistant", "content": "Hello  world"}
    page = handlers.parse(
        WorkspaceInputs(SMOL_TEXT, PREFIX, "Hello </think> world", ""), "", Session()
    )
    lines = re.findall(r'class="([^"]*)" id="status-error">(.*?)</div>', page["status"])
    # In the warning colour: no region failed.
    assert [(kind, html.unescape(line)) for kind, line in lines] == [
        ("rt-status rt-status-warn", f"⚠ {said}")
    ]
    # No region failed: the note under it says the slip was read, not that regions were kept.
    notes = re.findall(r'class="rt-status rt-status-note">(.*?)</div>', page["status"])
    assert notes == [
        "Each slip above was read as the template means it; no region was kept as text."
    ]
    # The map marks the slip in the warning colour with its own words, not as an error.
    assert re.findall(
        r'<span class="(rt-marker rt-err[^"]*)" data-e="0"[^>]*>([^<]*)<', page["region_map"]
    ) == [("rt-marker rt-err rt-lenient", "⚠ slip read leniently here")]
    assert "error here" not in page["region_map"]
    session = Session()
    handlers.parse(WorkspaceInputs(SMOL_TEXT, PREFIX, "Hello </think> world", ""), "", session)
    explained = html.unescape(
        re.sub(r"<[^>]+>", " ", handlers.explain_span({"selected": "e0"}, session)["explain"])
    )
    assert "read leniently in fields.reasoning_content.close" in " ".join(explained.split())
    assert "failed in" not in explained
    # Nothing lost: the plain judgement, on both.
    assert api.parse(SMOL_TEXT, PREFIX, "Hi", "")["status"] == "Parsed: content"
    assert api.parse(SMOL_TEXT, PREFIX, "", "")["status"] == (
        "Parsed (nothing after the prompt): no fields"
    )


def test_the_wiring_refuses_a_handler_reading_or_writing_a_missing_component():
    import gradio as gr

    with gr.Blocks():
        page = Page()
        page.status = gr.HTML()
        with pytest.raises(
            ValueError, match="reads 'template_text', which is not a component of the page"
        ):
            page.listen(page.status.click, handlers.diagnose)
        page.template_text = gr.Code()
        page.session = gr.State()
        with pytest.raises(
            ValueError, match=r"writes \['diagnostics'\], which are not components of the page"
        ):
            page.listen(page.status.click, handlers.diagnose)


def test_a_group_of_inputs_is_read_field_by_field_and_reaches_the_handler_packed():
    import gradio as gr

    @produces("status")
    def echo(scrubber: float, inputs: ReplayInputs, session: Session) -> dict:
        return {"status": f"{scrubber:g} {inputs!r}"}

    with gr.Blocks():
        page = Page()
        for name in ("status", "scrubber", *ReplayInputs._fields, "session"):
            setattr(page, name, gr.Textbox() if name != "session" else gr.State())
        fields = list(ReplayInputs._fields)
        assert list(page.inputs_of(echo)) == ["scrubber", *fields, "session"]
        bound = page.bound(echo)
        assert list(inspect.signature(bound).parameters) == [
            "scrubber",
            *fields,
            "session",
            "gradio_request",
        ]
        values = ("{}", "p", "g", "", "chars", 2, 0, "")
        assert list(bound(3.0, *values, Session()).values()) == [
            "3 ReplayInputs(template_text='{}', prefix='p', generation='g', tools_text='',"
            " chunking='chars', chunk_size=2, chunk_seed=0, split_points='')"
        ]
        # A field's text is checked like any input's: a lone surrogate is refused by name.
        (refused,) = bound(3.0, "{}", "\ud800", *values[2:], Session()).values()
        assert "The prefix" in refused and "rt-status-error" in refused

        @produces("status")
        def clashing(prefix: str, inputs: ReplayInputs) -> dict:
            return {}

        with pytest.raises(ValueError, match="clashing: 'prefix' would be read twice"):
            page.inputs_of(clashing)
        del page.components["split_points"]
        with pytest.raises(
            ValueError,
            match="echo reads 'split_points' \\(a field of its 'inputs'\\), which is not a component",
        ):
            page.listen(page.status.change, echo)


def test_each_kind_of_work_has_its_own_queue():
    assert queues.queue_options("model") == {"concurrency_id": "model", "concurrency_limit": 4}
    assert len({queues.queue_options(kind)["concurrency_id"] for kind in queues.WORK}) == len(
        queues.WORK
    )


def test_a_replay_reads_the_workspace_then_its_chunking():
    # The replay's inputs are the workspace's four, in that order, then the chunking settings:
    # a replay and a parse of the same page read the same template, prefix, generation and tools.
    assert ReplayInputs._fields == (*WorkspaceInputs._fields, *CHUNKING_INPUTS)
    assert WorkspaceInputs._fields == ("template_text", "prefix", "generation", "tools_text")
    assert WorkspaceInputs("{}", "p", "g", "").with_template("[]") == ("[]", "p", "g", "")
