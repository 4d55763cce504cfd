"""The playground's handlers, called directly (no browser, no server)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from engine import TraceSpan
from engine.authoring.samples import load_samples
from engine.template_files import load_template_file
from playground import catalog, handlers
from playground.authoring import share, stream_check
from playground.handlers import generate_live as live
from playground.handlers import workspace as workspace_handlers
from playground.model import background as background_module
from playground.model import loaded as loaded_models
from playground.model.generation import DEFAULT_MODEL_PATH, ModelLoadError
from playground.panels import region_map
from playground.panels.diagnostics_panel import check_template
from playground.panels.explain import explain
from playground.panels.markup import visible_whitespace
from playground.parse import chunking
from playground.parse.parse_view import ParseView
from playground.parse.replay import ReplayInputs
from playground.parse.session import Session
from playground.parse.workspace import WorkspaceInputs
from playground.server import input_readers, limits
from tests.support.grammar_bombs import CALL_LIST_TEMPLATE, doubling_tools, many_optional_fields
from tests.support.templates_for_tests import EXPECTED, GENERATION, PREFIX, SMOL_TEXT
from tests.support.templates_for_tests import SMOLLM3 as SMOL

STATUS, MAP, LOG, INITIAL, MESSAGE, CHAT, OPENAI, FIGURES = (
    "status",
    "region_map",
    "event_log",
    "initial_events",
    "message_json",
    "chat",
    "openai_stream",
    "figures",
)


def parse(
    template_text=SMOL_TEXT, prefix=PREFIX, generation=GENERATION, tools_text="", session=None
):
    session = session or Session()
    out = handlers.parse(
        WorkspaceInputs(template_text, prefix, generation, tools_text), "", session
    )
    return {**out, "session": session}


def test_parse_pasted_gives_the_message_and_views():
    out = parse()
    assert json.loads(out[MESSAGE]) == EXPECTED
    assert out["session"].view.message == EXPECTED
    assert "✔ Parsed: reasoning_content, tool_calls" in out[STATUS]
    # The region map colours each field and marks delimiters.
    assert out[MAP].count('class="rt-delim rt-open') == 2
    assert out[MAP].count('class="rt-delim rt-close') == 2
    assert "✂ start anchor" in out[MAP] and "▶ generation" in out[MAP]
    assert "I should greet the user" in out[MAP]
    # Earlier turns are cut away and never parsed.
    assert 'class="rt-cutaway"' in out[MAP]
    assert out[INITIAL] == "[]"
    # The chat renders Markdown: a tool name is written so that it shows as itself.
    assert [m["metadata"]["title"] for m in out[CHAT]] == [
        "💭 Thought",
        "🛠️ Tool call: greet\\_user",
    ]
    assert OPENAI not in out  # drawn only while its tab is shown
    stream = handlers.select_results_tab({"id": "openai"}, out["session"])[OPENAI]
    assert '"role": "assistant"' in stream and "greet_user" in stream


def test_event_log_numbers_phases_and_filter():
    out = parse()
    events = out["session"].view.events
    assert [e.number for e in events] == list(range(1, len(events) + 1))
    assert {e.phase for e in events} <= {"prefix", "feed 1", "finalize"}
    assert 'class="rt-clean"' in out[LOG]  # reasoning chunks are clean
    assert 'class="rt-dirty"' in out[LOG]  # the JSON tool-call body is dirty
    assert '<span class="rt-ws">↵</span>' in out[LOG]  # newlines made visible
    hidden = handlers.set_display(True, False, "", "", 1, out["session"])
    assert "region_chunk" not in hidden[LOG] and "region_open" in hidden[LOG]


def test_hover_titles_name_the_field_and_explain_says_the_rest():
    out = parse()
    assert 'title="reasoning_content · open"' in out[MAP]
    view = out["session"].view
    opened = next(
        i for i, s in enumerate(view.spans) if s.kind == "open" and s.field == "reasoning_content"
    )
    shown = explain(view, opened)
    assert (
        "stream 0–7 · generation 0–7" in shown and "<dd>0 (0-based, in opening order)</dd>" in shown
    )
    assert 'data-event="1"' in shown  # its open event, linked to the log
    body = next(
        i for i, s in enumerate(view.spans) if s.kind == "body" and s.field == "reasoning_content"
    )
    assert 'data-event="2"' in explain(view, body)  # its chunk event, linked to the log


def test_prefix_region_events_are_marked_as_prefix_phase():
    out = parse(prefix=PREFIX + "<think>\n", generation="ok</think>done")
    state = out["session"].view
    assert [(e.phase, e.event["type"]) for e in state.events][:1] == [("prefix", "region_open")]
    assert json.loads(out[INITIAL])[0]["type"] == "region_open"
    assert state.message == {"role": "assistant", "reasoning_content": "ok", "content": "done"}
    assert 'class="rt-tr' not in out[MAP] and "rt-tail" in out[MAP]


@pytest.mark.parametrize("sample", load_samples()[::9], ids=lambda s: s.id)
def test_every_ninth_sample_loads_with_its_expected_result(sample):
    out = handlers.load_sample(sample.id, Session())
    assert out["sample_id"] == sample.id
    assert out["prefix"] == sample.prefix and out["generation"] == sample.generation
    assert json.loads(out["template_text"]) == sample.template
    if sample.expected is not None:
        assert json.loads(out[MESSAGE]) == sample.expected
    else:
        assert sample.expected_error in out[STATUS]


def test_load_sample_at_index_and_unknown_sample():
    first = load_samples()[0]
    assert handlers.load_sample_at(0, Session())["sample_id"] == first.id
    out = handlers.load_sample("no/such-case", Session())
    assert "No sample 'no/such-case'" in out[STATUS]


def test_bad_template_json_shows_a_clear_message():
    out = parse(template_text='{"fields": ')
    assert out["session"].view is None
    assert "The template is not valid JSON: Expecting value at line 1, column 12." in out[STATUS]
    assert out[MESSAGE] == ""


def test_invalid_template_names_the_json_path():
    bad = json.dumps({"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "content": "yaml"}}})
    out = parse(template_text=bad)
    assert "fields.x.content" in out[STATUS]
    assert "fields.x.content" in check_template(bad)


def test_bad_tools_json_shows_a_clear_message():
    out = parse(tools_text="[{")
    assert "The tools JSON is not valid JSON" in out[STATUS]
    out = parse(tools_text='{"name": "x"}')
    assert "The tools JSON must be a list of tool objects" in out[STATUS]


def test_tools_cast_arguments():
    template = dict(SMOL)
    tools = [
        {
            "type": "function",
            "function": {
                "name": "alarm",
                "parameters": {"type": "object", "properties": {"hour": {"type": "integer"}}},
            },
        }
    ]
    out = parse(
        generation='<tool_call>{"name": "alarm", "arguments": {"hour": "7"}}</tool_call>',
        tools_text=json.dumps(tools),
        template_text=json.dumps(template),
    )
    assert json.loads(out[MESSAGE])["tool_calls"][0]["function"]["arguments"] == {"hour": 7}


def test_parse_error_is_shown_at_its_position():
    out = parse(generation="<think>ok</think><tool_call>{not json</tool_call>")
    assert "The output does not parse: fields.tool_calls" in out[STATUS]
    assert "⚠ error here" in out[MAP]
    # Lenient parsing: the failed region's body is kept as content (its delimiters consumed),
    # the reasoning still parses.
    assert json.loads(out[MESSAGE]) == {
        "role": "assistant",
        "reasoning_content": "ok",
        "content": "{not json",
    }
    # The error sits at the exact failing character: the "n" after "{" (stream offset 29).
    view = out["session"].view
    assert [(e.key, e.start, e.end, e.position) for e in view.errors] == [
        ("fields.tool_calls.content", 17, 49, 29)
    ]
    assert '<span class="rt-error-at"' not in out[MAP]
    assert re.search(
        r'<span class="rt-body rt-f1 rt-error rt-error-at" data-i="\d+" title="[^"]*">n</span>',
        out[MAP],
    )


def catastrophic(pattern: str) -> str:
    return json.dumps(
        {"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "close_pattern": pattern}}}
    )


def test_catastrophic_pattern_is_stopped_by_the_regex_budget():
    # The regex module copes with (a+)+$ itself; (a|aa)+$ really backtracks and must be cut off.
    out = parse(template_text=catastrophic("(a+)+$"), prefix="", generation="<x>" + "a" * 40 + "b")
    assert json.loads(out[MESSAGE]) == {"x": "a" * 40 + "b"}
    out = parse(
        template_text=catastrophic("(a|aa)+$"), prefix="", generation="<x>" + "a" * 40 + "b"
    )
    assert (
        "A pattern took too long: fields.x.close_pattern: pattern too slow on this input"
        in out[STATUS]
    )


@pytest.mark.parametrize(
    ("caps", "kwargs", "message"),
    [
        ({"template_chars": 50}, {}, "The template is too large"),
        ({"fields": 2}, {}, "The template has 3 fields (limit 2)."),
        (
            {"pattern_chars": 8},
            {},
            "Pattern or delimiter too long at start_anchor (limit 8 characters).",
        ),
        ({"json_depth": 2}, {}, "The template is nested too deeply: 4 levels (limit 2)."),
        ({"prefix_chars": 10}, {}, "The prefix is too long"),
        ({"generation_chars": 10}, {}, "The generation is too long"),
        ({"tools_chars": 3}, {"tools_text": "[{}, {}]"}, "The tools JSON is too large"),
    ],
)
def test_size_caps_each_have_a_message(monkeypatch, caps, kwargs, message):
    monkeypatch.setattr(limits, "LIMITS", limits.Limits(**caps))
    out = parse(**kwargs)
    assert message in out[STATUS]


def test_json_depth_skips_strings():
    assert input_readers.json_depth('{"a": [1, {"b": "[[[{{{"}]}') == 3
    assert input_readers.json_depth("[]") == 1 and input_readers.json_depth('"x"') == 0


def test_make_chunks():
    assert chunking.make_chunks("abcdefg", "chars", 3) == ["abc", "def", "g"]
    assert chunking.make_chunks("abcdefg", "points", points="2, 5,99") == ["ab", "cde", "fg"]
    random_chunks = chunking.make_chunks("abcdefghijklmnop", "random", seed=3)
    assert "".join(random_chunks) == "abcdefghijklmnop"
    assert random_chunks == chunking.make_chunks("abcdefghijklmnop", "random", seed=3)
    assert "".join(chunking.make_chunks("Hi there, <b>x</b>", "tokens")) == "Hi there, <b>x</b>"
    with pytest.raises(input_readers.InputError, match="Split points are character offsets"):
        chunking.make_chunks("abc", "points", points="x")


def test_replay_steps_to_the_end_and_passes_the_stream_check():
    session = Session()
    inputs = ReplayInputs(SMOL_TEXT, PREFIX, GENERATION, "", "chars", 20, 0, "")
    out = handlers.replay_step(inputs, session)
    replay = session.replay
    assert replay.position == 1 and len(replay.chunks) == 7
    while replay.position < len(replay.chunks):
        out = handlers.replay_step(inputs, session)
        replay = session.replay
    assert session.view.message == EXPECTED
    assert 'data-passed="true"' in out["stream_check"]
    # One more step starts over.
    handlers.replay_step(inputs, session)
    assert session.replay.position == 0


def test_held_text_is_shown_pending_while_streaming():
    inputs = ReplayInputs(SMOL_TEXT, PREFIX, "ab<thi", "", "chars", 3, 0, "")
    session = Session()
    out = handlers.replay_step(inputs, session)
    assert session.view.finished is False
    assert '<span class="rt-held' in out[MAP] and ">&lt;</span>" in out[MAP]
    held = len(session.view.spans) - 1
    assert session.view.spans[held].kind == "held"
    assert "`&lt;` could still become `&lt;think&gt;` (fields.reasoning_content.open)" in explain(
        session.view, held
    )
    assert "⏳ streaming" in out[STATUS]


def test_the_stream_check_has_a_time_budget(monkeypatch):
    monkeypatch.setattr(
        limits, "LIMITS", dataclasses.replace(limits.LIMITS, stream_check_seconds=0)
    )
    chunks = list(GENERATION)
    result = stream_check.stream_check(SMOL, PREFIX, GENERATION, None, chunks)
    assert (result.passed, result.label) == (None, "stream check stopped after its 0 s budget")
    assert [f.text for f in result.findings] == [
        f"replaying the {len(chunks)} chunks again took over 0 s"
    ]


def test_play_throttles_and_ends_with_the_check():
    session = Session()
    outputs = list(
        handlers.replay_play(
            ReplayInputs(SMOL_TEXT, PREFIX, GENERATION, "", "chars", 1, 0, ""), 0, session
        )
    )
    assert len(outputs) <= 3  # a fast replay is not one update per chunk
    last = outputs[-1]
    assert session.view.message == EXPECTED and 'data-passed="true"' in last["stream_check"]


def test_template_editor_handlers(tmp_path):
    diagnostics = handlers.diagnose(SMOL_TEXT, Session())["diagnostics"]
    assert diagnostics.count('class="rt-diag rt-diag-warning"') == 2
    assert (
        "<code>fields.tool_calls.close</code>" in diagnostics
        and "<code>fields.reasoning_content.close</code>" in diagnostics
    )
    pretty = handlers.format_editor(SMOL_TEXT)["template_text"]
    assert json.loads(pretty) == SMOL and pretty.startswith('{\n  "defaults"')
    session = Session()
    text = handlers.choose_template("qwen3", WorkspaceInputs("", PREFIX, GENERATION, ""), session)[
        "template_text"
    ]
    assert text == session.reset_text and json.loads(text)["fields"]
    exported = handlers.export_template(SMOL_TEXT, None)
    assert json.loads(Path(exported["tokenizer_config_file"]).read_text(encoding="utf-8")) == {
        "response_template": SMOL
    }
    assert json.loads(Path(exported["template_file"]).read_text(encoding="utf-8")) == SMOL
    assert handlers.export_template("{", None)["template_file"] is None


def test_the_template_dropdown_says_when_the_editor_no_longer_holds_the_file():
    text = handlers.choose_template(
        "qwen3", WorkspaceInputs("", PREFIX, GENERATION, ""), Session()
    )["template_text"]
    assert catalog.template_choice_for(text, "qwen3") == "qwen3"
    same = handlers.choose_template(
        "llama-3.1", WorkspaceInputs("", PREFIX, GENERATION, ""), Session()
    )["template_text"]
    assert (
        catalog.template_choice_for(same, "llama-3.2") == "llama-3.2"
    )  # the same template in two files
    edited = text.replace('"role": "assistant"', '"role": "bot"', 1)
    assert edited != text
    assert (
        catalog.template_choice_for(edited, "qwen3")
        == catalog.EDITED_TEMPLATE
        == "(edited in the Template tab)"
    )
    assert (
        catalog.template_choice_for(edited, "qwen3", catalog.INLINE_TEMPLATE)
        == catalog.INLINE_TEMPLATE
    )
    assert (
        handlers.choose_template(
            catalog.EDITED_TEMPLATE, WorkspaceInputs("", PREFIX, GENERATION, ""), Session()
        )
        == {}
    )  # choosing it loads nothing


def test_share_link_round_trip():
    sample = load_samples()[3]
    tools = catalog.template_text_of(sample.tools) if sample.tools else ""
    texts = {
        "template": catalog.template_text_of(sample.template),
        "prefix": sample.prefix,
        "generation": sample.generation,
        "tools": tools,
    }
    query, warning = share.share_link(share.PageState(sample.id, "", texts, "chars:3", "paste"))
    assert (query, warning) == (
        f"?sample={sample.id.replace('/', '%2F')}&chunking=chars%3A3&tab=paste",
        "",
    )
    texts = {"template": SMOL_TEXT, "prefix": PREFIX, "generation": GENERATION, "tools": ""}
    edited, _ = share.share_link(share.PageState(sample.id, "", texts, "random:9", "paste"))
    from urllib.parse import parse_qsl

    params = dict(parse_qsl(edited[1:]))
    assert params["chunking"] == "random:9"
    out = handlers.open_page(params, Session())
    assert (
        out["prefix"] == PREFIX
        and out["generation"] == GENERATION
        and json.loads(out["template_text"]) == SMOL
    )
    assert json.loads(out[MESSAGE]) == EXPECTED
    assert out["chunking"] == "random" and out["chunk_seed"] == 9
    assert (
        out["template_choice"] == catalog.EDITED_TEMPLATE
    )  # the dropdown does not name the sample's template (found in review)


def test_bad_state_in_a_link_is_reported():
    out = handlers.open_page({"state": "!!!notbase64"}, Session())
    assert "The shared state in the link cannot be read" in out[STATUS]
    with pytest.raises(input_readers.InputError, match="too long"):
        share.decode_state("a" * (share.MAX_STATE_PARAM + 1))


def test_default_page_is_a_parsed_sample():
    session = Session()
    generation = catalog.samples_by_id()[catalog.DEFAULT_SAMPLE].generation
    # The layout already shows it: nothing typed meanwhile is replaced (a chunk typed in the
    # scrubber included); the scrubber gets its range (one chunk a character), so a chunk typed
    # before any replay is not refused.
    assert handlers.open_page({}, session) == {"scrubber": {"maximum": len(generation)}}
    # Gradio's own parameters (?__theme=dark) make no link: the same plain visit.
    assert handlers.open_page({"__theme": "dark"}, Session()) == {
        "scrubber": {"maximum": len(generation)}
    }
    assert (
        session.sample_id == catalog.DEFAULT_SAMPLE
        and session.view.message == catalog.samples_by_id()[catalog.DEFAULT_SAMPLE].expected
    )
    out = handlers.open_page({"sample": catalog.DEFAULT_SAMPLE}, Session())
    assert out["sample_id"] == catalog.DEFAULT_SAMPLE
    assert "✔ Parsed" in out[STATUS]


def test_a_plain_visits_page_load_landing_late_leaves_what_the_visitor_did():
    # The page-load handler may answer after the visitor's first parse (a loaded server): the
    # session keeps that parse, and the app's sessions start knowing the first sample anyway.
    session = Session()
    handlers.load_sample(catalog.DEFAULT_SAMPLE, session)
    parsed = parse(session=session)
    assert "✔ Parsed" in parsed[STATUS]
    generation = catalog.samples_by_id()[catalog.DEFAULT_SAMPLE].generation
    assert handlers.open_page({}, session) == {"scrubber": {"maximum": len(generation)}}
    assert session.view.message == EXPECTED
    assert handlers.explain_span({"selected": "0"}, session)["explain"] != ""


def test_unexpected_errors_become_a_message(monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("kaput")

    monkeypatch.setattr(workspace_handlers, "traced_view", boom)
    out = parse()
    assert "Something went wrong on the server (its log has the details)" in out[STATUS]
    assert (
        "Traceback" not in out[STATUS]
        and "RuntimeError" not in out[STATUS]
        and "kaput" not in out[STATUS]
    )


def test_generate_live_reports_bad_input_without_a_model():
    out = list(
        live.generate(
            "samples/demo-model", "", "", "", "", False, 10, 0.7, 0.9, 0, True, SMOL_TEXT, Session()
        )
    )
    assert "Write a user message" in out[-1][STATUS]
    out = list(
        live.generate(
            "./no/such/folder", "", "Hi", "", "", False, 10, 0.7, 0.9, 0, True, SMOL_TEXT, Session()
        )
    )
    assert "&#x27;./no/such/folder&#x27; is not a model this server can load" in out[-1][
        STATUS
    ] or ("'./no/such/folder' is not a model this server can load" in out[-1][STATUS])
    # A folder that exists but is not allowed gets the same answer as a missing one.
    forbidden = list(
        live.generate(
            "/root/.ssh", "", "Hi", "", "", False, 10, 0.7, 0.9, 0, True, SMOL_TEXT, Session()
        )
    )
    missing = list(
        live.generate(
            "/root/.no-such-folder",
            "",
            "Hi",
            "",
            "",
            False,
            10,
            0.7,
            0.9,
            0,
            True,
            SMOL_TEXT,
            Session(),
        )
    )
    assert forbidden[-1][STATUS] == missing[-1][STATUS] and "(a server path)" in missing[-1][STATUS]


def generate_hi(template_text: str, session: Session, use_model_template: bool = True) -> list:
    return list(
        live.generate(
            "samples/demo-model",
            "",
            "Hi",
            "",
            "",
            False,
            3,
            0.7,
            0.9,
            0,
            use_model_template,
            template_text,
            session,
        )
    )


def test_generate_live_with_the_model_template_names_it_in_the_dropdown():
    # The demo model's template is the text of templates/demo-model.json; the editor holds a
    # templates/ file as loaded (no work of the author's): the model's template replaces it.
    for origin in ("qwen3", "hermes-2-pro"):
        session = Session(template_origin=origin)
        shipped = catalog.shipped_template_text(origin)
        out = generate_hi(shipped, session)
        template_text, choice = out[-1]["template_text"], out[-1]["template_choice"]
        assert json.loads(template_text) == load_template_file("demo-model").response_template
        assert choice == "demo-model"
        # What it replaced can be put back.
        assert out[-1]["restore_button"] == {
            "value": "↶ Restore the template before Generate live",
            "visible": True,
        }
        assert session.replaced == [("Generate live", shipped)]
    session = Session(template_origin="qwen3")
    kept = generate_hi(catalog.shipped_template_text("qwen3"), session, use_model_template=False)
    assert (
        "template_text" not in kept[-1] and "template_choice" not in kept[-1]
    )  # its own template: editor and dropdown kept


def test_generate_live_keeps_an_edited_template_and_offers_the_models():
    session = Session(template_origin="qwen3")
    out = generate_hi(SMOL_TEXT, session)  # the author's own template, not a templates/ file
    assert "template_text" not in out[-1] and "restore_button" not in out[-1]
    assert session.view.template == json.loads(SMOL_TEXT)  # the run was parsed with it
    assert out[-1]["model_note"].endswith(
        " — your edited template was kept (the model's own was not used: “Use the model's "
        "template” puts it in the editor)"
    )
    assert out[-1]["use_model_button"] == {"visible": True}
    # The scrubber is set to this run's pieces (the model's tokens), not a previous replay's.
    pieces = len(session.generated[1]) + 1
    assert out[-1]["scrubber"] == {"value": pieces, "maximum": pieces} and 1 <= pieces <= 3
    # The author chooses the model's: it goes into the editor, the edit is kept for Restore.
    chosen = live.use_model_template_now(
        "samples/demo-model", WorkspaceInputs(SMOL_TEXT, PREFIX, GENERATION, ""), "", session
    )
    assert json.loads(chosen["template_text"]) == load_template_file("demo-model").response_template
    assert chosen["use_model_button"] == {"visible": False}
    assert chosen["model_note"] == (
        "Model: samples/demo-model — its tokenizer_config.json ships a response_template, used "
        "as it is"
    )
    assert session.replaced == [("Use the model's template", SMOL_TEXT)]
    restored = handlers.restore_template(
        WorkspaceInputs(chosen["template_text"], PREFIX, GENERATION, ""), "", session
    )
    assert restored["template_text"] == SMOL_TEXT and restored["restore_button"] == {
        "visible": False
    }
    assert session.view.template == json.loads(SMOL_TEXT)


def test_generate_live_says_edited_only_when_the_author_changed_the_editors_text():
    # The page itself put this text in the editor (as Infer does): kept, but not called edited.
    session = Session(reset_text=SMOL_TEXT)
    out = generate_hi(SMOL_TEXT, session)
    assert out[-1]["model_note"].endswith(
        " — the editor's template was kept (the model's own was not used: “Use the model's "
        "template” puts it in the editor)"
    )


def test_views_render_whitespace_and_escape_html():
    assert (
        visible_whitespace("a b\n<")
        == 'a<span class="rt-ws">·</span>b<span class="rt-ws">↵</span>&lt;'
    )
    html = region_map.region_map(
        ParseView(stream="<b>", spans=[TraceSpan(0, 3, "generation", 0, 3, "discarded")])
    )
    assert "&lt;b&gt;" in html and "<b>" not in html.split('id="region-map-body"')[1]


def test_a_background_load_reports_its_progress_and_generate_uses_it():
    key = str(DEFAULT_MODEL_PATH)
    loaded_models.forget_model(key)
    loaded_models.start_loading(
        "samples/demo-model"
    )  # the textbox's relative path names the same model
    pending = loaded_models.pending_load(key)
    text, ended = loaded_models.load_status("")
    assert ended is False and text.startswith(
        "⏳ Loading samples/demo-model: "
    )  # never the server's absolute path
    with loaded_models.waiting_for(key):  # a load nobody waits for is freed when it ends
        pending.result(timeout=120)
    text, ended = loaded_models.load_status("samples/demo-model")
    assert ended is True
    assert re.fullmatch(r"✔ Model ready: samples/demo-model \(loaded in \d+\.\d s\)", text), text
    out = list(
        live.generate(
            "samples/demo-model",
            "",
            "Hi",
            "",
            "",
            False,
            3,
            0.7,
            0.9,
            0,
            True,
            SMOL_TEXT,
            Session(),
        )
    )
    assert (
        "prefix" in out[-1] and loaded_models.pending_load(key) is None
    )  # the background load's model, collected
    assert loaded_models.get_model("") is loaded_models.get_model(key)


def test_a_failed_background_load_is_shown_and_tried_again(tmp_path, monkeypatch):
    monkeypatch.setattr(
        limits, "LIMITS", dataclasses.replace(limits.LIMITS, model_folders=(str(tmp_path),))
    )
    (tmp_path / "empty").mkdir()
    empty = str(tmp_path / "empty")
    loaded_models.start_loading(empty)
    with pytest.raises(ModelLoadError, match="is not a model folder"):
        loaded_models.get_model(empty)
    assert loaded_models.pending_load(empty) is None  # forgotten: the next Generate loads again
    assert loaded_models.load_status(empty) == ("", True)
    loaded_models.start_loading(empty)
    with pytest.raises(ModelLoadError):
        loaded_models.pending_load(empty).result(timeout=60)
    text, ended = loaded_models.load_status(empty)
    assert (
        ended is True
        and text.startswith(f"✘ Loading {tmp_path.name}/empty failed: ")
        and "is not a model folder" in text
    )
    assert str(tmp_path) not in text


def test_stop_while_waiting_for_a_load_ends_the_wait():
    key = str(DEFAULT_MODEL_PATH)
    earlier = loaded_models.pending_load(key)
    if (
        earlier is not None
    ):  # a load an earlier test started: let it end, or this test would wait on it too
        try:
            earlier.result(timeout=120)
        except Exception:
            pass
    loaded_models.forget_model(key)
    session = Session()
    # Another load holds the process's one load slot, so this one is still waiting when Stop comes
    # (else a fast load could end before the Stop is seen).
    assert background_module.load_slots.acquire(timeout=120)
    try:
        outputs = live.generate(
            "samples/demo-model", "", "Hi", "", "", False, 3, 0.7, 0.9, 0, True, SMOL_TEXT, session
        )
        first = next(outputs)  # Generate waits for the load, showing where it is
        assert "⏳ Loading samples/demo-model: " in first[STATUS]
        pending = loaded_models.pending_load(key)
        live.request_stop(session)
        rest = list(outputs)
        assert (
            "Stopped waiting for the model; its load is abandoned unless someone else waits for it."
            in rest[-1][STATUS]
        )
        assert session.stop_requested is False
        with pytest.raises(
            ModelLoadError, match="abandoned before it started"
        ):  # nobody waits: it never starts
            pending.result(timeout=120)
    finally:
        background_module.load_slots.release()
    assert not loaded_models.is_loaded(key) and loaded_models.pending_load(key) is None
    assert loaded_models.get_model(key).name == key  # the next Generate loads it again


def test_generate_live_constrained_to_the_template_honours_the_tool_choice():
    pytest.importorskip("llguidance")
    tools = json.dumps(
        [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "parameters": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "required": ["city"],
                    },
                },
            }
        ]
    )

    def run(tool_choice: str) -> dict:
        session = Session()
        args = (
            "samples/demo-model",
            "",
            "Weather in Oslo?",
            "",
            tools,
            False,
            80,
            0.7,
            0.9,
            1,
            True,
            SMOL_TEXT,
            session,
        )
        return list(live.generate(*args, constrain=True, tool_choice=tool_choice))[-1]

    required = run("required, no parallel")
    assert "constrained to the template" in required["model_note"]
    assert required["generation"].count("<tool_call>") == 1
    none = run("none")
    assert "<tool_call>" not in none["generation"]
    unknown = run("get_time")
    assert "names no offered tool (offered: get_weather)" in unknown[STATUS]


def test_constrain_with_a_bounded_tool_gives_only_calls_valid_against_its_whole_schema():
    pytest.importorskip("llguidance")
    import jsonschema

    parameters = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 2, "maxLength": 6},
            "days": {"type": "integer", "minimum": 2, "maximum": 3},
            "level": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
            "tags": {
                "type": "array",
                "items": {"type": "string", "maxLength": 3},
                "minItems": 1,
                "maxItems": 2,
            },
        },
        "required": ["city", "days", "level", "tags"],
    }
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": parameters}}]
    calls = []
    for seed in range(2):
        args = (
            "samples/demo-model",
            "",
            "Weather in Oslo for the next two days?",
            "",
            json.dumps(tools),
            False,
            80,
            0.7,
            0.9,
            seed,
            True,
            SMOL_TEXT,
            Session(),
        )
        update = list(live.generate(*args, constrain=True, tool_choice="required"))[-1]
        assert "constrained to the template" in update["model_note"]
        written = re.findall(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", update["generation"], re.S)
        calls += [json.loads(call)["arguments"] for call in written]
    assert calls
    for arguments in calls:
        jsonschema.validate(arguments, parameters)


def _generate_constrained(template: dict, tools: list) -> dict:
    """Generate live's last update: the demo model, one token, constrained to `template`."""
    args = (
        "samples/demo-model",
        "",
        "Hi",
        "",
        json.dumps(tools),
        False,
        1,
        0.7,
        0.9,
        1,
        False,
        json.dumps(template),
        Session(),
    )
    return list(live.generate(*args, constrain=True, tool_choice="auto"))[-1]


def test_a_grammar_bomb_through_constrain_is_refused_within_its_budget(monkeypatch):
    pytest.importorskip("llguidance")
    playground_limits = limits.LIMITS
    # Tools whose schema doubles at every level: 2**30 values from 4.7 KB of JSON.
    monkeypatch.setattr(limits, "LIMITS", dataclasses.replace(limits.LIMITS, grammar_nodes=20_000))
    out = _generate_constrained(CALL_LIST_TEMPLATE, doubling_tools(30))
    assert (
        "not constrained: the template's grammar is too large (more than 20,000 grammar nodes; "
        "limit PLAYGROUND_LIMITS grammar_nodes); the model generates without it"
    ) in out["model_note"]
    assert out[STATUS].count("rt-status-error") == 0  # the generation went on, unconstrained
    monkeypatch.setattr(
        limits,
        "LIMITS",
        dataclasses.replace(limits.LIMITS, grammar_nodes=10**9, grammar_seconds=0.5),
    )
    out = _generate_constrained(CALL_LIST_TEMPLATE, doubling_tools(30))
    assert (
        "not constrained: the template's grammar is too large (building it took more than 0.5 s; "
        "limit PLAYGROUND_LIMITS grammar_seconds); the model generates without it"
    ) in out["model_note"]
    # The Lark text's bound alone (the 0.5 s above would fire first on a loaded machine).
    monkeypatch.setattr(
        limits, "LIMITS", dataclasses.replace(playground_limits, grammar_chars=5_000)
    )
    out = _generate_constrained(CALL_LIST_TEMPLATE, doubling_tools(8))
    assert (
        "not constrained: the template's grammar is too large (its Lark is longer than 5,000 "
        "characters; limit PLAYGROUND_LIMITS grammar_chars); the model generates without it"
    ) in out["model_note"]
    # 29 optional fields of 32 tags each: each once doubled what follows it; now written once,
    # within the playground's own limits.
    monkeypatch.setattr(limits, "LIMITS", playground_limits)
    out = _generate_constrained(many_optional_fields(29), [])
    assert "constrained to the template's grammar (tool choice auto)" in out["model_note"]


def test_a_chat_template_that_loops_is_said_on_the_status_line_not_as_a_server_fault(
    tmp_path, monkeypatch
):
    """The prompt is rendered in a worker process with a time budget; past it, Generate says
    which model's chat template was stopped and why (the panels keep the last parse)."""
    import shutil

    folder = tmp_path / "looping"
    shutil.copytree(DEFAULT_MODEL_PATH, folder)
    (folder / "chat_template.jinja").write_text(
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        encoding="utf-8",
    )
    monkeypatch.setattr(
        limits,
        "LIMITS",
        dataclasses.replace(
            limits.LIMITS, model_folders=(str(tmp_path),), chat_template_seconds=1.0
        ),
    )
    args = (str(folder), "", "Hi", "", "", False, 1, 0.7, 0.9, 1, True, SMOL_TEXT, Session())
    out = list(live.generate(*args))
    assert list(out[-1]) == [STATUS]
    said = re.sub(r"<[^>]+>", "", out[-1][STATUS])
    assert said == (
        f"⚠ the chat template of '{tmp_path.name}/looping' was stopped after 1 s (the time budget "
        "PLAYGROUND_LIMITS chat_template_seconds): it takes too long to render this "
        "conversation, or loops"
    ), said


def test_export_for_vllm_renames_the_reasoning_field_and_says_what_it_still_refuses():
    qwen3 = json.dumps(load_template_file("qwen3").response_template)
    out = handlers.export_template(qwen3, None, "vllm")
    exported = json.loads(Path(out["template_file"]).read_text(encoding="utf-8"))
    assert list(exported["fields"]) == ["thinking", "tool_calls", "content"]
    assert "changed: fields.reasoning_content renamed to fields.thinking" in out["export_note"]
    gpt = json.dumps(load_template_file("gpt-oss").response_template)
    note = handlers.export_template(gpt, None, "sglang")["export_note"]
    assert "error: fields.thinking.join: sglang refuses this template" in note
    assert api_export_refused(gpt) == [
        "fields.thinking.join: vllm refuses this template: 'thinking' must have no join "
        "(it cannot be streamed by the serving adapter) "
        "(vLLM, validate_response_template_for_serving in vllm/parser/response_template.py)"
    ]


def api_export_refused(template_text: str) -> list[str]:
    from playground import api

    return api.export(template_text, "", "vllm")["refused"]


def test_a_generate_that_cannot_start_keeps_the_parse_on_screen():
    shown = parse()
    session = shown["session"]
    view = session.view
    out = list(
        live.generate(
            "./no/such/folder", "", "Hi", "", "", False, 10, 0.7, 0.9, 0, True, SMOL_TEXT, session
        )
    )
    # Only the status line changes: the map, log and message keep the parse the author had.
    assert len(out) == 1 and set(out[0]) == {STATUS}
    assert "is not a model this server can load" in out[0][STATUS]
    assert session.view is view and view.message == EXPECTED


def test_a_generation_stopped_inside_a_tool_call_says_the_stop_cut_it():
    tools = catalog.template_text_of(catalog.samples_by_id()[catalog.DEFAULT_SAMPLE].tools)
    session = Session()
    outputs = live.generate(
        "samples/demo-model", "", "What's the weather in Paris?", "", tools, False, 80, 0.7,
        0.9, 0, True, "", session, teaching_pace=True,
    )  # fmt: skip
    last = None
    for last in outputs:  # one update per token: Stop once the call's arguments have begun
        stream = session.view.stream if session.view is not None else ""
        if '"arguments"' in stream and "</tool_call>" not in stream:
            live.request_stop(session)
    assert re.search(
        r"■ Stopped after \d+ tokens; the text so far is parsed as if generation had ended\. "
        r"The tool_calls region was still open there, so its unfinished text is what fails to "
        r"parse above\.",
        last[STATUS],
    ), last[STATUS]
    assert "The output does not parse: fields.tool_calls: json:" in last[STATUS]
    # The plain parser raised at the end too: its time is shown up to its error.
    assert re.search(r"\d+\.\d{3} ms \(up to its error\)", last[FIGURES]), last[FIGURES]
