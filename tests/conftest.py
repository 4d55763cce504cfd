"""Shared fixtures for the engine's unit tests.

`small_tokenizer` is a real Hugging Face fast tokenizer, trained here on a few
sentences (nothing is downloaded), with the chat special tokens that the
templates under test use as delimiters.
"""

import os

import pytest
from hypothesis import settings

# CI (`.ci/run` sets CI) runs the property tests with a fixed seed and no time limit per
# example, so a landing never depends on luck or on the machine's load; local runs explore new
# examples each time.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


try:
    from xdist.scheduler import LoadScopeScheduling
except ImportError:  # pytest-xdist is not installed: the suite runs in one process
    pass
else:

    class AppTestsTogether(LoadScopeScheduling):
        """pytest-xdist's `--dist loadscope` (as `scripts/test.sh` runs the suite), with every app
        test in one work unit, in the order written, and each engine module in one unit.

        The app's modules start servers and Chromium and measure their memory and latency; run
        side by side they would load each other, so they run one after another, as without
        xdist, while the engine's modules (pure CPU) fill the other workers. A module in one unit
        builds its module-scoped fixtures once.
        """

        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return "tests/app" if module.startswith("tests/app/") else module

    def pytest_xdist_make_scheduler(config, log):
        """`AppTestsTogether` for `--dist loadscope`; xdist's own scheduler otherwise."""
        if config.getvalue("dist") == "loadscope":
            return AppTestsTogether(config, log)
        return None


SPECIAL_TOKENS = [
    "<|im_start|>",
    "<|im_end|>",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
]

TRAINING_SENTENCES = [
    "I should greet the user.",
    "Hello! How can I help you today?",
    'The weather in Paris is sunny. {"name": "get_weather", "arguments": {"city": "Paris"}}',
    "Let me check the time in London and Tokyo.",
    "user assistant system: think about the answer, then call a tool.",
    "0123456789 {}[]():,\"'=<>/|_-.!?\n",
]


@pytest.fixture(scope="session")
def small_tokenizer():
    """A byte-level BPE `PreTrainedTokenizerFast` with the chat special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(TRAINING_SENTENCES, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
        additional_special_tokens=SPECIAL_TOKENS[2:],
    )


@pytest.fixture(scope="session")
def loaded_app():
    """app.py on loopback for the load and fuzz tests: (process, base URL).

    Its Hugging Face Hub is a loopback port that accepts and never answers (`hub_seconds` 2),
    so a hub id fails the same way with or without a network, and quickly.
    """
    pytest.importorskip("gradio_client")
    from tests.support.app_server import start_app
    from tests.support.load_sessions import SilentEndpoint

    hub = SilentEndpoint()
    process, url = start_app(
        {"HF_ENDPOINT": hub.url, "HF_HUB_OFFLINE": "0", "PLAYGROUND_LIMITS": '{"hub_seconds": 2}'}
    )
    yield process, url
    process.terminate()
    try:
        process.wait(timeout=10)
    except Exception:
        process.kill()
        process.wait()
    hub.close()
