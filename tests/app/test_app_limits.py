"""What a public server bounds, one part at a time (no server): the limits and their docs, client
addresses and shares, folders, redaction, the chat view's escaping, sessions' weights, the engine's
deadline and worker jobs. The whole server under attack is tests/app/test_app_attacks.py."""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import time

import psutil
import pytest

from engine import ParseDeadlineError, ResponseParser, parse_response
from engine.authoring.stream_checks import check_stream
from playground.panels.markup import chat_code, chat_text
from playground.panels.message_view import chat_messages
from playground.parse.parse_view import traced_view
from playground.parse.session import OpenSessions, Session, heavy_job
from playground.server import admission, folders, input_readers, limits, queues, uploads, workers
from playground.server.redact import FAILURE_HEADLINES, in_words, redact
from tests.support.paths import ROOT

LOOKAHEAD = {
    "start_anchor": "<s>",
    "fields": {
        "x": {"open_pattern": "<x>(?=(?:(?:a|aa)+d)?)", "close": "</x>", "repeats": True},
        "content": {},
    },
}
SLOW = ("<x>" + "a" * 28 + "c</x>") * 40


def with_limits(monkeypatch, **caps):
    monkeypatch.setattr(limits, "LIMITS", dataclasses.replace(limits.LIMITS, **caps))


def test_a_refused_job_names_the_job_running_and_says_press_stop_only_when_stop_ends_it():
    session = Session()
    with heavy_job(session, 1, "conformance") as admitted:
        assert admitted is None
        with heavy_job(session, 1, "model") as refused:
            assert refused == (
                "This page is already running a chat-template check (at most 1 at once, "
                "PLAYGROUND_LIMITS session_jobs): wait for it to end."
            )
    with heavy_job(session, 1, "replay"):
        with heavy_job(session, 1, "model") as refused:
            assert refused == (
                "This page is already running a replay (at most 1 at once, "
                "PLAYGROUND_LIMITS session_jobs): press Stop or wait for it to end."
            )
    with heavy_job(session, 1):  # a job of no known kind
        with heavy_job(session, 1, "replay") as refused:
            assert refused == (
                "This page is already running 1 job (a replay, generation, check or inference) "
                "(at most 1 at once, PLAYGROUND_LIMITS session_jobs): wait for it to end."
            )
    assert session.heavy_jobs == 0 and session.running_jobs == []


def test_the_docs_list_every_limit_with_its_default():
    table = (ROOT / "docs" / "app.md").read_text(encoding="utf-8")
    for item in dataclasses.fields(limits.Limits):
        row = re.search(rf"^\| `{item.name}` \| ([^|]+) \|", table, re.M)
        assert row, item.name
        if item.name not in ("model_folders", "proxy_hops"):
            assert float(row.group(1)) == getattr(limits.Limits(), item.name), item.name


def test_folders_and_proxy_hops_have_their_own_kinds_of_value():
    assert limits.Limits.from_json(
        '{"model_folders": ["/data/models"], "proxy_hops": 0}'
    ).model_folders == ("/data/models",)
    with pytest.raises(limits.LimitsError, match="'model_folders' must be a list of folder paths"):
        limits.Limits.from_json('{"model_folders": "/data"}')
    with pytest.raises(limits.LimitsError, match="'parse_seconds' must be above 0, got 0"):
        limits.Limits.from_json('{"parse_seconds": 0}')


def test_a_client_never_holds_more_than_half_of_a_kinds_slots():
    assert {kind: queues.client_cap(kind) for kind in queues.WORK} == {
        "parse": 4,
        "replay": 2,
        "model": 2,
        "export": 2,
        "conformance": 1,
        "infer": 1,
        "reference": 1,
        "fit": 1,
    }


class _Request:
    def __init__(self, peer: str, forwarded: str | None = None):
        self.client = type("Client", (), {"host": peer})()
        self.headers = {"x-forwarded-for": forwarded} if forwarded else {}


def test_a_clients_address_is_the_peer_or_what_the_trusted_proxy_saw(monkeypatch):
    assert admission.client_address(_Request("10.0.0.9", "6.6.6.6")) == "10.0.0.9"
    with_limits(monkeypatch, proxy_hops=1)
    # A visitor may write anything into the header; the proxy appends what it saw, last.
    assert admission.client_address(_Request("10.0.0.9", "6.6.6.6, 81.2.3.4")) == "81.2.3.4"
    assert admission.client_address(_Request("10.0.0.9")) == "10.0.0.9"


def test_only_the_demo_model_and_allowed_folders_may_be_named(tmp_path, monkeypatch):
    demo = folders.check_model_name("samples/demo-model")
    assert demo == str(folders.DEMO_MODEL) and folders.shown(demo) == "samples/demo-model"
    assert folders.check_model_name("Qwen/Qwen3-0.6B") == "Qwen/Qwen3-0.6B"
    (tmp_path / "model").mkdir()
    answers = set()
    for name in (
        "/root/.ssh",
        str(tmp_path / "model"),
        str(tmp_path / "missing"),
        "../../etc",
        "~",
    ):
        with pytest.raises(folders.FolderError) as caught:
            folders.check_model_name(name)
        answers.add(str(caught.value).replace(repr(name), "NAME"))
    assert len(answers) == 1  # missing and forbidden folders answer alike
    with_limits(monkeypatch, model_folders=(str(tmp_path),))
    allowed = folders.check_model_name(str(tmp_path / "model"))
    assert (
        allowed == str((tmp_path / "model").resolve())
        and folders.shown(allowed) == f"{tmp_path.name}/model"
    )


@pytest.mark.parametrize(
    ("message", "shown"),
    [
        ("TypeError: unhashable type: 'dict'", "Unhashable type: 'dict'"),
        ("no folder /root/.ssh here", "no folder (a server path) here"),
        (f"could not load {ROOT}/samples/demo-model", "could not load samples/demo-model"),
        ("jinja2.exceptions.TemplateSyntaxError: unexpected '}'", "unexpected '}'"),
        ("ResponseParseError: fields.x: bad </think>", "Fields.x: bad </think>"),
    ],
)
def test_messages_lose_server_paths_and_python_type_names(message, shown):
    assert redact(message) == shown


def test_the_page_says_what_failed_in_words_never_an_engine_errors_name():
    assert (
        in_words("ResponseParseError", "fields.x: bad </think>")
        == "The output does not parse: fields.x: bad </think>"
    )
    assert (
        in_words("ParseLimitError", "the parse stopped at stream offset 9: it has opened 2 regions")
        == "The output is too large to parse: the parse stopped at stream offset 9: it has opened "
        "2 regions"
    )
    assert in_words("KeyError", "'x'") == "'x'"  # no headline for a type that is not the engine's
    # Every headline is one of the engine's documented errors, said without its name.
    import engine.errors

    for name, headline in FAILURE_HEADLINES.items():
        assert issubclass(getattr(engine.errors, name), ValueError)
        assert redact(headline) == headline and "Error" not in headline


def test_the_chat_view_shows_a_generation_as_text():
    overlay = '<div style="position:fixed">![x](//evil.example/p.png) **b**</div>'
    shown = chat_messages(
        {
            "role": "assistant",
            "content": overlay,
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "<img src=x>", "arguments": {"a": "```\n<b>"}},
                }
            ],
        }
    )
    assert shown[0]["content"] == chat_text(overlay)
    assert (
        "<" not in shown[0]["content"]
        and "](" not in shown[0]["content"]
        and "**" not in shown[0]["content"]
    )
    assert shown[1]["metadata"]["title"] == "🛠️ Tool call: &lt;img src=x&gt;"
    assert shown[1]["content"].startswith("````json\n") and shown[1]["content"].endswith("\n````")
    assert chat_code("a ``` b").startswith("````")


def test_a_session_over_its_cap_is_trimmed_and_past_the_total_the_oldest_go():
    template = json.loads((ROOT / "templates" / "qwen3.json").read_text())["response_template"]
    sessions = OpenSessions()
    big = [Session() for _ in range(3)]
    for number, session in enumerate(big):
        session.view = session.last_good = traced_view(
            template, "", "<think>a</think>" + "b" * 200_000, None
        )
        sessions.seen(str(number), session, 10)
    weight = big[0].weight
    assert 400_000 < weight < 2_000_000
    sessions.charge("0", big[0], weight * 10, weight * 10)
    sessions.charge("1", big[1], weight * 10, weight * 10)
    sessions.charge(
        "2", big[2], weight * 10, int(weight * 2.5)
    )  # past the total: the least recently used goes
    assert big[0].view is None and big[1].view is not None and big[2].view is not None
    assert len(sessions) == 2 and sessions.weight <= weight * 2.5
    big[2].trim(weight // 2)  # over its own cap: the parse on screen goes too
    assert big[2].view is None and big[2].weight < weight // 2


def test_the_engines_deadline_stops_a_parse_whose_every_regex_call_is_within_budget():
    started = time.perf_counter()
    with pytest.raises(
        ParseDeadlineError, match="the parse ran past its deadline at stream offset"
    ):
        parse_response(
            SLOW, LOOKAHEAD, prefix="", regex_timeout=0.5, deadline=time.perf_counter() + 1
        )
    assert time.perf_counter() - started < 3
    parser = ResponseParser(
        LOOKAHEAD, "", regex_timeout=0.5, deadline=time.perf_counter() + 1, on_error="keep"
    )
    with pytest.raises(ParseDeadlineError):  # also when failed regions are kept
        parser.finalize(SLOW)
    fine = ResponseParser(LOOKAHEAD, "", regex_timeout=0.5, deadline=time.perf_counter() + 60)
    assert fine.finalize("<x>b</x>")[0] == {"x": ["b"]}


def test_a_parse_past_its_budget_names_the_budget(monkeypatch):
    with_limits(monkeypatch, parse_seconds=1.0)
    view = traced_view(LOOKAHEAD, "", SLOW, None)
    assert view.error.startswith(
        "The parse took too long: the parse ran past its deadline at stream offset "
    )
    assert view.error.endswith("(the time budget is PLAYGROUND_LIMITS parse_seconds, 1 s)")
    assert view.spans[-1].kind == "unparsed"


def test_the_stream_check_stops_at_its_work_cap_with_splits_spread_over_the_text():
    generation = "<think>" + "a" * 5000 + "</think>" + "b" * 5000
    template = json.loads((ROOT / "templates" / "qwen3.json").read_text())["response_template"]
    report = check_stream(
        generation, template, prefix="", seeds=range(2), max_chars=10 * len(generation)
    )
    assert report.complete and report.ok
    assert report.runs == 1 + 1 + 6 + 2  # one-shot, one-char, 6 splits spread over it, 2 seeds
    assert report.every_split_stride == -(-(len(generation) - 1) // 6)
    assert any(
        "truncation check:" in note and "not tested (the work cap" in note for note in report.notes
    )


def test_a_worker_job_gets_its_result_its_own_error_or_is_cut_off(monkeypatch):
    monkeypatch.setitem(workers.JOBS, "reference", "playground.panels.reference_diff:reference_job")
    template = json.loads((ROOT / "templates" / "qwen3.json").read_text())["response_template"]
    done = workers.run_job(
        "reference",
        {"template": template, "prefix": "", "generation": "<think>a</think>b", "tools": None},
        seconds=60,
    )
    assert done.error is None and done.result == {
        "message": {"role": "assistant", "reasoning_content": "a", "content": "b"}
    }
    backtracking = {
        "start_anchor": "<s>",
        "fields": {"thing": {"open_pattern": "(a|aa)+$", "close": "</x>"}, "content": {}},
    }
    stuck = workers.run_job(
        "reference",
        {"template": backtracking, "prefix": "<s>", "generation": "a" * 36 + "b", "tools": None},
        seconds=3,
    )
    assert stuck.cut_off and stuck.error == "cut off after 3 s" and workers.running_workers() == 0


def _worker_children() -> list[psutil.Process]:
    return [
        child
        for child in psutil.Process().children()
        if child.is_running()
        and child.status() != psutil.STATUS_ZOMBIE
        and "playground.server.workers" in " ".join(child.cmdline())
    ]


def test_a_job_holding_a_lone_surrogate_runs_and_its_worker_ends():
    template = json.loads((ROOT / "templates" / "qwen3.json").read_text())["response_template"]
    done = workers.run_job(
        "reference",
        {"template": template, "prefix": "", "generation": "<think>\ud800</think>b", "tools": None},
        seconds=60,
    )
    assert done.error is None and done.result == {
        "message": {"role": "assistant", "reasoning_content": "\ud800", "content": "b"}
    }
    assert len(_worker_children()) <= 1  # the spare started for the next job, no other


def test_a_worker_is_ended_by_an_error_of_the_server_too():
    with pytest.raises(TypeError):
        workers.run_job("reference", {"not JSON": {1, 2}}, seconds=60)
    time.sleep(0.5)
    assert len(_worker_children()) <= 1 and workers.running_workers() == 0


def test_a_clients_jobs_in_workers_hold_at_most_its_share(monkeypatch):
    from gradio.context import LocalContext

    with_limits(monkeypatch, worker_mb=1024, client_worker_mb=2048)
    visitor = gr_request("10.9.0.1")
    looping = {"start_anchor": "<s>", "fields": {"t": {"open_pattern": "(a|aa)+$"}}}
    payload = {"template": looping, "prefix": "<s>", "generation": "a" * 36 + "b", "tools": None}
    outcomes = []

    def job():
        LocalContext.request.set(visitor)
        outcomes.append(workers.run_job("reference", payload, seconds=4))

    running = [threading.Thread(target=job) for _ in range(2)]
    for thread in running:
        thread.start()
    time.sleep(1)
    LocalContext.request.set(visitor)
    third = workers.run_job("reference", payload, seconds=4)
    LocalContext.request.set(gr_request("10.9.0.2"))
    other = workers.run_job("reference", payload, seconds=1)
    LocalContext.request.set(None)
    for thread in running:
        thread.join()
    assert third.error == (
        "you already have jobs in worker processes holding 2,048 MB of memory (at most 2,048 MB "
        "at once, PLAYGROUND_LIMITS client_worker_mb): wait for them to end"
    )
    assert other.cut_off  # not refused: another client's job waits for a slot (both are busy)
    assert [outcome.cut_off for outcome in outcomes] == [True, True]


def gr_request(address: str):
    """A real Gradio request as a listener gets it, from `address`."""
    import gradio as gr
    from starlette.requests import Request

    scope = {"type": "http", "client": (address, 40000), "headers": [], "method": "POST"}
    return gr.Request(Request(scope))


def test_text_that_is_not_valid_unicode_is_refused_saying_where():
    with pytest.raises(input_readers.InputError) as caught:
        input_readers.check_unicode("ok \ud83d", "The prefix")
    assert str(caught.value) == (
        "The prefix is not valid Unicode: character 3 is a lone surrogate (U+D83D); an escape "
        "such as \\ud83d must come with its pair."
    )
    with pytest.raises(input_readers.InputError, match=r"^The template is not valid Unicode at "):
        input_readers.read_template('{"fields": {"x": {"open": ["<a>", "\\udc00"]}}}')
    assert input_readers.read_json('["\\ud83d\\ude00"]', "The tools JSON", 100) == ["😀"]
    with pytest.raises(input_readers.InputError, match="holds a number too long to read"):
        input_readers.read_json("[" + "1" * 5000 + "]", "The tools JSON", 10_000)


def test_mcp_callers_are_sessions_by_address():
    from starlette.requests import Request

    def request(address: str, user: bytes | None = None):
        headers = [(b"x-forwarded-for", address.encode())]
        if user is not None:
            headers.append((b"x-gradio-user", user))
        return Request({"type": "http", "client": ("127.0.0.1", 1), "headers": headers})

    with_limits_proxy = dataclasses.replace(limits.LIMITS, proxy_hops=1)
    previous, limits.LIMITS = limits.LIMITS, with_limits_proxy
    try:
        assert admission.session_key("abc", request("10.1.0.1")) == "abc"
        assert admission.session_key("abc", request("10.1.0.1", b"mcp")) == "mcp@10.1.0.1"
        assert admission.session_key("abc", request("10.1.0.2", b"mcp")) == "mcp@10.1.0.2"
    finally:
        limits.LIMITS = previous


def test_a_clients_uploads_count_against_its_quota_until_removed(tmp_path, monkeypatch):
    with_limits(monkeypatch, client_upload_mb=1, uploads_mb=2)
    ledger = uploads.UploadLedger()
    kept = tmp_path / "kept.json"
    kept.write_bytes(b"x" * 600_000)
    assert ledger.admit("10.3.0.1", 600_000) == (None, 0)
    ledger.arrived("10.3.0.1", 600_000, [kept], 600_000)
    refused, held = ledger.admit("10.3.0.1", 600_000)
    assert held == 600_000 and refused == (
        "You have 0.6 MB of uploads on the server (at most 1 MB per client, PLAYGROUND_LIMITS "
        "client_upload_mb): they are deleted when your page closes, or ten minutes after the upload."
    )
    assert ledger.admit("10.3.0.2", 600_000)[0] is None  # another client has its own quota
    ledger.arrived("10.3.0.2", 600_000, [], 0)
    assert ledger.remove("10.3.0.1") == 1 and not kept.exists()
    assert ledger.admit("10.3.0.1", 600_000) == (None, 0)


async def _read_and_answer_no_paths(scope, receive, send):
    """The application behind the middleware: reads the whole body, answers an empty JSON list."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    await Request(scope, receive).body()
    await JSONResponse([])(scope, receive, send)


def test_a_request_over_its_size_or_its_clients_upload_quota_gets_the_same_kind_of_refusal(
    monkeypatch,
):
    from starlette.testclient import TestClient

    with_limits(monkeypatch, request_mb=1, upload_mb=3, client_upload_mb=2)
    monkeypatch.setattr(uploads, "LEDGER", uploads.UploadLedger())
    client = TestClient(
        admission.RequestSizeCap(uploads.UploadQuota(_read_and_answer_no_paths)),
        raise_server_exceptions=True,
    )
    too_large = client.post("/gradio_api/queue/join", content=b"x" * 1_100_000)
    over_quota = client.post("/gradio_api/upload", content=b"x" * 2_500_000)
    streamed = client.post(
        "/gradio_api/upload", content=(b"x" * 500_000 for _ in range(5))
    )  # no declared length: refused once what arrived is over the quota
    answers = [
        (r.status_code, r.headers["content-type"], r.headers["connection"], r.json())
        for r in (too_large, over_quota, streamed)
    ]
    assert answers == [
        (
            413,
            "application/json",
            "close",
            {
                "detail": "The request is too large (limit 1 MB, PLAYGROUND_LIMITS request_mb or "
                "upload_mb)."
            },
        ),
        (429, "application/json", "close", {"detail": uploads.over_quota(0)}),
        (429, "application/json", "close", {"detail": uploads.over_quota(2_500_000)}),
    ]
    assert uploads.over_quota(0).startswith(
        "You have 0.0 MB of uploads on the server (at most 2 MB"
    )
    assert client.post("/gradio_api/upload", content=b"x" * 1_000).json() == []
    assert too_large.headers["content-length"] == str(len(too_large.content))


def test_requests_outside_the_queue_are_admitted_each_client_by_its_share():
    door = admission.UnqueuedAdmission(None)
    answers = []
    for _ in range(admission.UNQUEUED_BURST + 1):
        answers.append(door.refusal("10.7.0.1", 0, now=100.0))
        door.done("10.7.0.1")
    assert answers[:-1] == [None] * admission.UNQUEUED_BURST
    assert answers[-1] == (
        "Too many requests from your address (at most 10 a second outside the queue): wait a moment."
    )
    assert door.refusal("10.7.0.2", 0, now=100.0) is None  # another client has its own share
    door.done("10.7.0.2")
    assert door.refusal("10.7.0.1", 0, now=100.5) is None  # half a second: five more
    door.done("10.7.0.1")
    running = [door.refusal("10.7.0.3", 0, now=200.0) for _ in range(5)]
    assert running[:4] == [None] * 4 and running[4] == (
        "You already have 4 requests running outside the queue (at most 4 at once): wait for "
        "them to end."
    )
    assert door.refusal("10.7.0.4", 16_000_000, now=300.0) is None
    door.done("10.7.0.4")
    assert door.refusal("10.7.0.4", 2_000_000, now=300.1) == (
        "Too much sent from your address (at most 8 MB a second outside the queue): wait a moment."
    )


def test_the_routes_outside_the_queue_and_mcp_messages_are_refused_past_their_caps(monkeypatch):
    from starlette.testclient import TestClient

    with_limits(monkeypatch, proxy_hops=1)
    client = TestClient(
        admission.UnqueuedAdmission(admission.RequestSizeCap(_read_and_answer_no_paths))
    )
    answers = [
        client.post(
            "/gradio_api/run/predict", content=b"{}", headers={"x-forwarded-for": "10.8.0.1"}
        ).status_code
        for _ in range(admission.UNQUEUED_BURST)
    ]
    # The burst passes (past it, the rate: test_requests_outside_the_queue_are_admitted_...).
    assert answers == [200] * admission.UNQUEUED_BURST
    other = client.post("/gradio_api/run/predict", headers={"x-forwarded-for": "10.8.0.2"})
    assert other.status_code == 200
    queued = [
        client.post("/gradio_api/queue/join", headers={"x-forwarded-for": "10.8.0.1"}).status_code
        for _ in range(5)
    ]
    assert queued == [200] * 5  # the queue has its own admission
    cap = admission.mcp_message_bytes()
    assert cap == 2 * (64_000 + 200_000 + 1_000_000 + 64_000) + 65_536
    big = client.post(
        "/gradio_api/mcp/messages/",
        content=b"x" * (cap + 1),
        headers={"x-forwarded-for": "10.8.0.3"},
    )
    event = client.post(
        "/gradio_api/run/page_select_tab",
        content=b"x" * (admission.UNQUEUED_BODY_BYTES + 1),
        headers={"x-forwarded-for": "10.8.0.4"},
    )
    assert (event.status_code, event.json()) == (
        413,
        {
            "detail": "The request is too large for a route outside the queue (limit 65 KB): send "
            "texts through the queue (/gradio_api/queue/join, or the API's /call routes)."
        },
    )
    assert (big.status_code, big.json()) == (
        413,
        {
            "detail": "The MCP message is too large (limit 2.7 MB: twice the page's text limits, "
            "PLAYGROUND_LIMITS template_chars, prefix_chars, generation_chars and tools_chars)."
        },
    )


def test_gradio_keeps_no_copy_of_what_visitors_send():
    import gradio as gr
    from gradio.state_holder import SessionState

    from playground.server import session_store

    with gr.Blocks() as blocks:
        box = gr.Textbox()
        kept = gr.State("state")
    session_store.keep_lean()
    state = SessionState(blocks)
    gradios = object.__new__(SessionState)
    SessionState._gradio_init(gradios, blocks)
    assert set(vars(state)) == set(vars(gradios)) and gradios.config_values != {}
    assert state.config_values == {}
    state[box._id] = box
    state._update_value_in_config(box._id, "x" * 1_000_000)
    state[kept._id] = "kept"
    assert state.config_values == {} and state[kept._id] == "kept"


def test_bytes_sent_to_the_queue_are_budgeted_per_client_and_big_bodies_for_everyone():
    door = admission.UnqueuedAdmission(None)

    def scope(address: str, size: int) -> dict:
        headers = [(b"x-forwarded-for", address.encode()), (b"content-length", str(size).encode())]
        return {
            "type": "http",
            "method": "POST",
            "path": "/gradio_api/queue/join",
            "client": ("127.0.0.1", 1),
            "headers": headers,
        }

    with_caps = dataclasses.replace(limits.LIMITS, proxy_hops=1)
    previous, limits.LIMITS = limits.LIMITS, with_caps
    try:
        # A client's burst is twice its second (32 MB): a third 15 MB body waits.
        answers = [door.join_refusal(scope("10.9.0.1", 15_000_000), now=50.0) for _ in range(3)]
        assert answers[:2] == [None, None] and answers[2] == (
            429,
            "Too much sent from your address (at most 16 MB a second to the queue): wait a moment.",
        )
        # Everyone's big bodies share 96 MB: four more clients' 15 MB bodies, then none.
        spread = [door.join_refusal(scope(f"10.9.1.{n}", 15_000_000), now=50.0) for n in range(5)]
        assert spread[:4] == [None] * 4 and spread[4] == (
            503,
            "The server is receiving too much large input right now (at most 48 MB a second in "
            "requests over 1 MB, from everyone): try again in a moment.",
        )
        # Small bodies (a parse of a sample) never wait for big ones.
        assert door.join_refusal(scope("10.9.2.1", 20_000), now=50.0) is None
        assert door.join_refusal(scope("10.9.1.9", 15_000_000), now=51.0) is None  # a second on
    finally:
        limits.LIMITS = previous


def test_the_worker_started_ahead_is_ended_with_its_pipes_at_exit():
    """The pool keeps one worker started ahead; at exit (`atexit`) it is ended and its pipes
    closed, so no process outlives the server (or the test run) waiting for its input."""
    pool = workers._Pool()
    worker = pool.take()  # the job's worker, and a spare started ahead
    spare = pool._spare
    assert spare is not None and spare.poll() is None
    pool.close_spare()
    assert spare.poll() is not None
    assert (spare.stdin.closed, spare.stdout.closed, spare.stderr.closed) == (True, True, True)
    assert pool._spare is None
    pool.close_spare()  # nothing left: a second call does nothing
    worker.kill()
    worker.wait()
    for pipe in (worker.stdin, worker.stdout, worker.stderr):
        pipe.close()
