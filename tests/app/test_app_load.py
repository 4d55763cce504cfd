"""The hosted playground under load: app.py on loopback, visited by several sessions at once.

Behaviour under load, not speed (scripts/bench_load.py prints the figures): no request
fails or gets another session's answer, a second identical round does not grow the
server's memory beyond a generous bound, a closed page's memory is reused, a session
runs one heavy job at a time, Stop ends a model load, and a hub id that the Hub does not
answer fails with a message naming the id and the cause while parsing goes on.
Every round lasts a fixed time, so the file stays well under a minute.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.authoring.samples import load_samples
from playground.catalog import template_text_of as template_source
from tests.support.load_sessions import PageVisitor, api_client, server_rss_mb

gradio_client = pytest.importorskip("gradio_client")

SESSIONS = 6
ROUND_SECONDS = 5.0
# Memory a second identical round may add to the server (MB): far above what it does, far
# below what keeping every round's parses would cost.
ROUND_GROWTH_MB = 120
CASES = [s for s in load_samples() if s.expected is not None and not s.tools][:SESSIONS]


def _session(url: str, index: int, seconds: float) -> tuple[int, list[str]]:
    """Parse, switch sample and replay in a loop for `seconds`; the first session also generates.

    Returns (requests made, what went wrong).
    """
    client = api_client(url, f"10.1.0.{index + 1}")  # each session a visitor of its own address
    sample = CASES[index % len(CASES)]
    template_text = template_source(sample.template)
    problems, requests = [], 0
    deadline = time.monotonic() + seconds
    if index == 0:
        updates = list(
            client.submit(
                "What's the weather in Paris?", max_new_tokens=12, seed=1, api_name="/generate"
            )
        )
        requests += 1
        if not updates or not updates[-1]["finished"] or updates[-1]["error"]:
            problems.append(f"generate: {updates[-1] if updates else 'no update'}")
    while time.monotonic() < deadline:
        parsed = client.predict(
            template_text, sample.prefix, sample.generation, "", api_name="/parse"
        )
        switched = client.predict(sample.id, api_name="/load_sample")
        replayed = client.predict(
            template_text, sample.prefix, sample.generation, "", "chars:1", api_name="/replay"
        )
        requests += 3
        for what, result in (("parse", parsed), ("load_sample", switched), ("replay", replayed)):
            if result.get("message") != sample.expected:
                problems.append(
                    f"{what} {sample.id}: {result.get('error') or result.get('message')}"
                )
    return requests, problems


def _round(url: str) -> tuple[int, list[str]]:
    with ThreadPoolExecutor(max_workers=SESSIONS) as pool:
        results = list(
            pool.map(
                lambda index: _session(url, index, ROUND_SECONDS), range(SESSIONS), timeout=120
            )
        )
    return sum(r for r, _ in results), [p for _, found in results for p in found]


def test_two_identical_rounds_fail_nothing_and_the_second_does_not_grow_memory(loaded_app):
    process, url = loaded_app
    first_requests, first_problems = _round(url)
    after_first = server_rss_mb(process.pid)
    second_requests, second_problems = _round(url)
    after_second = server_rss_mb(process.pid)
    assert first_problems == [] and second_problems == []
    assert first_requests > SESSIONS and second_requests > SESSIONS
    assert after_second - after_first < ROUND_GROWTH_MB, (after_first, after_second)
    assert process.poll() is None


def test_closed_pages_give_their_memory_back_for_the_next_ones(loaded_app):
    """Each page replays a 5,000-character paste a character at a time, then closes; later
    pages reuse what the earlier ones held instead of adding to it."""
    process, url = loaded_app
    sample = CASES[0]
    generation = (sample.generation * (5_000 // len(sample.generation) + 1))[:5_000]
    values = {
        "generation": generation,
        "prefix": sample.prefix,
        "template-editor": template_source(sample.template),
        "chunking": "chars",
        "chunk-size": 1,
        "speed": 0,
    }
    rss = []
    for _ in range(3):
        page = PageVisitor(url)
        outputs = page.run("page_replay_play", values)
        page.close()
        assert outputs and process.poll() is None
        time.sleep(0.5)  # the server runs the page's unload listener
        rss.append(server_rss_mb(process.pid))
    assert rss[-1] - rss[0] < ROUND_GROWTH_MB / 2, rss


def _status(outputs: list[dict]) -> str:
    """The status line's HTML in the last update of a listener."""
    return outputs[-1]["status"]


def test_a_session_runs_one_replay_at_a_time_and_stop_ends_it(loaded_app):
    _, url = loaded_app
    page = PageVisitor(url)
    try:
        playing = page.start(
            "page_replay_play", {"speed": 5}
        )  # the default sample, a few chunks a second
        time.sleep(1.5)
        refused = page.run("page_replay_step")
        assert (
            "already running a replay (at most 1 at once, PLAYGROUND_LIMITS session_jobs): "
            "press Stop or wait for it to end." in _status(refused)
        )
        page.run("page_request_stop")
        stopped = playing.result(timeout=30)
        assert "■ Stopped at chunk" in _status(stopped)
        stepped = page.run("page_replay_step")  # the replay ended: the session may run the next one
        assert "PLAYGROUND_LIMITS session_jobs" not in _status(stepped)
    finally:
        page.close()


def test_stop_ends_a_model_load_and_parsing_goes_on_meanwhile(loaded_app):
    _, url = loaded_app
    page, other = PageVisitor(url), api_client(url)
    sample = CASES[1]
    try:
        loading = page.start("page_generate", {"model-name": "response-templates-tests/slow-model"})
        time.sleep(0.5)
        parsed = other.predict(
            template_source(sample.template),
            sample.prefix,
            sample.generation,
            "",
            api_name="/parse",
        )
        page.run("page_request_stop")
        outputs = loading.result(timeout=30)
        assert (
            "■ Stopped waiting for the model; its load is abandoned unless someone else waits for it."
            in _status(outputs)
        )
        assert parsed["message"] == sample.expected
    finally:
        page.close()


def test_a_hub_id_the_hub_does_not_answer_fails_with_its_name_and_cause(loaded_app):
    _, url = loaded_app
    client = api_client(url)
    sample = CASES[2]
    outcome = {}
    loading = threading.Thread(
        target=lambda: outcome.update(
            list(client.submit("Hi", model_name="Qwen/Qwen3-0.6B", api_name="/generate"))[-1]
        )
    )
    loading.start()
    parsed = api_client(url).predict(
        template_source(sample.template), sample.prefix, sample.generation, "", api_name="/parse"
    )
    loading.join(timeout=60)
    assert parsed["message"] == sample.expected
    assert outcome["finished"] is True
    assert (
        outcome["error"]
        == "could not load 'Qwen/Qwen3-0.6B' from the Hugging Face Hub (no answer within 2 s)."
    )
