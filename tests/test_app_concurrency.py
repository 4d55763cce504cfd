"""Twenty concurrent sessions against the running app over loopback, each its own sample."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.samples import load_samples
from tests.test_app_browser import start_app

gradio_client = pytest.importorskip("gradio_client")
SESSIONS = 20
# load_sample's outputs as the API returns them (gr.State outputs are left out): sample id,
# template, prefix, generation, tools, template choice, then status, map, log,
# initial events, message JSON.
STATUS_OUTPUT, MESSAGE_OUTPUT = 6, 10


@pytest.fixture(scope="module")
def app_url():
    process, url = start_app()
    yield url
    process.terminate()
    process.wait(timeout=10)


def test_twenty_sessions_each_get_their_own_result(app_url):
    cases = [s for s in load_samples() if s.expected is not None][:SESSIONS]
    assert len(cases) == SESSIONS

    def session(sample):
        client = gradio_client.Client(app_url, verbose=False)
        outputs = client.predict(sample.id, False, api_name="/load_sample")
        return sample, outputs

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=SESSIONS) as pool:
        results = list(pool.map(session, cases, timeout=180))
    elapsed = time.perf_counter() - started
    assert elapsed < 180
    for sample, outputs in results:
        assert outputs[0] == sample.id
        assert outputs[3] == sample.generation
        assert json.loads(outputs[MESSAGE_OUTPUT]) == sample.expected, sample.id
        assert "Parsed" in outputs[STATUS_OUTPUT]
