"""The playground's handlers, called directly (no browser, no server)."""

from __future__ import annotations

import dataclasses
import json
import time

import pytest

import app
import playground_view as view
from engine.samples import load_samples
from engine.template_files import load_template_file
from .templates_for_tests import SMOLLM3 as SMOL

SMOL_TEXT = json.dumps(SMOL)
PREFIX = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
GENERATION = '<think>\nI should greet the user\n</think>\n\n<tool_call>{"name": "greet_user", "arguments": {"greeting": "Hi!"}}</tool_call>'
EXPECTED = {
    "role": "assistant",
    "reasoning_content": "I should greet the user",
    "tool_calls": [{"type": "function", "function": {"name": "greet_user", "arguments": {"greeting": "Hi!"}}}],
}
# Outputs of parse_pasted: (state, status, map, log, initial, message json, chat, openai, figures)
STATE, STATUS, MAP, LOG, INITIAL, MESSAGE, CHAT, OPENAI, FIGURES = range(9)


def parse(template_text=SMOL_TEXT, prefix=PREFIX, generation=GENERATION, tools_text="", hide_chunks=False):
    return app.parse_pasted(template_text, prefix, generation, tools_text, hide_chunks)


def test_parse_pasted_gives_the_message_and_views():
    out = parse()
    assert json.loads(out[MESSAGE]) == EXPECTED
    assert out[STATE].message == EXPECTED
    assert "✔ Parsed: reasoning_content, tool_calls" in out[STATUS]
    # The region map colours each field and marks delimiters.
    assert out[MAP].count('class="rt-delim rt-open"') == 2
    assert out[MAP].count('class="rt-delim rt-close"') == 2
    assert "✂ start anchor" in out[MAP] and "▶ generation" in out[MAP]
    assert "I should greet the user" in out[MAP]
    # Earlier turns are cut away and never parsed.
    assert 'class="rt-cutaway"' in out[MAP]
    assert out[INITIAL] == "[]"
    assert [m["metadata"]["title"] for m in out[CHAT]] == ["💭 Thought", "🛠️ Tool call: greet_user"]
    assert '"role": "assistant"' in out[OPENAI] and "greet_user" in out[OPENAI]


def test_event_log_numbers_phases_and_filter():
    out = parse()
    events = out[STATE].events
    assert [e.number for e in events] == list(range(1, len(events) + 1))
    assert {e.phase for e in events} <= {"prefix", "feed 1", "finalize"}
    assert 'class="rt-clean"' in out[LOG]  # reasoning chunks are clean
    assert 'class="rt-dirty"' in out[LOG]  # the JSON tool-call body is dirty
    assert '<span class="rt-ws">↵</span>' in out[LOG]  # newlines made visible
    hidden = app.rerender(out[STATE], True)
    assert "region_chunk" not in hidden[2] and "region_open" in hidden[2]


def test_hover_titles_name_field_offsets_and_events():
    out = parse()
    assert 'title="reasoning_content · open · offsets 0–7 · generation · region 0 · events open #1, close #3"' in out[MAP]
    assert "chunk #2" in out[MAP]


def test_prefix_region_events_are_marked_as_prefix_phase():
    out = parse(prefix=PREFIX + "<think>\n", generation="ok</think>done")
    state = out[STATE]
    assert [(e.phase, e.event["type"]) for e in state.events][:1] == [("prefix", "region_open")]
    assert json.loads(out[INITIAL])[0]["type"] == "region_open"
    assert state.message == {"role": "assistant", "reasoning_content": "ok", "content": "done"}
    assert 'class="rt-tr' not in out[MAP] and "rt-tail" in out[MAP]


@pytest.mark.parametrize("sample", load_samples()[::9], ids=lambda s: s.id)
def test_every_ninth_sample_loads_with_its_expected_result(sample):
    out = app.load_sample(sample.id)
    assert out[0] == sample.id
    assert out[2] == sample.prefix and out[3] == sample.generation
    assert json.loads(out[1]) == sample.template
    if sample.expected is not None:
        assert json.loads(out[8 + 4]) == sample.expected
    else:
        assert sample.expected_error in out[8]


def test_load_sample_at_index_and_unknown_sample():
    first = load_samples()[0]
    assert app.load_sample_at(0)[0] == first.id
    out = app.load_sample("no/such-case")
    assert "No sample 'no/such-case'" in out[8]


def test_bad_template_json_shows_a_clear_message():
    out = parse(template_text='{"fields": ')
    assert out[STATE] is None
    assert "The template is not valid JSON: Expecting value at line 1, column 12." in out[STATUS]
    assert out[MESSAGE] == ""


def test_invalid_template_names_the_json_path():
    bad = json.dumps({"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "content": "yaml"}}})
    out = parse(template_text=bad)
    assert "fields.x.content" in out[STATUS]
    assert "fields.x.content" in app.check_template(bad)


def test_bad_tools_json_shows_a_clear_message():
    out = parse(tools_text="[{")
    assert "The tools JSON is not valid JSON" in out[STATUS]
    out = parse(tools_text='{"name": "x"}')
    assert "The tools JSON must be a list of tool objects" in out[STATUS]


def test_tools_cast_arguments():
    template = dict(SMOL)
    tools = [{"type": "function", "function": {"name": "alarm", "parameters": {"type": "object", "properties": {"hour": {"type": "integer"}}}}}]
    out = parse(generation='<tool_call>{"name": "alarm", "arguments": {"hour": "7"}}</tool_call>', tools_text=json.dumps(tools), template_text=json.dumps(template))
    assert json.loads(out[MESSAGE])["tool_calls"][0]["function"]["arguments"] == {"hour": 7}


def test_parse_error_is_shown_at_its_position():
    out = parse(generation="<tool_call>{not json</tool_call>")
    assert "ResponseParseError: fields.tool_calls" in out[STATUS]
    assert "⚠ error here" in out[MAP]
    assert out[MESSAGE] == ""


def catastrophic(pattern: str) -> str:
    return json.dumps({"start_anchor": "<s>", "fields": {"x": {"open": "<x>", "close_pattern": pattern}}})


def test_catastrophic_pattern_answers_within_the_budget():
    # The regex module copes with (a+)+$ itself; (a|aa)+$ really backtracks.
    started = time.perf_counter()
    out = parse(template_text=catastrophic("(a+)+$"), prefix="", generation="<x>" + "a" * 40 + "b")
    assert time.perf_counter() - started < app.REGEX_TIMEOUT + 1.5
    assert json.loads(out[MESSAGE]) == {"x": "a" * 40 + "b"}
    started = time.perf_counter()
    out = parse(template_text=catastrophic("(a|aa)+$"), prefix="", generation="<x>" + "a" * 40 + "b")
    elapsed = time.perf_counter() - started
    assert elapsed < 2 * app.REGEX_TIMEOUT + 1.5, elapsed
    assert "PatternTimeoutError: fields.x.close_pattern: pattern too slow on this input" in out[STATUS]


@pytest.mark.parametrize(
    ("limits", "kwargs", "message"),
    [
        ({"template_chars": 50}, {}, "The template is too large"),
        ({"fields": 2}, {}, "The template has 3 fields (limit 2)."),
        ({"pattern_chars": 8}, {}, "Pattern or delimiter too long at start_anchor (limit 8 characters)."),
        ({"json_depth": 2}, {}, "The template is nested too deeply: 4 levels (limit 2)."),
        ({"prefix_chars": 10}, {}, "The prefix is too long"),
        ({"generation_chars": 10}, {}, "The generation is too long"),
        ({"tools_chars": 3}, {"tools_text": "[{}, {}]"}, "The tools JSON is too large"),
    ],
)
def test_size_caps_each_have_a_message(monkeypatch, limits, kwargs, message):
    monkeypatch.setattr(app, "LIMITS", app.Limits(**limits))
    for function in (app.read_template, app.read_tools, app.check_text_sizes):
        monkeypatch.setattr(function, "__defaults__", (app.LIMITS,))
    out = parse(**kwargs)
    assert message in out[STATUS]


def test_json_depth_skips_strings():
    assert app.json_depth('{"a": [1, {"b": "[[[{{{"}]}') == 3
    assert app.json_depth("[]") == 1 and app.json_depth('"x"') == 0


def test_make_chunks():
    assert app.make_chunks("abcdefg", "chars", 3) == ["abc", "def", "g"]
    assert app.make_chunks("abcdefg", "points", points="2, 5,99") == ["ab", "cde", "fg"]
    random_chunks = app.make_chunks("abcdefghijklmnop", "random", seed=3)
    assert "".join(random_chunks) == "abcdefghijklmnop"
    assert random_chunks == app.make_chunks("abcdefghijklmnop", "random", seed=3)
    assert "".join(app.make_chunks("Hi there, <b>x</b>", "tokens")) == "Hi there, <b>x</b>"
    with pytest.raises(app.InputError, match="Split points are character offsets"):
        app.make_chunks("abc", "points", points="x")


def test_replay_steps_to_the_end_and_passes_the_stream_check():
    replay = None
    args = (SMOL_TEXT, PREFIX, GENERATION, "", "chars", 20, 0, "")
    out = app.replay_step(*args, replay, False)
    replay = out[0]
    assert replay.position == 1 and len(replay.chunks) == 7
    while replay.position < len(replay.chunks):
        out = app.replay_step(*args, replay, False)
        replay = out[0]
    assert out[1].message == EXPECTED
    assert 'data-passed="true"' in out[-2]
    # One more step starts over.
    assert app.replay_step(*args, replay, False)[0].position == 0


def test_held_text_is_shown_pending_while_streaming():
    args = (SMOL_TEXT, PREFIX, "ab<thi", "", "chars", 3, 0, "")
    out = app.replay_step(*args, None, False)
    assert out[1].finished is False
    assert '<span class="rt-held"' in out[3] and ">&lt;</span>" in out[3]
    assert "⏳ streaming" in out[2]


def test_the_stream_check_has_a_time_budget(monkeypatch):
    monkeypatch.setattr(app, "LIMITS", dataclasses.replace(app.LIMITS, stream_check_seconds=0))
    chunks = list(GENERATION)
    passed, label, details = app.stream_check(SMOL, PREFIX, GENERATION, None, chunks)
    assert (passed, label) == (None, "stream check stopped after its 0 s budget")
    assert details == f"- replaying the {len(chunks)} chunks again took over 0 s"


def test_play_throttles_and_ends_with_the_check():
    outputs = list(app.replay_play(SMOL_TEXT, PREFIX, GENERATION, "", "chars", 1, 0, "", 0, False))
    assert len(outputs) <= 3  # a fast replay is not one update per chunk
    last = outputs[-1]
    assert last[1].message == EXPECTED and 'data-passed="true"' in last[-2]


def test_template_editor_handlers(tmp_path):
    diagnostics = app.check_template(SMOL_TEXT)
    assert diagnostics.count('class="rt-diag rt-diag-warning"') == 2
    assert "<code>fields.tool_calls.close</code>" in diagnostics and "<code>fields.reasoning_content.close</code>" in diagnostics
    pretty, _ = app.format_template(SMOL_TEXT)
    assert json.loads(pretty) == SMOL and pretty.startswith('{\n  "defaults"')
    text, reset = app.template_from_file("qwen3")
    assert text == reset and json.loads(text)["fields"]
    template_path, config_path, _ = app.export_template(SMOL_TEXT)
    assert json.loads(open(config_path, encoding="utf-8").read()) == {"response_template": SMOL}
    assert json.loads(open(template_path, encoding="utf-8").read()) == SMOL
    assert app.export_template("{")[0] is None


def test_the_template_dropdown_says_when_the_editor_no_longer_holds_the_file():
    text, _ = app.template_from_file("qwen3")
    assert app.template_choice_for(text, "qwen3") == "qwen3"
    same, _ = app.template_from_file("llama-3.1")
    assert app.template_choice_for(same, "llama-3.2") == "llama-3.2"  # the same template in two files
    edited = text.replace('"role": "assistant"', '"role": "bot"', 1)
    assert edited != text
    assert app.template_choice_for(edited, "qwen3") == app.EDITED_TEMPLATE == "(edited in the Template tab)"
    assert app.template_choice_for(edited, "qwen3", app.INLINE_TEMPLATE) == app.INLINE_TEMPLATE
    assert app.template_from_file(app.EDITED_TEMPLATE) == ({"__type__": "update"},) * 2  # choosing it loads nothing


def test_share_link_round_trip():
    sample = load_samples()[3]
    query = app.share_query(sample.id, None, "chars", 3, 0, "", app.template_text_of(sample.template), sample.prefix, sample.generation, "")
    assert query == f"?sample={sample.id.replace('/', '%2F')}&chunking=chars%3A3"
    edited = app.share_query(sample.id, None, "random", 1, 9, "", SMOL_TEXT, PREFIX, GENERATION, "")
    from urllib.parse import parse_qsl

    params = dict(parse_qsl(edited[1:]))
    assert params["chunking"] == "random:9"
    out = app.apply_query(params)
    assert out[2] == PREFIX and out[3] == GENERATION and json.loads(out[1]) == SMOL
    assert json.loads(out[8 + 4]) == EXPECTED
    assert out[-5] == "random" and out[-3] == 9
    assert out[5] == app.EDITED_TEMPLATE  # the dropdown does not name the sample's template (found in review)


def test_bad_state_in_a_link_is_reported():
    out = app.apply_query({"state": "!!!notbase64"})
    assert "The shared state in the link cannot be read" in out[8]
    with pytest.raises(app.InputError, match="too long"):
        app.decode_state("a" * (app.MAX_STATE_PARAM + 1))


def test_default_page_is_a_parsed_sample():
    out = app.apply_query({})
    assert out[0] == app.DEFAULT_SAMPLE
    assert "✔ Parsed" in out[8]


def test_unexpected_errors_become_a_message(monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("kaput")

    monkeypatch.setattr(app, "traced_view", boom)
    out = parse()
    assert "Something went wrong (RuntimeError: kaput)" in out[STATUS]
    assert "Traceback" not in out[STATUS]


def test_generate_live_reports_bad_input_without_a_model():
    out = list(app.generate_live("samples/demo-model", "", "", "", "", False, 10, 0.7, 0.9, 0, True, SMOL_TEXT, False))
    assert "Write a user message" in out[-1][1]
    out = list(app.generate_live("./no/such/folder", "", "Hi", "", "", False, 10, 0.7, 0.9, 0, True, SMOL_TEXT, False))
    assert "no folder" in out[-1][1]


def test_generate_live_with_the_model_template_names_it_in_the_dropdown():
    # The demo model's template is the text of templates/demo-model.json.
    for origin, expected in (("qwen3", "demo-model"), ("hermes-2-pro", "demo-model")):
        out = list(app.generate_live("samples/demo-model", "", "Hi", "", "", False, 3, 0.7, 0.9, 0, True, SMOL_TEXT, False, origin))
        template_text, choice = out[-1][-5], out[-1][-4]
        assert json.loads(template_text) == load_template_file("demo-model").response_template
        assert choice == expected
    kept = list(app.generate_live("samples/demo-model", "", "Hi", "", "", False, 3, 0.7, 0.9, 0, False, SMOL_TEXT, False, "qwen3"))
    assert kept[-1][-5] == kept[-1][-4] == {"__type__": "update"}  # its own template: editor and dropdown kept


def test_views_render_whitespace_and_escape_html():
    assert view.visible_whitespace("a b\n<") == 'a<span class="rt-ws">·</span>b<span class="rt-ws">↵</span>&lt;'
    html = view.region_map(cut_away="", stream="<b>", tail_length=0, spans=[view.MapSpan(0, 3, "discarded")], events=[], field_names=[])
    assert "&lt;b&gt;" in html and "<b>" not in html.replace("<b>", "", 0).split('id="region-map-body">')[1]
