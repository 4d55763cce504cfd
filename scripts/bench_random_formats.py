"""Learning an output format from two example outputs, over random formats: how many are
recovered, the feature mix, the failures by feature, and the learning time.

    python scripts/bench_random_formats.py [--formats N] [--fresh N] [--first SEED] [--failures]
        [--single-calls] [--more]

For each of N random formats (tests/support/random_formats.py, seeds FIRST..FIRST+N-1), a
template is learnt from the format's two examples (`engine.chat_templates.example_fields.
learn_template`, with the start anchor a chat template would give), once with the expected
messages and once from the outputs and the tools alone. A format is recovered when the learnt
template reads every one of `--fresh` other outputs of the format to its message in all three
modes (one shot, random chunks, one character at a time: tests/support/real_outputs.py). It
prints the recovery rate of each run, how often each feature value was drawn, the failures by
feature value, and the median and largest learning time. With `--single-calls` each example
makes one call (of any arguments), so no example shows what parts two calls or two arguments.
With `--more` the formats also draw the features of `MORE_FEATURES` (the other features drawn
the same), and the mix and failures list them too.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.chat_templates.evidence import read_examples  # noqa: E402
from engine.chat_templates.example_fields import NotLearnt, learn_template  # noqa: E402
from tests.support.random_formats import FEATURES, MORE_FEATURES, random_format  # noqa: E402
from tests.support.real_outputs import score_case  # noqa: E402

RUNS = ("with expected", "outputs only")


def recovered(fmt, run: str, fresh: int, single_calls: bool = False) -> tuple[str, float]:
    """("" when recovered, else why; seconds learning took)."""
    examples = fmt.examples(single_calls)
    if run == "outputs only":
        examples = [{k: v for k, v in example.items() if k != "expected"} for example in examples]
    started = time.perf_counter()
    try:
        template = learn_template(read_examples(examples), fmt.base()).template
    except NotLearnt as error:
        return f"not learnt: {error}", time.perf_counter() - started
    seconds = time.perf_counter() - started
    rng = random.Random(fmt.seed)
    for case in fmt.fresh(fresh):
        why = score_case(template, case, rng)
        if why:
            return f"misreads {case['output'][:120]!r}: {why[0][:200]}", seconds
    return "", seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--formats", type=int, default=300)
    parser.add_argument("--fresh", type=int, default=20)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--failures", action="store_true", help="print every failure, with why")
    parser.add_argument(
        "--single-calls",
        action="store_true",
        help="examples of one call each (no example shows what parts two calls or two arguments)",
    )
    parser.add_argument(
        "--more", action="store_true", help="also draw the features of MORE_FEATURES"
    )
    options = parser.parse_args()
    formats = [
        random_format(seed, options.more)
        for seed in range(options.first, options.first + options.formats)
    ]
    features = {**FEATURES, **MORE_FEATURES} if options.more else FEATURES
    mix = Counter((name, fmt.features[name]) for fmt in formats for name in features)
    failed = {run: Counter() for run in RUNS}
    times = {run: [] for run in RUNS}
    passed = Counter()
    for fmt in formats:
        for run in RUNS:
            why, seconds = recovered(fmt, run, options.fresh, options.single_calls)
            times[run].append(seconds)
            if not why:
                passed[run] += 1
                continue
            for name in features:
                failed[run][(name, fmt.features[name])] += 1
            if options.failures:
                print(f"seed {fmt.seed} ({run}) {fmt.features}: {why}")
    total = len(formats)
    print(f"\n{total} random formats, {options.fresh} fresh outputs each, all three parse modes")
    for run in RUNS:
        print(
            f"  {run:14} recovered {passed[run]}/{total} ({100 * passed[run] / total:.1f}%); "
            f"learning median {statistics.median(times[run]):.3f} s, max {max(times[run]):.3f} s"
        )
    print("\nfeature mix (formats drawn) and failures (with expected / outputs only):")
    for name, choices in features.items():
        row = ", ".join(
            f"{choice} {mix[(name, choice)]}"
            + (
                f" [{failed[RUNS[0]][(name, choice)]}/{failed[RUNS[1]][(name, choice)]} failed]"
                if failed[RUNS[0]][(name, choice)] or failed[RUNS[1]][(name, choice)]
                else ""
            )
            for choice in choices
        )
        print(f"  {name:10} {row}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
