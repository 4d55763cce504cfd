"""A hub id when the Hugging Face Hub cannot be reached, or does not answer: a clear error, and no long retry loop.

Loopback sockets stand in for the Hub (a closed port; a port that accepts and never
answers), so these tests behave the same with or without a network. How long the
failure takes is reported by scripts/bench_load.py; here the cause must be the one named.
"""

from __future__ import annotations

import socket
import threading

import huggingface_hub.constants
import pytest

from engine.chat_templates.render import hub_reachable
from playground.model import hub
from playground.model.generation import ModelLoadError, load_model
from playground.server import limits


@pytest.fixture()
def silent_hub():
    """An endpoint that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted = []
    threading.Thread(
        target=lambda: [accepted.append(server.accept()) for _ in range(8)], daemon=True
    ).start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    for connection, _ in accepted:
        connection.close()
    server.close()


@pytest.fixture()
def quick_limits(monkeypatch):
    monkeypatch.setattr(limits, "LIMITS", limits.Limits(hub_seconds=1.0))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)


def test_an_unreachable_hub_names_the_id_and_the_cause(monkeypatch, quick_limits):
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", "http://127.0.0.1:9")
    with pytest.raises(ModelLoadError) as raised:
        load_model("response-templates-tests/no-such-model")
    message = str(raised.value)
    assert message.startswith(
        "could not load 'response-templates-tests/no-such-model': the Hugging Face Hub is not reachable "
        "(cannot connect to 127.0.0.1:9 ("
    )
    assert "is not in the local cache" in message and "samples/demo-model" in message


def test_a_hub_that_does_not_answer_gives_up_after_hub_seconds(
    monkeypatch, quick_limits, silent_hub
):
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", silent_hub)
    with pytest.raises(ModelLoadError) as raised:
        load_model("response-templates-tests/no-such-model")
    assert str(raised.value) == (
        "could not load 'response-templates-tests/no-such-model' from the Hugging Face Hub (no answer within 1 s)."
    )


def test_offline_mode_is_named_as_the_cause(monkeypatch):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(
        hub.HubError,
        match=r"^could not load 'Qwen/Qwen3-0\.6B': the Hugging Face Hub is not reachable \(HF_HUB_OFFLINE is set\)",
    ):
        hub.check_hub_id("Qwen/Qwen3-0.6B")


def test_a_hub_whose_name_cannot_be_looked_up_is_named_in_words(monkeypatch):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", "https://hub.invalid")
    assert hub_reachable(2) == (False, "the name hub.invalid cannot be looked up")
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", "http://127.0.0.1:9")
    assert hub_reachable(2) == (False, "cannot connect to 127.0.0.1:9 (Connection refused)")
