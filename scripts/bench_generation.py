"""Time the demo model on this machine and the parser's share of live parsing.

    python scripts/bench_generation.py [--model samples/demo-model] [--runs 8]

Prints the load time, generation speed in tokens per second, and the share
of wall-clock time per token spent inside the streaming parser (each
generated piece is fed to a ResponseParser as it arrives; target < 2%).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playground.generation import DEFAULT_MODEL_PATH, choose_template, load_model, render_prompt, stream_generation  # noqa: E402

from engine import ResponseParser
from engine.samples import load_samples  # noqa: E402

# The demo model's weather tool, as its samples offer it.
WEATHER = next(s.tools[0] for s in load_samples() if s.family == "demo-model" and s.tools)
CONVERSATIONS = [
    ([{"role": "user", "content": "What's the weather in São Paulo and in 東京?"}], True),
    ([{"role": "user", "content": "Give me a 3-day forecast for Zürich in celsius."}], False),
    ([{"role": "user", "content": "Hello!"}], True),
    ([{"role": "user", "content": "Weather in Kraków?"}], False),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(DEFAULT_MODEL_PATH))
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=128)
    args = parser.parse_args()

    loaded = load_model(args.model)
    template, reason = choose_template(loaded)
    print(f"model: {args.model} ({sum(p.numel() for p in loaded.model.parameters()) / 1e6:.2f} M parameters)")
    print(f"template: {reason}")
    print(f"parser: {ResponseParser.__module__}.ResponseParser")
    print(f"load time: {loaded.load_seconds:.2f} s")

    # One warm-up generation so first-call costs don't count.
    warm = render_prompt(loaded, CONVERSATIONS[0][0], [WEATHER])
    list(stream_generation(loaded, warm, max_new_tokens=8, seed=0))

    tokens = pieces = 0
    total_seconds = parser_seconds = 0.0
    for run in range(args.runs):
        messages, thinking = CONVERSATIONS[run % len(CONVERSATIONS)]
        prompt = render_prompt(loaded, messages, [WEATHER], enable_thinking=thinking)
        started = time.perf_counter()
        response_parser = ResponseParser(template, prefix=prompt.text, tools=[WEATHER])
        parser_seconds += time.perf_counter() - started
        for piece in stream_generation(loaded, prompt, max_new_tokens=args.max_new_tokens, seed=run):
            before = time.perf_counter()
            response_parser.feed(piece.text)
            parser_seconds += time.perf_counter() - before
            tokens += len(piece.ids)
            pieces += 1
        before = time.perf_counter()
        response_parser.finalize()
        parser_seconds += time.perf_counter() - before
        total_seconds += time.perf_counter() - started
    print(f"generated: {tokens} tokens in {pieces} pieces over {args.runs} runs, {total_seconds:.2f} s")
    print(f"speed: {tokens / total_seconds:.1f} tokens/s ({1000 * total_seconds / tokens:.2f} ms per token)")
    print(f"parser: {1e6 * parser_seconds / tokens:.1f} us per token, {parser_seconds / total_seconds:.2%} of the time per token (target < 2%)")


if __name__ == "__main__":
    main()
