"""Measure the bundled demo model as a visitor meets it, on held-out prompts.

    python scripts/evaluate_demo_model.py [--model samples/demo-model] [--prompts 20] [--verbose]

Prompts come from `scripts/demo_corpus.py`'s `evaluation_samples`: values
the training corpus never uses (cities, topics, titles, chat questions), two
tools offered each, thinking on for every other prompt; the script also
checks that no prompt occurs in the training corpus. Each prompt is
generated twice, sampled (temperature 0.7, top_p 0.95, seeded with the
prompt's index) and greedy, and parsed with the model's response template.

Printed figures, sampled and greedy side by side (targets in brackets):

- parse: generations that `parse_response` turns into a message without an
  error (sampled: at least 19 of 20);
- median new tokens: tokens generated, the end-of-turn token included
  (sampled: at least 40);
- reasoning: thinking prompts whose message has reasoning_content
  (sampled: at least 8 of 10);
- valid arguments: tool calls (each `<tool_call>` the model opened) whose
  parsed call names an offered tool with arguments valid against that
  tool's JSON schema, checked with `jsonschema` (sampled: at least 95%);
- for information: stop (generation ended with `<|im_end|>`), call prompts
  answered with valid calls, calls equal to the reference, prompts that
  need no tool but got a call;
- weights: size and dtypes of model.safetensors (16 bits, under 10 MiB);
- load: seconds `load_model` takes in a fresh Python process, as an app
  meets it at startup (at most 3 s), split into its stages (importing torch
  and transformers, the tokenizer, the weights; the last two include
  importing the modules they need), and the time to the first token of the
  first generation after that; then the seconds a load takes once the
  modules are imported (the model's own cost: reading its files).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import jsonschema
from safetensors import safe_open

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from build_demo_model import CONVERSATIONS, SEED, render  # noqa: E402
from demo_corpus import evaluation_samples, make_corpus  # noqa: E402

from engine import parse_response  # noqa: E402
from playground.model.generation import (  # noqa: E402
    DEFAULT_MODEL_PATH,
    choose_template,
    load_model,
    render_prompt,
    stream_generation,
)

EVALUATION_SEED = SEED + 1
SAMPLING = {"temperature": 0.7, "top_p": 0.95}
MiB = 2**20


def valid_call_count(message: dict, tools: list[dict]) -> int:
    """How many of the message's tool calls name an offered tool and carry
    arguments that validate against its parameters schema."""
    schemas = {tool["function"]["name"]: tool["function"]["parameters"] for tool in tools}
    valid = 0
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or function.get("name") not in schemas:
            continue
        try:
            jsonschema.validate(function.get("arguments"), schemas[function["name"]])
        except jsonschema.ValidationError:
            continue
        valid += 1
    return valid


@dataclass
class Tally:
    """Counts for one decoding mode."""

    generations: int = 0
    parsed: int = 0
    stopped: int = 0
    new_tokens: list[int] = field(default_factory=list)
    thinking: int = 0
    reasoned: int = 0
    calls_opened: int = 0
    calls_valid: int = 0
    call_prompts: int = 0
    call_prompts_valid: int = 0
    call_prompts_exact: int = 0
    no_tool_prompts: int = 0
    no_tool_prompts_calling: int = 0
    failures: list[str] = field(default_factory=list)


def evaluate(loaded, template, samples: list[dict], *, sampled: bool, max_new_tokens: int) -> Tally:
    """Generate once per sample (sampled or greedy) and count what came out."""
    tally = Tally()
    eos_id = loaded.tokenizer.convert_tokens_to_ids("<|im_end|>")
    for index, sample in enumerate(samples):
        prompt = render_prompt(
            loaded,
            sample["messages"][:-1],
            sample["tools"],
            enable_thinking=sample["enable_thinking"],
        )
        settings = {**SAMPLING, "seed": index} if sampled else {"temperature": 0}
        pieces = list(stream_generation(loaded, prompt, max_new_tokens=max_new_tokens, **settings))
        text = "".join(piece.text for piece in pieces)
        ids = [token_id for piece in pieces for token_id in piece.ids]
        tally.generations += 1
        tally.new_tokens.append(len(ids))
        tally.stopped += bool(ids) and ids[-1] == eos_id
        tally.calls_opened += text.count("<tool_call>")
        try:
            message = parse_response(text, template, prefix=prompt.text, tools=sample["tools"])
            tally.parsed += 1
        except ValueError as error:
            message = {}
            tally.failures.append(
                f"parse error: {error}\n  prompt ends {prompt.text[-70:]!r}\n  output {text!r}"
            )
        valid = valid_call_count(message, sample["tools"])
        tally.calls_valid += valid
        calls = message.get("tool_calls") or []
        if message and valid < len(calls):
            tally.failures.append(
                f"invalid call\n  prompt ends {prompt.text[-70:]!r}\n  output {text!r}"
            )
        if sample["enable_thinking"]:
            tally.thinking += 1
            tally.reasoned += bool(message.get("reasoning_content"))
        expected = sample["messages"][-1].get("tool_calls")
        if expected:
            tally.call_prompts += 1
            tally.call_prompts_valid += bool(calls) and valid == len(calls)
            tally.call_prompts_exact += [c["function"] for c in calls] == [
                c["function"] for c in expected
            ]
        else:
            tally.no_tool_prompts += 1
            tally.no_tool_prompts_calling += "<tool_call>" in text
    return tally


def weights_summary(folder: Path) -> tuple[float, str]:
    """(size of model.safetensors in MiB, its tensor dtypes joined by '/')."""
    path = folder / "model.safetensors"
    with safe_open(str(path), framework="pt") as weights:
        dtypes = sorted({str(weights.get_slice(name).get_dtype()) for name in weights.keys()})
    return path.stat().st_size / MiB, "/".join(dtypes)


# Run in a fresh interpreter: the first load pays for importing torch and
# transformers, as in an app that just started.
_FRESH_LOAD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from playground.model.generation import load_model, render_prompt, stream_generation
loaded = load_model(sys.argv[2])
prompt = render_prompt(loaded, [{"role": "user", "content": "Hello!"}])
started = time.perf_counter()
next(iter(stream_generation(loaded, prompt, max_new_tokens=1, temperature=0)))
first_token = time.perf_counter() - started
print(json.dumps({"load": loaded.load_seconds, "stages": loaded.stage_seconds, "first_token": first_token}))
"""


def fresh_load_seconds(model: str) -> dict:
    """Load `model` in a new Python process: {"load": s, "stages": [[stage, s], ...], "first_token": s}."""
    done = subprocess.run(
        [sys.executable, "-c", _FRESH_LOAD, str(ROOT), model],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _ratio(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default=str(DEFAULT_MODEL_PATH))
    parser.add_argument("--prompts", type=int, default=20)
    parser.add_argument("--max-new-tokens", type=int, default=200, help="the app's default")
    parser.add_argument("--verbose", action="store_true", help="print every failing generation")
    args = parser.parse_args()

    samples = evaluation_samples(args.prompts, EVALUATION_SEED)
    training_prompts = {
        render(sample, generation_prompt=True) for sample in make_corpus(CONVERSATIONS, SEED)
    }
    overlap = sum(render(sample, generation_prompt=True) in training_prompts for sample in samples)
    if overlap:
        raise SystemExit(f"{overlap} evaluation prompts occur in the training corpus")

    load = fresh_load_seconds(args.model)
    loaded = load_model(args.model)
    template, reason = choose_template(loaded)

    started = time.perf_counter()
    sampled = evaluate(loaded, template, samples, sampled=True, max_new_tokens=args.max_new_tokens)
    greedy = evaluate(loaded, template, samples, sampled=False, max_new_tokens=args.max_new_tokens)
    elapsed = time.perf_counter() - started
    size, dtypes = weights_summary(Path(args.model))
    kinds = ", ".join(
        f"{kind} {sum(s['kind'] == kind for s in samples)}"
        for kind in dict.fromkeys(s["kind"] for s in samples)
    )

    print(f"model: {args.model}")
    print(f"template: {reason}")
    print(
        f"prompts: {len(samples)} held out ({kinds}; thinking on for {sampled.thinking}), "
        f"max_new_tokens {args.max_new_tokens}, {elapsed:.0f} s"
    )
    rows = [
        ("parse", lambda t: _ratio(t.parsed, t.generations), ">= 19/20"),
        ("median new tokens", lambda t: f"{statistics.median(t.new_tokens):g}", ">= 40"),
        ("reasoning (thinking runs)", lambda t: _ratio(t.reasoned, t.thinking), ">= 8/10"),
        ("valid arguments (calls)", lambda t: _ratio(t.calls_valid, t.calls_opened), ">= 95%"),
        ("stop with <|im_end|>", lambda t: _ratio(t.stopped, t.generations), ""),
        ("call prompts, valid calls", lambda t: _ratio(t.call_prompts_valid, t.call_prompts), ""),
        ("call prompts, exact calls", lambda t: _ratio(t.call_prompts_exact, t.call_prompts), ""),
        (
            "no-tool prompts with a call",
            lambda t: _ratio(t.no_tool_prompts_calling, t.no_tool_prompts),
            "",
        ),
    ]
    sampling = f"T={SAMPLING['temperature']} top_p={SAMPLING['top_p']}"
    print(f"{'':30} {'sampled (' + sampling + ')':>28} {'greedy':>16}   target (sampled)")
    for label, show, target in rows:
        print(f"{label:30} {show(sampled):>28} {show(greedy):>16}   {target}")
    print(f"{'weights':30} {size:.2f} MiB {dtypes} (target: 16 bits, < 10 MiB)")
    stages = ", ".join(f"{stage.lower()} {seconds:.2f} s" for stage, seconds in load["stages"])
    print(
        f"{'load (fresh process)':30} {load['load']:.2f} s (target <= 3 s): {stages}; "
        f"then first token {load['first_token']:.2f} s"
    )
    print(f"{'load (modules imported)':30} {loaded.load_seconds:.2f} s")
    if args.verbose:
        for mode, tally in (("sampled", sampled), ("greedy", greedy)):
            for failure in tally.failures:
                print(f"--- {mode} {failure}")


if __name__ == "__main__":
    main()
