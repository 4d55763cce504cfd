"""Live generation with the committed demo model (samples/demo-model).

No mocks: every test runs the real model on the CPU, so the file stays small
(short generations, one shared load).
"""

from __future__ import annotations

import json
import shutil
import threading

import pytest
from transformers import AutoModelForCausalLM, AutoTokenizer

from playground.generation import (
    DEFAULT_MODEL_PATH,
    ModelLoadError,
    choose_template,
    load_model,
    render_prompt,
    stream_generation,
)
from engine.samples import load_samples
from engine.template_files import TEMPLATES_DIR
from engine import ResponseParser, parse_response

# The demo model's weather tool, as its samples offer it.
WEATHER = next(s.tools[0] for s in load_samples() if s.family == "demo-model" and s.tools)
MESSAGE_KEYS = {"role", "content", "reasoning_content", "tool_calls"}


@pytest.fixture(scope="module")
def loaded():
    return load_model(DEFAULT_MODEL_PATH)


def _generation_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "generation"]


def test_folder_loads_with_plain_from_pretrained():
    model = AutoModelForCausalLM.from_pretrained(DEFAULT_MODEL_PATH)
    tokenizer = AutoTokenizer.from_pretrained(DEFAULT_MODEL_PATH)
    wrapper = json.loads((TEMPLATES_DIR / "demo-model.json").read_text(encoding="utf-8"))
    assert tokenizer.response_template == wrapper["response_template"]
    assert model.generation_config.eos_token_id == tokenizer.convert_tokens_to_ids("<|im_end|>")
    for marker in ("<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>"):
        assert len(tokenizer(marker, add_special_tokens=False)["input_ids"]) == 1
    size = sum(path.stat().st_size for path in DEFAULT_MODEL_PATH.iterdir())
    assert size < 20_000_000


def test_choose_template_prefers_the_tokenizers_own(loaded):
    template, reason = choose_template(loaded)
    assert template == loaded.tokenizer.response_template
    assert "tokenizer_config.json" in reason


def test_without_its_own_template_the_family_template_is_chosen(tmp_path):
    folder = tmp_path / "no-response-template"
    shutil.copytree(DEFAULT_MODEL_PATH, folder)
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    del config["response_template"]
    config_path.write_text(json.dumps(config), encoding="utf-8")
    template, reason = choose_template(load_model(folder))
    assert template == json.loads((TEMPLATES_DIR / "qwen3.json").read_text(encoding="utf-8"))["response_template"]
    assert "qwen3.json" in reason and "<|im_start|>" in reason


def test_streamed_parse_equals_one_shot_parse(loaded):
    messages = [{"role": "user", "content": "What's the weather in São Paulo and in 東京?"}]
    prompt = render_prompt(loaded, messages, [WEATHER])
    assert prompt.text.endswith("<|im_start|>assistant\n")
    assert loaded.tokenizer.decode(prompt.ids, skip_special_tokens=False) == prompt.text
    parser = ResponseParser(loaded.tokenizer.response_template, prefix=prompt.text, tools=[WEATHER])
    pieces = list(stream_generation(loaded, prompt, max_new_tokens=80, seed=3))
    for piece in pieces:
        assert "\ufffd" not in piece.text
        parser.feed(piece.text)
    streamed, _ = parser.finalize()
    text = "".join(piece.text for piece in pieces)
    ids = [token_id for piece in pieces for token_id in piece.ids]
    assert text == loaded.tokenizer.decode(ids, skip_special_tokens=False)
    assert streamed == parse_response(text, loaded.tokenizer.response_template, prefix=prompt.text, tools=[WEATHER])
    assert streamed["role"] == "assistant"
    assert set(streamed) <= MESSAGE_KEYS
    assert streamed.get("content") or streamed.get("tool_calls")


def test_same_seed_same_generation(loaded):
    prompt = render_prompt(loaded, [{"role": "user", "content": "Hello!"}])
    first = "".join(piece.text for piece in stream_generation(loaded, prompt, max_new_tokens=30, seed=7))
    second = "".join(piece.text for piece in stream_generation(loaded, prompt, max_new_tokens=30, seed=7))
    assert first == second


def test_max_new_tokens_is_honoured(loaded):
    prompt = render_prompt(loaded, [{"role": "user", "content": "Tell me a joke."}])
    pieces = list(stream_generation(loaded, prompt, max_new_tokens=3, temperature=0))
    assert sum(len(piece.ids) for piece in pieces) <= 3


def test_stop_string_ends_the_generation(loaded):
    prompt = render_prompt(loaded, [{"role": "user", "content": "Weather in Paris?"}], [WEATHER])
    text = "".join(piece.text for piece in stream_generation(loaded, prompt, temperature=0, stop_strings=["<tool_call>"]))
    assert text.endswith("<tool_call>")


def test_enable_thinking_prompt_opens_reasoning_in_the_prefix(loaded):
    messages = [{"role": "user", "content": "Weather in Kraków?"}]
    prompt = render_prompt(loaded, messages, [WEATHER], enable_thinking=True)
    assert prompt.text.endswith("<|im_start|>assistant\n<think>\n")
    parser = ResponseParser(loaded.tokenizer.response_template, prefix=prompt.text, tools=[WEATHER])
    assert parser.initial_events
    assert parser.initial_events[0] == {"type": "region_open", "field": "reasoning_content"}
    for piece in stream_generation(loaded, prompt, max_new_tokens=80, seed=1):
        parser.feed(piece.text)
    message, _ = parser.finalize()
    assert message.get("reasoning_content")


def test_cancel_stops_the_generation_thread(loaded):
    prompt = render_prompt(loaded, [{"role": "user", "content": "Search the web for volcanoes."}])
    cancel = threading.Event()
    ids = []
    for piece in stream_generation(loaded, prompt, max_new_tokens=500, temperature=1.5, seed=0, cancel=cancel):
        ids.extend(piece.ids)
        cancel.set()
    # The token in flight when the event was set may still arrive.
    assert len(ids) <= 3
    assert not _generation_threads()


def test_leaving_the_stream_early_stops_the_thread(loaded):
    prompt = render_prompt(loaded, [{"role": "user", "content": "Search the web for volcanoes."}])
    stream = stream_generation(loaded, prompt, max_new_tokens=500, temperature=1.5, seed=0)
    next(stream)
    stream.close()
    assert not _generation_threads()


def test_unknown_hub_id_gives_a_clear_error(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(ModelLoadError, match="Hugging Face Hub"):
        load_model("no-such-org/no-such-model")


def test_missing_folder_gives_a_clear_error(tmp_path):
    with pytest.raises(ModelLoadError, match="no folder"):
        load_model(str(tmp_path / "missing" / "model"))
    with pytest.raises(ModelLoadError, match="no config.json"):
        load_model(tmp_path)


def test_model_without_chat_template_is_refused(tmp_path):
    folder = tmp_path / "no-chat"
    shutil.copytree(DEFAULT_MODEL_PATH, folder)
    (folder / "chat_template.jinja").unlink(missing_ok=True)
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config.pop("chat_template", None)
    config_path.write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ModelLoadError, match="no chat template"):
        load_model(folder)
