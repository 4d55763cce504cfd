"""Measure the bundled demo model on held-out prompts.

    python scripts/evaluate_demo_model.py [--model samples/demo-model] [--prompts 100]

Prompts come from the build script's generator with another seed; any whose
rendered prompt also occurs in the training corpus is skipped. Each prompt is
sampled with its own seed. Printed figures:

- parse rate: generations that `parse_response` turns into a message with the
  model's response template without an error (target >= 90%);
- tool-call rate: among prompts whose reference answer calls a tool, those
  whose every call names an offered tool with arguments valid against its
  JSON schema (target >= 70%);
- stop rate: generations that end with the EOS token `<|im_end|>` before
  `max_new_tokens`;
- exact-call rate (no target, a sense of how well the model listens): among
  the same prompts, those whose calls equal the reference answer's calls.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jsonschema

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from build_demo_model import CONVERSATIONS, SEED, make_corpus, render  # noqa: E402
from playground.generation import DEFAULT_MODEL_PATH, choose_template, load_model, render_prompt, stream_generation  # noqa: E402

from engine import parse_response

def tool_calls_valid(message: dict, tools: list[dict]) -> bool:
    """True when the message has tool calls and each names an offered tool
    with arguments that validate against that tool's parameter schema."""
    schemas = {tool["function"]["name"]: tool["function"]["parameters"] for tool in tools}
    calls = message.get("tool_calls") or []
    if not calls:
        return False
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or function.get("name") not in schemas:
            return False
        try:
            jsonschema.validate(function.get("arguments"), schemas[function["name"]])
        except jsonschema.ValidationError:
            return False
    return True


def held_out_samples(count: int) -> list[dict]:
    """`count` generator samples whose prompts never occur in the training corpus."""
    seen = {render(sample, generation_prompt=True) for sample in make_corpus(CONVERSATIONS, SEED)}
    held_out = []
    for sample in make_corpus(count * 20, SEED + 1):
        prompt = render(sample, generation_prompt=True)
        if prompt not in seen:
            seen.add(prompt)
            held_out.append(sample)
            if len(held_out) == count:
                return held_out
    raise RuntimeError(f"only {len(held_out)} held-out prompts found")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(DEFAULT_MODEL_PATH))
    parser.add_argument("--prompts", type=int, default=100)
    parser.add_argument("--max-new-tokens", type=int, default=160)
    parser.add_argument("--verbose", action="store_true", help="print every failing generation")
    args = parser.parse_args()

    loaded = load_model(args.model)
    template, reason = choose_template(loaded)
    eos_id = loaded.tokenizer.convert_tokens_to_ids("<|im_end|>")
    samples = held_out_samples(args.prompts)
    parsed = stopped = tool_prompts = tool_ok = exact = 0
    started = time.perf_counter()
    for index, sample in enumerate(samples):
        prompt = render_prompt(loaded, sample["messages"][:-1], sample["tools"], enable_thinking=sample["enable_thinking"])
        pieces = list(stream_generation(loaded, prompt, max_new_tokens=args.max_new_tokens, seed=index))
        text = "".join(piece.text for piece in pieces)
        ids = [token_id for piece in pieces for token_id in piece.ids]
        stopped += ids[-1] == eos_id and len(ids) <= args.max_new_tokens
        try:
            message = parse_response(text, template, prefix=prompt.text, tools=sample["tools"])
            parsed += 1
        except ValueError as error:
            message = None
            if args.verbose:
                print(f"--- parse error {error}\n{prompt.text[-80:]!r}\n{text!r}")
        if sample["needs_tool"]:
            tool_prompts += 1
            valid = message is not None and tool_calls_valid(message, sample["tools"])
            tool_ok += valid
            exact += valid and [c["function"] for c in message["tool_calls"]] == [
                c["function"] for c in sample["messages"][-1]["tool_calls"]
            ]
            if args.verbose and message is not None and not valid:
                print(f"--- bad tool call\n{sample['messages'][-2]['content']!r}\n{text!r}")
    elapsed = time.perf_counter() - started
    total = len(samples)
    print(f"model: {args.model}")
    print(f"template: {reason}")
    print(f"prompts: {total} held out ({tool_prompts} need a tool), {elapsed:.0f} s")
    print(f"parse rate:     {parsed / total:6.1%}  ({parsed}/{total}; target >= 90%)")
    print(f"tool-call rate: {tool_ok / max(tool_prompts, 1):6.1%}  ({tool_ok}/{tool_prompts}; target >= 70%)")
    print(f"stop rate:      {stopped / total:6.1%}  ({stopped}/{total} end with <|im_end|>)")
    print(f"exact-call rate: {exact / max(tool_prompts, 1):5.1%}  ({exact}/{tool_prompts} equal the reference calls)")


if __name__ == "__main__":
    main()
