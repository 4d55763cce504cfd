"""The playground reading token ids: Paste & parse through a tokenizer with stretches spelled
out, the Tokens view of the region map, and the event log grouped by token (handlers called
directly, the demo model's real tokenizer)."""

from __future__ import annotations

import html
import json
import re

import pytest

from playground import handlers
from playground.model.generation import DEFAULT_MODEL_PATH
from playground.panels.region_map import SPELLED_NOTE
from playground.parse.session import Session
from playground.parse.token_reading import (
    READ_AS_TEXT,
    READ_DEMO,
    READ_LOADED,
    demo_tokenizer,
    reading_for,
    spelled_ranges,
)
from playground.parse.workspace import WorkspaceInputs
from playground.server.input_readers import InputError

pytestmark = pytest.mark.skipif(
    not (DEFAULT_MODEL_PATH / "tokenizer.json").exists(), reason="demo model not built"
)

PROMPT = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
QUOTED = "Use the <tool_call> tag."
CALL = '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call><|im_end|>'
CALLED = [{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]


def template_text() -> str:
    return json.dumps(demo_tokenizer().response_template)


def read(read_as: str, spelled: str, generation: str = QUOTED + CALL, session=None) -> dict:
    session = session or Session()
    session.display.show_tokens = True
    out = handlers.set_reading(
        read_as, spelled, WorkspaceInputs(template_text(), PROMPT, generation, ""), "", session
    )
    return {**out, "session": session}


def spans_of(region_map: str, css_class: str) -> list[tuple[str, str]]:
    """(title, text) of every map span carrying `css_class`."""
    found = re.findall(
        rf'<span class="(?:[^"]* )?{css_class}(?: [^"]*)?"[^>]*title="([^"]*)"[^>]*>([^<]*)</span>',
        region_map,
    )
    return [(html.unescape(title), html.unescape(text)) for title, text in found]


def test_a_spelled_out_tag_stays_content_and_the_map_says_why():
    out = read(READ_DEMO, "8:19")
    assert json.loads(out["message_json"]) == {
        "role": "assistant",
        "content": QUOTED,
        "tool_calls": CALLED,
    }
    region_map = out["region_map"]
    # The quoted tag: three ordinary tokens, each marked spelled out, then the note.
    assert [text for _, text in spans_of(region_map, "rt-spelled")] == ["<", "tool_call", ">"]
    assert spans_of(region_map, "rt-spelled")[1][0] == (
        f"content · body · {SPELLED_NOTE} · token 16: id 311, 'tool_call'"
    )
    assert (
        '<span class="rt-marker rt-spelled-note" title="spelled out with ordinary tokens: only '
        'the control token&#x27;s id opens or closes a region, so this is text">✎ &lt;tool_call&gt; '
        "spelled out: text, not a delimiter</span>"
    ) in region_map
    # The real call's delimiters are control tokens, drawn apart (and named on hover).
    assert spans_of(region_map, "rt-by-control") == [
        (
            "tool_calls · open · matched by a control token (generated as its id) · control "
            "token 21: id 5, '<tool_call>'",
            "<tool_call>",
        ),
        (
            "tool_calls · close · matched by a control token (generated as its id) · control "
            "token 33: id 6, '</tool_call>'",
            "</tool_call>",
        ),
        (
            "content · close · matched by a control token (generated as its id) · control "
            "token 34: id 2, '<|im_end|>'",
            "<|im_end|>",
        ),
    ]
    assert spans_of(region_map, "rt-by-text") == []
    assert "matched by a control token</span>" in region_map  # the legend's entry
    assert ("tokens", "25") in out["session"].view.figures  # the generation's, not the prompt's


def test_read_as_text_the_quoted_tag_opens_a_tool_call():
    out = read(READ_AS_TEXT, "8:19")
    view = out["session"].view
    assert view.tokens is None
    # Text has no token ids: the quoted tag opens the call, which then fails.
    assert [span.stream_start for span in view.spans if span.kind == "open"] == [8]
    assert view.errors[0].message.startswith(
        "The output does not parse: fields.tool_calls: json: Expecting value (line 1, column 2, offset 1)"
    )
    assert "rt-spelled" not in out["region_map"]


def test_without_a_mark_the_tag_is_generated_as_its_id_and_opens_a_region():
    out = read(READ_DEMO, "")
    view = out["session"].view
    assert view.tokens.spelled_out() == []
    # Generated as its id, the quoted tag is a delimiter: the call opens there and fails; read
    # leniently, that delimiter is consumed and the real call after it is read.
    assert [span.stream_start for span in view.spans if span.kind == "open"][0] == 8
    assert view.message["content"] == "Use the  tag."
    assert view.message["tool_calls"] == [
        {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}
    ]


def test_a_delimiter_that_is_no_control_token_is_drawn_as_matched_in_text():
    template = demo_tokenizer().response_template
    calls = {**template["fields"]["tool_calls"], "open": "<call>"}
    calls["close_pattern"] = "(?<=\\})\\s*</call>"
    text = json.dumps({**template, "fields": {**template["fields"], "tool_calls": calls}})
    session = Session()
    session.display.show_tokens = True
    generation = 'Hi<call>{"name": "f", "arguments": {"a": 1}}</call><|im_end|>'
    out = handlers.set_reading(
        READ_DEMO, "", WorkspaceInputs(text, PROMPT, generation, ""), "", session
    )
    assert session.view.message["tool_calls"] == CALLED
    assert [text for _, text in spans_of(out["region_map"], "rt-by-text")] == [
        "<",
        "call",
        ">",
        "</",
        "call",
        ">",
    ]
    assert spans_of(out["region_map"], "rt-by-text")[0][0] == (
        "tool_calls · open · matched in text (ordinary tokens) · token 11: id 34, '<'"
    )
    assert [text for _, text in spans_of(out["region_map"], "rt-by-control")] == ["<|im_end|>"]


def test_the_event_log_groups_chunks_by_token():
    session = Session()
    read(READ_DEMO, "8:19", session=session)
    shown = handlers.set_display(
        False, False, "", "", 1, session, show_tokens=True, group_by_token=True
    )
    log = shown["event_log"]
    headings = [
        html.unescape(h)
        for h in re.findall(r'class="rt-token-group"[^>]*><td colspan="8">([^<]*)', log)
    ]
    assert headings[:3] == [
        "token 10: id 59 'U'",
        "token 11: id 617 'se'",
        "token 12: id 227 ' '",
    ]
    # The spelled-out tag is held until its last token shows it is text, then released whole.
    assert "token 15: id 34 '<' · token 16: id 311 'tool_call' · token 17: id 36 '>'" in headings
    assert "control token 21: id 5 '<tool_call>'" in headings
    # Under each token, its chunks: clean in content, dirty in the call's JSON.
    rows = re.findall(r'<tr class="([^"]*)" data-n="\d+"[^>]*><td>\d+</td><td>([^<]*)</td>', log)
    assert rows[1:3] == [("rt-clean", "feed 1"), ("rt-clean", "feed 2")]
    assert ("rt-dirty", "feed 13") in rows


def test_grouping_a_parse_of_text_says_it_needs_ids():
    session = Session()
    read(READ_AS_TEXT, "", session=session)
    shown = handlers.set_display(False, False, "", "", 1, session, group_by_token=True)
    assert (
        "Grouping by token needs a parse of token ids: Generate live, or Paste &amp; parse read "
        "through a tokenizer."
    ) in shown["event_log"]


def test_one_view_change_reads_again_only_when_the_reading_changed_and_keeps_every_option():
    """`set_view` is the page's one listener for the reading and the display options: a new
    reading parses again as ids with the Tokens view the same change carried; a display change
    alone re-draws the parse on screen (no new parse) and keeps the reading."""
    session = Session()
    workspace = WorkspaceInputs(template_text(), PROMPT, QUOTED + CALL, "")
    handlers.set_reading(READ_AS_TEXT, "", workspace, "", session)
    as_text = session.view
    both = handlers.set_view(
        READ_DEMO, "", workspace, "", False, False, "", "", 1, session, show_tokens=True
    )
    as_ids = session.view
    assert as_ids is not as_text
    assert (session.read_as, session.display.show_tokens) == (READ_DEMO, True)
    assert "rt-tok-odd" in both["region_map"]
    assert set(both) >= {"diagnostics", "region_map", "status", "message_json"}
    shown = handlers.set_view(
        READ_DEMO, "", workspace, "", False, True, "", "", 1, session, show_tokens=True
    )
    assert session.view is as_ids
    assert session.display.show_whitespace is True
    assert "diagnostics" not in shown and "rt-tok-odd" in shown["region_map"]
    assert shown["region_map"] != both["region_map"]  # whitespace is now shown


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8:19", [(8, 19)]),
        ("25:30\n8:19  # the quoted tag\n\n10:22", [(8, 22), (25, 30)]),
        ("8:19\n19:25", [(8, 25)]),
        ("", []),
    ],
)
def test_spelled_ranges_are_read_sorted_and_merged(text, expected):
    assert spelled_ranges(text, 40) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("8-19", "Spelled out, line 1: '8-19' is not a range like 8:19 (start:end, character offsets of the generation)."),
        ("1:2\n30:50", "Spelled out, line 2: 30:50 is not a stretch of the generation (it has 40 characters; start must be below end)."),
        ("5:5", "Spelled out, line 1: 5:5 is not a stretch of the generation (it has 40 characters; start must be below end)."),
    ],
)  # fmt: skip
def test_a_bad_range_is_refused_naming_its_line(text, message):
    with pytest.raises(InputError) as caught:
        spelled_ranges(text, 40)
    assert str(caught.value) == message


def test_the_loaded_models_tokenizer_needs_a_loaded_model():
    with pytest.raises(InputError) as caught:
        reading_for(READ_LOADED, "", "text", loaded_tokenizer=None)
    assert str(caught.value) == (
        "No model is loaded: Generate live loads one (or read through the demo model's tokenizer)."
    )


def test_a_bad_range_keeps_the_last_parse_marked_stale():
    session = Session()
    read(READ_DEMO, "8:19", session=session)
    out = read(READ_DEMO, "8:99", session=session)
    assert "STALE" in out["region_map"]
    assert "Spelled out, line 1: 8:99 is not a stretch of the generation" in out["region_map"]


def test_spelled_out_ids_use_ordinary_tokens_only():
    reading = reading_for(READ_DEMO, "8:19", QUOTED + CALL)
    ids = reading.ids(QUOTED + CALL)
    assert ids[:10] == [59, 617, 227, 399, 227, 34, 311, 36, 227, 1807]
    assert 5 in ids[10:] and 5 not in ids[:10]


def test_the_diagnostics_lint_the_template_against_the_tokenizer_read_with():
    template = demo_tokenizer().response_template
    calls = {**template["fields"]["tool_calls"], "close": "</tool_call >"}
    del calls["close_pattern"]
    text = json.dumps({**template, "fields": {**template["fields"], "tool_calls": calls}})
    workspace = WorkspaceInputs(text, PROMPT, QUOTED + CALL, "")
    finding = (
        "'</tool_call >' is not the control token '</tool_call>': this tokenizer encodes it as 4 "
        "ordinary token(s), so, parsing token ids, it never matches the '</tool_call>' the model "
        "generates as one id"
    )
    as_ids = handlers.set_reading(READ_DEMO, "", workspace, "", Session())
    assert finding in html.unescape(re.sub(r"<[^>]+>", "", as_ids["diagnostics"]))
    as_text = handlers.set_reading(READ_AS_TEXT, "", workspace, "", Session())
    assert "is not the control token" not in html.unescape(as_text["diagnostics"])


def test_a_spelled_out_open_keeps_its_call_as_text_and_the_status_names_it():
    """The default sample with its first `<tool_call>` spelled out: that call stays content
    (its close, generated as the control token's id, is consumed: a control token never lands
    in content, and the status says so), the second call parses."""
    from playground import catalog

    sample = catalog.samples_by_id()[catalog.DEFAULT_SAMPLE]
    workspace = WorkspaceInputs(
        catalog.template_text_of(sample.template),
        sample.prefix,
        sample.generation,
        catalog.template_text_of(sample.tools),
    )
    session = Session()
    handlers.set_reading(READ_DEMO, "", workspace, "", session)
    assert [
        call["function"]["arguments"]["city"] for call in session.view.message["tool_calls"]
    ] == [
        "Paris",
        "東京",
    ]
    out = handlers.set_reading(READ_DEMO, "26:37", workspace, "", session)
    assert session.view.message == {
        "role": "assistant",
        "content": 'Let me check both cities.\n<tool_call>\n{"name": "get_weather", "arguments": '
        '{"city": "Paris", "days": 3}}',
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "東京", "days": 1}},
            }
        ],
    }
    # The call spelled out stays text, and the status names the tool sitting in content: a call
    # the serving stack will not run is never plain green.
    shown = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", out["status"])).split())
    assert shown.startswith(
        "⚠ The output has a slip, read leniently: fields.tool_calls.close_pattern: lenient reading "
        "at stream "
        "offset 115: '</tool_call>' is the close of tool_calls where no tool_calls region is open: "
        "consumed"
    ), shown
    assert (
        "△ the tool 'get_weather' is named at generation offset 48 in content, with its parameter "
        "'city'"
    ) in shown


def test_explain_names_the_tokens_and_why_a_spelled_out_tag_is_text():
    session = Session()
    read(READ_DEMO, "8:19", session=session)
    body = handlers.explain_span({"selected": "0"}, session)["explain"]
    text = html.unescape(re.sub(r"<[^>]+>", "", body))
    assert (
        "spelled out<tool_call> at 8–19 is written with ordinary tokens: only the control "
        "token's id opens or closes a region, so it is text here"
    ) in text
    assert "token 10: id 59 U · token 11: id 617 se" in text
    opened = handlers.explain_span({"selected": "1"}, session)["explain"]
    text = html.unescape(re.sub(r"<[^>]+>", "", opened))
    assert "control token 21: id 5 <tool_call>" in text
    assert "matched bya control token, generated as its id" in text


def test_only_the_characters_a_control_token_gave_say_they_were_matched_by_one():
    # The close takes the newline before `</tool_call>` too: that newline is an ordinary token,
    # matched in text; only `</tool_call>` itself came from a control token's id.
    out = read(
        READ_DEMO, "", 'Hi<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call><|im_end|>'
    )
    assert out["session"].view.message["tool_calls"] == CALLED
    assert spans_of(out["region_map"], "rt-by-text") == [
        ("tool_calls · close · matched in text (ordinary tokens) · token 24: id 205, '\\n'", "\n")
    ]
    assert spans_of(out["region_map"], "rt-by-control") == [
        (
            "tool_calls · open · matched by a control token (generated as its id) · control "
            "token 11: id 5, '<tool_call>'",
            "<tool_call>",
        ),
        (
            "tool_calls · close · matched by a control token (generated as its id) · control "
            "token 25: id 6, '</tool_call>'",
            "</tool_call>",
        ),
        (
            "content · close · matched by a control token (generated as its id) · control "
            "token 26: id 2, '<|im_end|>'",
            "<|im_end|>",
        ),
    ]
