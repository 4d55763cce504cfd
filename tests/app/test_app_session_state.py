"""What a session keeps is all counted, trimmed to its cap and freed when it is released: every
field of `Session` and of the objects with a weight of their own it holds (no server)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from playground.parse.parse_view import ParseView, traced_view
from playground.parse.replay import Replay
from playground.parse.session import Display, OpenSessions, Session
from tests.support.paths import ROOT

MB = 1_000_000
TEMPLATE = json.loads((ROOT / "templates" / "qwen3.json").read_text())["response_template"]


def small_view() -> ParseView:
    return traced_view(TEMPLATE, "", "<think>a</think>b", None)


def weighed(kind: type):
    """A fresh object of `kind` and the function giving its weight."""
    if kind is Session:
        return Session(), lambda session: session.weight
    if kind is Display:
        session = Session()
        return session.display, lambda _: session.weight
    if kind is ParseView:
        return small_view(), lambda view: view.weight
    return Replay("key", ["a", "b"]), lambda replay: replay.weight


def field_cases():
    for kind in (Session, Display, ParseView, Replay):
        estimated = getattr(kind, "ESTIMATED", frozenset())
        for one in dataclasses.fields(kind):
            if one.name not in estimated:
                yield pytest.param(kind, one.name, id=f"{kind.__name__}.{one.name}")


@pytest.mark.parametrize(("kind", "name"), list(field_cases()))
def test_every_field_counts_what_it_holds(kind, name):
    # A new field is counted without anyone listing it: a megabyte put in it weighs a megabyte.
    holder, weight = weighed(kind)
    assert weight(holder) < 100_000
    setattr(holder, name, "x" * MB)
    assert weight(holder) >= MB


def test_fields_counted_by_estimate_are_fields_and_their_estimates_grow():
    for kind in (ParseView, Replay):
        assert kind.ESTIMATED <= {one.name for one in dataclasses.fields(kind)}, kind
    small = small_view().weight
    big = traced_view(TEMPLATE, "", "<think>a</think>" + "b" * MB, None).weight
    assert big - small >= 2 * MB  # the text, and the values made of it
    replay = Replay("key", ["ab"] * 100_000, characters=200_000, latin1=False)
    assert replay.weight >= 200_000 + 56 * 100_000


def full_session() -> Session:
    """A session with a megabyte or more in every field that can hold text."""
    session = Session()
    big = "x" * MB
    session.view = traced_view(TEMPLATE, "", "<think>a</think>" + "b" * MB, None)
    session.last_good = traced_view(TEMPLATE, "", "<think>a</think>" + "c" * MB, None)
    session.replay = Replay("key", [big], characters=MB, latin1=False)
    session.reset_text = session.test_cases_text = session.check_template = big + "r"
    session.check_rows = [{"prompt": big, "generation": big}]
    session.inference = {"template": {}, "findings": [{"text": big + "i"}]}
    session.derived = {"reference": (("d",), big + "d", False)}
    session.generated = (big + "g", [1, 2])
    session.replaced = [(f"Infer {n}", big + str(n)) for n in range(10)]
    session.restored = [("Restore", big + "b")]
    session.display.log_search = "search"
    session.display.selection = "3"
    return session


def test_trim_keeps_a_session_under_its_cap_dropping_the_oldest_restore_texts_last():
    session = full_session()
    assert session.weight > 20 * MB
    assert session.trim(3_500_000)
    assert session.weight <= 3_500_000
    assert (session.view, session.last_good, session.replay, session.inference) == (None,) * 4
    assert session.derived == {} and session.check_rows == [] and session.restored == []
    assert session.test_cases_text == ""
    # The newest texts Restore puts back are the last to go.
    assert [why for why, _ in session.replaced] == ["Infer 8", "Infer 9"]
    assert session.reset_text.endswith("r")  # Reset still works


def test_a_released_session_keeps_almost_nothing_and_its_options():
    session = full_session()
    session.display.show_whitespace = True
    session.release()
    assert session.weight < 5_000
    assert session.display.show_whitespace is True and session.stop_requested is True


def test_the_oldest_sessions_go_past_the_total_and_are_freed():
    sessions = OpenSessions()
    opened = [full_session() for _ in range(3)]
    for number, session in enumerate(opened):
        sessions.seen(str(number), session, 10)
        sessions.charge(str(number), session, 100 * MB, 50 * MB)
    # Each holds about 20 MB: past 50 MB the least recently used is released, all of it.
    assert opened[0].weight < 5_000 and opened[0].replaced == []
    assert opened[2].weight > 20 * MB
    assert sessions.weight <= 50 * MB


# -- what comes in is checked at the door ---------------------------------------------------

HUGE = "x" * 15_000_000


def test_event_ids_not_among_the_known_ones_are_not_kept():
    from playground import handlers
    from playground.handlers.event_data import event_number

    session = Session()
    assert handlers.select_tab({"id": HUGE}, session) == {} and session.tab == "samples"
    handlers.select_tab({"id": "paste"}, session)
    assert session.tab == "paste"
    handlers.select_results_tab({"id": HUGE}, session)
    assert session.display.results_tab == "message"
    handlers.select_results_tab({"id": "log"}, session)
    assert session.display.results_tab == "log"
    handlers.load_sample("qwen3/text-then-tool-calls", session)
    assert handlers.explain_span({"selected": HUGE}, session) == {}
    assert handlers.show_event({"selected": "e" + "1" * 5000}, "", session) == {}
    assert session.display.selection is None
    assert handlers.explain_span({"selected": "anchor"}, session)["explain"]
    assert session.display.selection == "anchor"
    # A number of thousands of digits is no row, no event and no fix.
    assert event_number({"event": "9" * 5000}, "event", 0) == 0
    assert event_number({"row": 3.0}, "row") == 3
    assert event_number({"row": True}, "row") == -1
    assert handlers.load_check_row({"row": "1" * 5000}, "", "", session) == {}
    assert session.weight < 2_000_000


def test_an_editor_text_over_the_template_limit_is_never_pushed_on_restore():
    from playground import handlers

    session = Session()
    handlers.load_sample("qwen3/text-then-tool-calls", session)
    for _ in range(3):
        handlers.load_sample("qwen3/text-then-tool-calls", session, HUGE + "{}")
    assert session.replaced == []
    handlers.load_sample("qwen3/text-then-tool-calls", session, '{"fields": {}}')
    assert session.replaced == [("loading a sample", '{"fields": {}}')]


def test_a_text_longer_than_its_box_is_refused_at_the_door_before_the_handler_runs():
    import gradio as gr

    from playground.outputs import produces
    from playground.wiring import Page

    ran = []

    @produces("status", "diagnostics")
    def keeps(template_text: str, log_search: str, session: Session) -> dict:
        ran.append(template_text)
        return {"status": "kept"}

    with gr.Blocks():
        page = Page()
        page.status, page.diagnostics = gr.HTML(), gr.HTML()
        page.template_text, page.log_search = gr.Code(), gr.Textbox()
        page.session = gr.State(Session())
        bound = page.bound(keeps)
    session = Session()
    refused = bound(HUGE, "", session)
    assert refused[page.status] == (
        '<div class="rt-status rt-status-error" id="status-error">⚠ The template is too long: '
        "15,000,000 characters (limit 64,000, PLAYGROUND_LIMITS template_chars); nothing was "
        "changed.</div>"
    )
    assert ran == []
    refused = bound("{}", "s" * 1_001, session)
    assert "The log search is too long: 1,001 characters (limit 1,000)" in refused[page.status]
    assert bound("{}", "s", session)[page.status] == "kept" and ran == ["{}"]
