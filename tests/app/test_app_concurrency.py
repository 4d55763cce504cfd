"""Twenty concurrent sessions against the running app over loopback, each its own sample."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.authoring.samples import load_samples

gradio_client = pytest.importorskip("gradio_client")
SESSIONS = 20


def test_twenty_sessions_each_get_their_own_result(app_url):
    cases = [s for s in load_samples() if s.expected is not None][:SESSIONS]
    assert len(cases) == SESSIONS

    def session(sample):
        # Each session a visitor of its own address (the server shares its slots out per address).
        address = f"10.3.0.{cases.index(sample) + 1}"
        client = gradio_client.Client(app_url, verbose=False, headers={"X-Forwarded-For": address})
        outputs = client.predict(sample.id, api_name="/load_sample")
        return sample, outputs

    with ThreadPoolExecutor(max_workers=SESSIONS) as pool:
        results = list(pool.map(session, cases, timeout=180))
    for sample, outputs in results:
        assert outputs["sample_id"] == sample.id
        assert outputs["generation"] == sample.generation
        assert outputs["message"] == sample.expected, sample.id
        assert "Parsed" in outputs["status"]
