"""Benchmark the playground's handlers (no browser).

    python scripts/bench_app.py [--size 100000] [--tokens 200]

Prints:
- the time to parse and render a pasted generation of about `--size` characters
  (the Parse button's handler; target < 1 s for 100 KB), and
- the page update rate during a demo-model generation (target <= 10 updates a second),
  when samples/demo-model exists.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.template_files import load_template_file  # noqa: E402
from playground import handlers, live  # noqa: E402
from playground.catalog import DEFAULT_SAMPLE, samples_by_id, template_text_of  # noqa: E402
from playground.chunking import DEMO_MODEL_PATH  # noqa: E402
from playground.session import Session  # noqa: E402


def pasted_generation(size: int, template_name: str = "qwen3") -> tuple[str, str, str]:
    """(template text, prefix, generation) of about `size` characters: reasoning, text, tool calls."""
    sample = samples_by_id()[DEFAULT_SAMPLE]
    template = load_template_file(template_name).response_template
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>\n'
    words = "The weather in Paris is mild today, with a light breeze from the west. "
    reasoning = "<think>\n" + words * (size // (4 * len(words))) + "\n</think>\n\n"
    body = words * (size // (4 * len(words)))
    calls = call * max(1, (size - len(reasoning) - len(body)) // len(call))
    return template_text_of(template), sample.prefix, reasoning + body + "\n" + calls + "<|im_end|>"


def bench_paste(size: int, template_name: str, repeats: int = 3) -> None:
    template_text, prefix, generation = pasted_generation(size, template_name)
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        session = Session()
        out = handlers.parse(template_text, prefix, generation, "", False, session)
        timings.append(time.perf_counter() - started)
    view = session.view
    assert view is not None and view.error is None, out["status"]
    calls = len(view.message.get("tool_calls", []))
    html_size = sum(len(out[name]) for name in ("status", "region_map", "event_log"))
    print(
        f"paste+parse+render, template {template_name}, {len(generation):,} characters ({calls} tool calls, {len(view.events)} events, "
        f"{html_size / 1e3:.0f} KB of HTML): best {min(timings) * 1000:.0f} ms, "
        f"worst {max(timings) * 1000:.0f} ms (target < 1000 ms)"
    )


def bench_live(tokens: int) -> None:
    if not DEMO_MODEL_PATH.joinpath("config.json").exists():
        print("live generation: skipped (samples/demo-model is not built)")
        return
    tools = json.dumps(samples_by_id()[DEFAULT_SAMPLE].tools)
    args = ("", "", "Plan a trip: what's the weather in Paris, and set an alarm for 7:30 with the label 'flight'.", "", tools, True, tokens, 0.9, 0.95, 1, True, "", False)
    list(live.generate(*args, Session()))  # load the model once
    started = None
    stamps = []
    session = Session()
    for _ in live.generate(*args, session):
        view = session.view
        if view is None or (stamps and stamps[-1][1] is view):
            continue
        now = time.perf_counter()
        started = started or now
        stamps.append((now, view))
    final = stamps[-1][1]
    seconds = stamps[-1][0] - stamps[0][0]
    gaps = [b[0] - a[0] for a, b in zip(stamps, stamps[1:-1])]
    figures = dict(final.figures)
    rate = (len(stamps) - 1) / seconds if seconds > 0 else float("inf")
    print(
        f"live generation: {figures.get('tokens')} tokens in {figures.get('elapsed')} "
        f"({figures.get('tokens/s')} tokens/s, parse {figures.get('parse per token')} per token); "
        f"{len(stamps)} page updates, {rate:.1f} updates/s"
        + (f", smallest gap between streaming updates {min(gaps) * 1000:.0f} ms" if gaps else "")
        + " (target <= 10 updates/s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000, help="characters of the pasted generation")
    parser.add_argument("--tokens", type=int, default=300, help="max_new_tokens of the live generation")
    args = parser.parse_args()
    # qwen3 closes tool calls with a regex (close_pattern); hermes-2-pro with literals only.
    for template_name in ("hermes-2-pro", "qwen3"):
        bench_paste(args.size, template_name)
    bench_live(args.tokens)


if __name__ == "__main__":
    main()
