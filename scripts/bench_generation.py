"""Time the demo model on this machine and the parser's share of live parsing.

    python scripts/bench_generation.py [--model samples/demo-model] [--runs 8]

Prints the load time (this process's first load, so it includes importing
torch and transformers, as in an app that just started) with its stages,
the generation speed in tokens per second, and the share of wall-clock time
per token spent inside the streaming parser (each generated piece is fed to
a ResponseParser as it arrives; target < 2%). Generations are sampled
(temperature 0.7, top_p 0.95) with the project's example tools, the ones
the app's Generate live tab offers.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import ResponseParser  # noqa: E402
from engine.authoring.samples import load_samples  # noqa: E402
from playground.model.generation import (  # noqa: E402
    DEFAULT_MODEL_PATH,
    choose_template,
    load_model,
    render_prompt,
    stream_generation,
)

# The project's example tools (get_weather, create_event, set_alarm).
TOOLS = next(s.tools for s in load_samples() if s.id == "qwen3/text-then-tool-calls")
CONVERSATIONS = [
    ([{"role": "user", "content": "What's the weather in São Paulo and in 東京?"}], True),
    ([{"role": "user", "content": "Give me a 3-day forecast for Zürich."}], False),
    ([{"role": "user", "content": "Hello!"}], True),
    ([{"role": "user", "content": "Wake me up at 06:45."}], False),
]
SAMPLING = {"temperature": 0.7, "top_p": 0.95}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default=str(DEFAULT_MODEL_PATH))
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=200)
    args = parser.parse_args()

    loaded = load_model(args.model)
    template, reason = choose_template(loaded)
    print(
        f"model: {args.model} ({sum(p.numel() for p in loaded.model.parameters()) / 1e6:.2f} M parameters)"
    )
    print(f"template: {reason}")
    print(f"parser: {ResponseParser.__module__}.ResponseParser")
    stages = ", ".join(
        f"{stage.lower()} {seconds:.2f} s" for stage, seconds in loaded.stage_seconds
    )
    print(f"load time: {loaded.load_seconds:.2f} s ({stages})")

    # One warm-up generation so first-call costs don't count.
    warm = render_prompt(loaded, CONVERSATIONS[0][0], TOOLS)
    started = time.perf_counter()
    list(stream_generation(loaded, warm, max_new_tokens=8, seed=0))
    print(f"first generation (8 tokens): {time.perf_counter() - started:.2f} s")

    tokens = pieces = 0
    total_seconds = parser_seconds = 0.0
    for run in range(args.runs):
        messages, thinking = CONVERSATIONS[run % len(CONVERSATIONS)]
        prompt = render_prompt(loaded, messages, TOOLS, enable_thinking=thinking)
        started = time.perf_counter()
        response_parser = ResponseParser(template, prefix=prompt.text, tools=TOOLS)
        parser_seconds += time.perf_counter() - started
        for piece in stream_generation(
            loaded, prompt, max_new_tokens=args.max_new_tokens, seed=run, **SAMPLING
        ):
            before = time.perf_counter()
            response_parser.feed(piece.text)
            parser_seconds += time.perf_counter() - before
            tokens += len(piece.ids)
            pieces += 1
        before = time.perf_counter()
        response_parser.finalize()
        parser_seconds += time.perf_counter() - before
        total_seconds += time.perf_counter() - started
    print(
        f"generated: {tokens} tokens in {pieces} pieces over {args.runs} runs, {total_seconds:.2f} s"
    )
    print(
        f"speed: {tokens / total_seconds:.1f} tokens/s ({1000 * total_seconds / tokens:.2f} ms per token)"
    )
    print(
        f"parser: {1e6 * parser_seconds / tokens:.1f} us per token, {parser_seconds / total_seconds:.2%} of the time per token (target < 2%)"
    )


if __name__ == "__main__":
    main()
