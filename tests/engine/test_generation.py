"""Live generation with the committed demo model (samples/demo-model).

No mocks: every test runs the real model on the CPU, so the file stays small
(short generations, one shared load).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import threading

import pytest
import torch
from safetensors import safe_open
from transformers import AutoModelForCausalLM, AutoTokenizer

from engine import ResponseParser, parse_response
from engine.authoring.samples import load_samples
from engine.template_files import TEMPLATES_DIR
from playground.model.background import BackgroundLoad
from playground.model.generation import (
    DEFAULT_MODEL_PATH,
    LOAD_STAGES,
    ModelLoadError,
    choose_template,
    load_model,
    render_prompt,
    stream_generation,
)
from tests.support.paths import ROOT

MiB = 2**20
# The demo model's weather tool, as its samples offer it.
WEATHER = next(s.tools[0] for s in load_samples() if s.family == "demo-model" and s.tools)
# The project's example tools (get_weather, create_event, set_alarm), as the
# other families' samples and the app's Generate live tab offer them.
EXAMPLE_TOOLS = next(s.tools for s in load_samples() if s.id == "qwen3/text-then-tool-calls")
MESSAGE_KEYS = {"role", "content", "reasoning_content", "tool_calls"}
SAMPLED = {"temperature": 0.7, "top_p": 0.95}


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
    for marker in (
        "<|im_start|>",
        "<|im_end|>",
        "<think>",
        "</think>",
        "<tool_call>",
        "</tool_call>",
    ):
        assert len(tokenizer(marker, add_special_tokens=False)["input_ids"]) == 1
    assert model.dtype == torch.float16


def test_weights_are_16_bit_safetensors_under_10_mib():
    weights = DEFAULT_MODEL_PATH / "model.safetensors"
    assert weights.stat().st_size < 10 * MiB
    with safe_open(str(weights), framework="pt") as tensors:
        assert {str(tensors.get_slice(name).get_dtype()) for name in tensors.keys()} == {"F16"}
    assert not list(DEFAULT_MODEL_PATH.glob("*.bin"))


def test_no_tracked_file_reaches_10_mib():
    # A Hugging Face Space refuses a plain git push with a file of 10 MiB or more.
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip(f"not a git checkout: {listed.stderr.strip()}")
    sizes = {
        name: (ROOT / name).stat().st_size
        for name in listed.stdout.split("\0")
        if name and (ROOT / name).is_file()
    }
    assert DEFAULT_MODEL_PATH.relative_to(ROOT).joinpath("model.safetensors").as_posix() in sizes
    assert {name: size for name, size in sizes.items() if size >= 10 * MiB} == {}


def test_the_example_tools_are_tools_the_model_was_trained_on(loaded):
    # Each tool schema line the chat template writes is a single token when
    # the model saw that exact schema in training (see PRE_TOKEN_PATTERN in
    # scripts/build_demo_model.py); an unknown schema splits into many.
    for tool in [*EXAMPLE_TOOLS, WEATHER]:
        line = json.dumps(tool["function"], ensure_ascii=False)
        assert len(loaded.tokenizer(line, add_special_tokens=False)["input_ids"]) == 1, tool[
            "function"
        ]["name"]
    unknown = json.dumps(
        {"name": "get_weather", "description": "Weather.", "parameters": {"type": "object"}}
    )
    assert len(loaded.tokenizer(unknown, add_special_tokens=False)["input_ids"]) > 1


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
    assert (
        template
        == json.loads((TEMPLATES_DIR / "qwen3.json").read_text(encoding="utf-8"))[
            "response_template"
        ]
    )
    assert "qwen3.json" in reason and "<|im_start|>" in reason


# Phi-4-mini-shaped chat templates in the two formats its serving stacks teach: llama.cpp's
# <|tool_call|>{...}<|/tool_call|> per call, and vLLM's functools[...] list.
PHI_TAGGED_CALLS = (
    "{%- for m in messages %}<|{{ m.role }}|>{{ m.content or '' }}{% for c in m.tool_calls or [] %}<|tool_call|>"
    "{{ {'name': c.function.name, 'arguments': c.function.arguments} | tojson }}<|/tool_call|>{% endfor %}<|end|>"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
PHI_FUNCTOOLS = (
    "{%- for m in messages %}<|{{ m.role }}|>{{ m.content or '' }}{% if m.tool_calls %}functools["
    "{% for c in m.tool_calls %}{{ {'name': c.function.name, 'arguments': c.function.arguments} | tojson }}"
    "{% if not loop.last %}, {% endif %}{% endfor %}]{% endif %}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def test_a_model_two_templates_list_gets_the_one_its_chat_template_conforms_with(tmp_path):
    # phi-4-mini and phi-4-mini-tool-call both list Phi-4-mini: the conformance check against the
    # model's chat template decides (in a worker process), and Generate live shows why.
    folder = tmp_path / "no-response-template"
    shutil.copytree(DEFAULT_MODEL_PATH, folder)
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    del config["response_template"]
    config_path.write_text(json.dumps(config), encoding="utf-8")
    for chat_template, name in (
        (PHI_TAGGED_CALLS, "phi-4-mini-tool-call"),
        (PHI_FUNCTOOLS, "phi-4-mini"),
    ):
        phi = dataclasses.replace(
            load_model(folder), name="microsoft/Phi-4-mini-instruct", chosen=[]
        )
        phi.tokenizer.chat_template = chat_template
        template, reason = choose_template(phi)
        assert (
            template
            == json.loads((TEMPLATES_DIR / f"{name}.json").read_text(encoding="utf-8"))[
                "response_template"
            ]
        )
        assert (
            reason
            == f"templates/{name}.json conforms to the chat template (its models list microsoft/Phi-4-mini-instruct)"
        )
        assert choose_template(phi) == (template, reason)  # asked once a load


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
    assert streamed == parse_response(
        text, loaded.tokenizer.response_template, prefix=prompt.text, tools=[WEATHER]
    )
    assert streamed["role"] == "assistant"
    assert set(streamed) <= MESSAGE_KEYS
    assert streamed.get("content") or streamed.get("tool_calls")


def test_same_seed_same_generation(loaded):
    prompt = render_prompt(loaded, [{"role": "user", "content": "Hello!"}])
    first = "".join(
        piece.text for piece in stream_generation(loaded, prompt, max_new_tokens=30, seed=7)
    )
    second = "".join(
        piece.text for piece in stream_generation(loaded, prompt, max_new_tokens=30, seed=7)
    )
    assert first == second


def test_max_new_tokens_is_honoured(loaded):
    prompt = render_prompt(loaded, [{"role": "user", "content": "Tell me a joke."}])
    pieces = list(stream_generation(loaded, prompt, max_new_tokens=3, temperature=0))
    assert sum(len(piece.ids) for piece in pieces) <= 3


def test_stop_string_ends_the_generation(loaded):
    prompt = render_prompt(
        loaded, [{"role": "user", "content": "What's the weather in Berlin?"}], [WEATHER]
    )
    text = "".join(
        piece.text
        for piece in stream_generation(loaded, prompt, temperature=0, stop_strings=["<tool_call>"])
    )
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
    for piece in stream_generation(
        loaded, prompt, max_new_tokens=500, temperature=1.5, seed=0, cancel=cancel
    ):
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


def test_load_reports_each_stage_in_order(loaded):
    reports = []
    again = load_model(DEFAULT_MODEL_PATH, progress=reports.append)
    assert [(r.stage, r.fraction, r.done) for r in reports] == [
        ("Importing torch and transformers", 0.0, False),
        ("Loading the tokenizer", 1 / 3, False),
        ("Loading the weights", 2 / 3, False),
    ]
    assert [r.seconds for r in reports] == sorted(r.seconds for r in reports)
    assert [stage for stage, _ in again.stage_seconds] == list(LOAD_STAGES)
    assert again.load_seconds == pytest.approx(
        sum(seconds for _, seconds in again.stage_seconds), abs=0.05
    )
    assert again.tokenizer.chat_template == loaded.tokenizer.chat_template


def test_background_load_ends_ready_with_the_model():
    pending = BackgroundLoad(DEFAULT_MODEL_PATH)
    first = pending.progress()
    assert first.stage in (*LOAD_STAGES, "Ready")
    loaded = pending.result(timeout=120)
    assert pending.done()
    assert pending.result() is loaded
    final = pending.progress()
    assert (final.stage, final.fraction, final.done, final.error) == ("Ready", 1.0, True, None)
    assert final.seconds == loaded.load_seconds
    assert [stage for stage, _ in loaded.stage_seconds] == list(LOAD_STAGES)


def test_background_load_of_a_missing_folder_fails_with_the_load_error(tmp_path):
    pending = BackgroundLoad(tmp_path / "missing")
    with pytest.raises(ModelLoadError, match="no folder"):
        pending.result(timeout=60)
    with pytest.raises(ModelLoadError, match="no folder"):  # the same error again, not a hang
        pending.result(timeout=0)
    final = pending.progress()
    assert (final.stage, final.fraction, final.done) == ("Failed", 1.0, True)
    assert final.error.startswith(f"no folder {str(tmp_path / 'missing')!r}")


# -- constrained generation -------------------------------------------------------------------


def _constrained(loaded, tools, tool_choice, parallel=True, seed=0, max_new_tokens=120):
    from playground.model.generation import constrained_processor

    template, _ = choose_template(loaded)
    prompt = render_prompt(
        loaded, [{"role": "user", "content": "What's the weather in Oslo?"}], tools
    )
    processor, derived = constrained_processor(
        loaded, template, tools, prompt, tool_choice=tool_choice, parallel_tool_calls=parallel
    )
    assert processor is not None, derived.unconstrainable
    pieces = stream_generation(
        loaded,
        prompt,
        max_new_tokens=max_new_tokens,
        seed=seed,
        logits_processors=[processor],
        **SAMPLED,
    )
    text = "".join(piece.text for piece in pieces)
    return parse_response(text, template, prefix=prompt.text, tools=tools), text


def test_constrained_generation_parses_and_honours_the_tool_choice(loaded):
    pytest.importorskip("llguidance")
    import jsonschema

    schemas = {tool["function"]["name"]: tool["function"]["parameters"] for tool in EXAMPLE_TOOLS}
    for seed in range(3):
        message, text = _constrained(loaded, EXAMPLE_TOOLS, "required", parallel=False, seed=seed)
        assert len(message["tool_calls"]) == 1, text
        call = message["tool_calls"][0]["function"]
        jsonschema.validate(call["arguments"], schemas[call["name"]])
        message, text = _constrained(loaded, EXAMPLE_TOOLS, "set_alarm", seed=seed)
        assert {c["function"]["name"] for c in message["tool_calls"]} == {"set_alarm"}, text
        message, text = _constrained(loaded, EXAMPLE_TOOLS, "none", seed=seed)
        assert "tool_calls" not in message and "<tool_call>" not in text, text


def test_a_request_no_grammar_honours_gives_no_processor_and_says_why(loaded):
    from playground.model.generation import constrained_processor

    template, _ = choose_template(loaded)
    prompt = render_prompt(loaded, [{"role": "user", "content": "Hi"}], None)
    processor, derived = constrained_processor(
        loaded, template, None, prompt, tool_choice="required"
    )
    assert processor is None
    assert derived.unconstrainable == [
        "tool_choice asks for a call, but no tool or no tool-call field exists"
    ]
