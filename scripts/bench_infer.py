"""Template inference per chat template: produced, matrix, real outputs parsed, and the time.

    python scripts/bench_infer.py [--shared DIR] [--only NAME] [--failures] [--isolated]
        [--loop] [--streaming] [--placeholders]

For every chat template it infers a response template from the chat template and its
bos/eos tokens alone, and prints whether a template was produced, whether it passes its
conformance matrix, and the seconds it took (the first inference of the process also pays for
importing transformers, and is timed apart). For the chat templates that have real outputs
(`chat_templates_more/` with `cases/real_outputs.jsonl`), it parses every output with the
inferred template in one shot, in random chunks and one character at a time, and counts the
outputs all three give the expected message for: once inferred without examples, once with
the first 2 outputs of that chat template given as examples (`infer_template(examples=...)`,
prompt, output and tools only); then with the first 2 outputs that make tool calls as
examples, once with their expected messages and once without, each scored on the other
outputs (with the slowest such inference). Outputs marked `doubt` are counted apart. Then the totals
against the targets, and with `--failures` every output that still fails, with why.

`--loop` also runs the author's loop (`engine.chat_templates.author_loop`, as ``infer --loop 4``
runs it) on every chat template with at least two call-making outputs and another output: it
starts from the first two call-making outputs with their expected messages, adds the first
output the learnt template misreads, and learns again, up to 4 examples. The template the loop
keeps is scored on every output that is not one of its examples; the chat templates right on
all of them are counted side by side with those right after the two examples alone.

The chat templates are read from ../shared (or `--shared DIR`): `chat_templates/`,
`chat_templates_more/` and `cases/real_outputs.jsonl`, each skipped when absent; the small
ones in tests/support/chat_templates always run. `--isolated` times
`infer_template_isolated` (a child process with a time and memory cap, as the command line
runs it) instead. `--streaming` also times streaming a long reasoning that quotes a tool call
(the reasoning close that waits for its closer) at three lengths. `--placeholders` also
times inference with the demo model's tokenizer, alone and with 1,000 numbered special tokens
(``<SPECIAL_N>``) added, and the pairing of its tokens: numbered tokens never pair, so the
cost grows with the vocabulary, not with its square.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.chat_templates.author_loop import author_loop, kept_round  # noqa: E402
from engine.chat_templates.evidence import read_examples  # noqa: E402
from engine.chat_templates.infer import infer_template, infer_template_isolated  # noqa: E402
from tests.support.real_outputs import (  # noqa: E402
    as_examples,
    cases_by_chat_template,
    load_cases,
    manifest,
    score_case,
)

TARGET_SECONDS = 10.0
# Targets on chat_templates_more, inferred from the chat template and its bos/eos alone.
TARGET_MATRICES, TARGET_PARSED, TARGET_PARSED_WITH_EXAMPLES = 28, 200, 215
EXAMPLES = 2
# The examples the author's loop may grow to (from the first EXAMPLES call-making outputs).
LOOP_EXAMPLES = 4


@dataclass
class Row:
    """One chat template's results."""

    group: str
    name: str
    produced: bool = False
    passed: bool = False
    complete: bool = False
    seconds: float = 0.0
    error: str = ""
    example_seconds: float = 0.0
    # per run ("without", "with"): (headline passed, headline, doubt passed, doubt)
    scores: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)
    failures: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    # the author's loop: one line a round (examples used, outputs read, lost), the kept round
    loop_rounds: list[str] = field(default_factory=list)
    loop_kept: int = 0


def chat_templates(shared: Path) -> list[tuple[str, str, str, str, str]]:
    """(group, file name, text, bos_token, eos_token) of every chat template to run."""
    found = []
    for group in ("chat_templates", "chat_templates_more"):
        folder = shared / group
        entries = manifest(folder)
        if not entries:
            print(f"note: no chat templates at {folder}: skipped")
        for entry in entries:
            text = (folder / entry["file"]).read_text(encoding="utf-8")
            found.append(
                (
                    group,
                    entry["file"],
                    text,
                    entry.get("bos_token") or "",
                    entry.get("eos_token") or "",
                )
            )
    for path in sorted((ROOT / "tests" / "support" / "chat_templates").glob("*.jinja")):
        found.append(("tests", path.name, path.read_text(encoding="utf-8"), "", ""))
    return found


def _score(row: Row, run: str, template: dict | None, cases: list[dict], seed: int) -> None:
    rng = random.Random(seed)
    counts = [0, 0, 0, 0]
    failures = row.failures.setdefault(run, [])
    for case in cases:
        why = score_case(template, case, rng)
        headline = not case.get("doubt")
        counts[0 if headline else 2] += not why
        counts[1 if headline else 3] += 1
        if why:
            failures.append((case["id"] + ("" if headline else " (doubt)"), why[0]))
    row.scores[run] = tuple(counts)


def run_one(
    group: str, name: str, text: str, bos: str, eos: str, cases: list[dict], options
) -> Row:
    infer = infer_template_isolated if options.isolated else infer_template
    row = Row(group, name)
    started = time.perf_counter()
    try:
        result = infer(text, bos_token=bos, eos_token=eos)
        row.produced, row.passed, row.complete = True, result.passed, result.complete
        template = result.template
    except ValueError as error:
        row.error, template = str(error), None
    row.seconds = time.perf_counter() - started
    if not cases:
        return row
    _score(row, "without", template, cases, options.seed)
    examples = as_examples(cases[:EXAMPLES])
    try:
        with_examples = infer_template(
            text, bos_token=bos, eos_token=eos, examples=examples
        ).template
    except ValueError:
        with_examples = None
    _score(row, "with", with_examples, cases, options.seed)
    # Two outputs that make tool calls as examples, as an author pastes them: with their expected
    # messages, and without (outputs and tools); scored on the other outputs.
    calling = [case for case in cases if case["expected"].get("tool_calls")][:EXAMPLES]
    rest = [case for case in cases if case not in calling]
    for run, keep in (("calls", True), ("calls-outputs", False)):
        examples = [
            {**example, **({"expected": case["expected"]} if keep else {})}
            for example, case in zip(as_examples(calling), calling)
        ]
        started = time.perf_counter()
        try:
            taught = infer_template(text, bos_token=bos, eos_token=eos, examples=examples).template
        except ValueError:
            taught = None
        row.example_seconds = max(row.example_seconds, time.perf_counter() - started)
        _score(row, run, taught, rest, options.seed)
    if options.loop and len(calling) == EXAMPLES and rest:
        run_loop(row, text, bos, eos, calling, rest, options)
    return row


def run_loop(
    row: Row, text: str, bos: str, eos: str, calling: list[dict], rest: list[dict], options
) -> None:
    """The author's loop from the call-making `calling` outputs (with their expected messages),
    adding the first of `rest` the learnt template misreads, up to LOOP_EXAMPLES examples; the
    kept template scored on every case that is not one of its examples (run "loop")."""
    infer = infer_template_isolated if options.isolated else infer_template

    def with_messages(cases: list[dict]) -> list[dict]:
        return [
            {**example, "expected": case["expected"]}
            for example, case in zip(as_examples(cases), cases)
        ]

    def learn(examples: list[dict]):
        return infer(text, bos_token=bos, eos_token=eos, examples=examples)

    try:
        rounds = author_loop(
            learn,
            read_examples(with_messages(calling)),
            read_examples(with_messages(rest), "output"),
            LOOP_EXAMPLES,
        )
    except ValueError as error:
        row.loop_rounds = [f"round 1: learning failed: {error}"]
        _score(row, "loop", None, rest, options.seed)
        return
    row.loop_rounds = [each.lines()[0] for each in rounds]
    kept = kept_round(rounds)
    row.loop_kept = kept.number
    by_label = {f"example {n}": case for n, case in enumerate(calling, 1)}
    by_label.update({f"output {n}": case for n, case in enumerate(rest, 1)})
    taught = [by_label[label] for label in kept.examples]
    others = [case for case in [*calling, *rest] if case not in taught]
    _score(row, "loop", kept.template, others, options.seed)


def _cell(scores: tuple[int, int, int, int] | None) -> str:
    if scores is None:
        return "-"
    passed, total, doubt_passed, doubt = scores
    return f"{passed}/{total}" + (f" +{doubt_passed}/{doubt}?" if doubt else "")


def print_table(rows: list[Row]) -> None:
    print(
        f"{'chat template':52} {'produced':>8} {'matrix':>7} {'no examples':>13} {f'{EXAMPLES} examples':>13} {'seconds':>8}"
    )
    for row in rows:
        produced = ("yes" if row.complete else "partial") if row.produced else "NO"
        print(
            f"{row.group + '/' + row.name:52.52} {produced:>8} {'pass' if row.passed else 'FAIL':>7} "
            f"{_cell(row.scores.get('without')):>13} {_cell(row.scores.get('with')):>13} {row.seconds:8.2f}"
            + (f"  [{row.error[:70]}]" if row.error else "")
        )


def print_totals(rows: list[Row]) -> None:
    for group in dict.fromkeys(row.group for row in rows):
        mine = [row for row in rows if row.group == group]
        line = (
            f"{group}: {sum(r.produced for r in mine)}/{len(mine)} produced, "
            f"{sum(r.passed for r in mine)}/{len(mine)} pass their matrix"
        )
        for run, label in (
            ("without", "without examples"),
            ("with", f"with {EXAMPLES} examples"),
            ("calls", f"with {EXAMPLES} tool-call examples and their messages (on the others)"),
            (
                "calls-outputs",
                f"with {EXAMPLES} tool-call examples, outputs and tools only (on the others)",
            ),
        ):
            scored = [r.scores[run] for r in mine if run in r.scores]
            if scored:
                line += (
                    f"; real outputs {label}: {sum(s[0] for s in scored)}/{sum(s[1] for s in scored)}"
                    f" (doubt {sum(s[2] for s in scored)}/{sum(s[3] for s in scored)})"
                )
        print(line)
    more = [row for row in rows if row.group == "chat_templates_more"]
    if more:
        targets = [
            ("matrices passed", sum(r.passed for r in more), TARGET_MATRICES),
            (
                "outputs parsed, no examples",
                sum(r.scores.get("without", (0,))[0] for r in more),
                TARGET_PARSED,
            ),
            (
                f"outputs parsed, {EXAMPLES} examples",
                sum(r.scores.get("with", (0,))[0] for r in more),
                TARGET_PARSED_WITH_EXAMPLES,
            ),
        ]
        for label, got, target in targets:
            print(
                f"[{'PASS' if got >= target else 'FAIL'}] chat_templates_more {label}: {got} (target >= {target})"
            )
    looped = [row for row in rows if "loop" in row.scores]
    if looped:
        print_loop(looped)
    taught = max(rows, key=lambda r: r.example_seconds)
    print(
        f"slowest inference with {EXAMPLES} tool-call examples: {taught.name} {taught.example_seconds:.2f} s"
    )
    slowest = max(rows, key=lambda r: r.seconds)
    print(
        f"[{'PASS' if slowest.seconds <= TARGET_SECONDS else 'FAIL'}] slowest inference: "
        f"{slowest.name} {slowest.seconds:.2f} s (target <= {TARGET_SECONDS:g} s)"
    )


def _all_right(scores: tuple[int, int, int, int], doubt: bool = False) -> bool:
    """Every headline output right (and with `doubt`, every output marked doubt too)."""
    return scores[0] == scores[1] and (not doubt or scores[2] == scores[3])


def print_loop(rows: list[Row]) -> None:
    """The author's loop per chat template (its rounds, the kept one), then the chat templates
    right on all their other outputs after two call-making examples and after the loop."""
    print(
        f"\nthe author's loop (from {EXAMPLES} call-making examples, up to {LOOP_EXAMPLES}; "
        "scored on the outputs left after the ones it took as examples):"
    )
    for row in rows:
        kept = (
            f"kept round {row.loop_kept} of {len(row.loop_rounds)}"
            if row.loop_kept
            else "the first round learnt nothing"
        )
        print(
            f"  {row.name:52.52} {_cell(row.scores.get('calls')):>9} -> {_cell(row.scores['loop']):>9}"
            f"  ({kept})"
        )
        for line in row.loop_rounds:
            print(f"      {line}")
    for doubt, which in ((False, ""), (True, ", those marked doubt included")):
        two = sum(_all_right(row.scores["calls"], doubt) for row in rows)
        loop = sum(_all_right(row.scores["loop"], doubt) for row in rows)
        print(
            f"chat templates right on all their other outputs{which}: after {EXAMPLES} "
            f"call-making examples {two} of {len(rows)}, after the author's loop {loop} of {len(rows)}"
        )


def streaming_cost() -> None:
    """Seconds to stream reasoning that quotes a call and closes much later, 8 characters a chunk:
    the reasoning close waits for its closer from the quoted call on."""
    from engine import ResponseParser

    template = {
        "start_anchor": "<|a|>",
        "fields": {
            "reasoning_content": {
                "open": "<r>",
                "close_pattern": "</r>|(?=(?:<call>\\s*\\{)(?!.*?</r>))",
            },
            "tool_calls": {
                "open_pattern": "<call>(?=\\s*\\{)",
                "close_pattern": "(?<=\\})\\s*</call>",
                "repeats": True,
                "content": "json",
                "transform": {"type": "function", "function": "{content}"},
            },
            "content": {"close": "<|end|>"},
        },
    }
    print("\nstreaming reasoning that quotes a call, 8 characters a chunk:")
    for size in (10_000, 40_000, 160_000):
        text = (
            '<r>thinking <call>{"name": "f", "arguments": {}}</call> '
            + "x " * (size // 2)
            + "</r>answer<|end|>"
        )
        parser = ResponseParser(template, prefix="<|a|>")
        started = time.perf_counter()
        for at in range(0, len(text), 8):
            parser.feed(text[at : at + 8])
        parser.finalize()
        print(
            f"  {size:>7,} characters after the quoted call: {time.perf_counter() - started:6.2f} s"
        )


def placeholder_tokens_cost(counts: tuple[int, ...] = (0, 1_000)) -> None:
    """Seconds to infer a small chat template with the demo model's tokenizer given, with `counts`
    numbered special tokens added, and seconds to pair its markup tokens alone."""
    from engine.chat_templates.tokens import marker_tokens, token_pairs
    from tests.support.paths import CHAT_TEMPLATE_FIXTURES
    from tests.support.tokenizers import demo_tokenizer_with_placeholders

    chat_template = (CHAT_TEMPLATE_FIXTURES / "hidden-reasoning.jinja").read_text(encoding="utf-8")
    print("\ninference with the demo tokenizer and numbered special tokens (<SPECIAL_N>):")
    print(f"  {'added':>7} {'tokens':>7} {'pairs':>6} {'pairing':>9} {'inference':>10}")
    for count in counts:
        tokenizer = demo_tokenizer_with_placeholders(count)
        started = time.perf_counter()
        tokens = marker_tokens(tokenizer)
        pairs = token_pairs(tokens)
        pairing = time.perf_counter() - started
        started = time.perf_counter()
        infer_template(chat_template, tokenizer=tokenizer)
        inference = time.perf_counter() - started
        print(
            f"  {count:>7,} {len(tokens):>7,} {len(pairs):>6,} {pairing:>8.3f}s {inference:>9.2f}s"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python scripts/bench_infer.py", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--shared",
        type=Path,
        default=ROOT.parent / "shared",
        help="the folder holding chat_templates/, chat_templates_more/ and cases/",
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        help="a chat template's file name or stem (repeatable)",
    )
    parser.add_argument(
        "--failures", action="store_true", help="print every real output that fails, with why"
    )
    parser.add_argument(
        "--isolated",
        action="store_true",
        help="time inference in a child process, as the CLI runs it",
    )
    parser.add_argument(
        "--seed", type=int, default=36, help="seed of the random chunkings (default 36)"
    )
    parser.add_argument(
        "--json", type=Path, help="also write every row, failures included, to this file"
    )
    parser.add_argument(
        "--loop",
        action="store_true",
        help=f"also run the author's loop (up to {LOOP_EXAMPLES} examples) and count the chat "
        "templates then right on all their other outputs",
    )
    parser.add_argument(
        "--streaming",
        action="store_true",
        help="also time the reasoning close that waits for its closer",
    )
    parser.add_argument(
        "--placeholders",
        action="store_true",
        help="also time inference with a tokenizer of 1,000 numbered special tokens",
    )
    options = parser.parse_args(argv)
    by_file = cases_by_chat_template(load_cases(options.shared / "cases" / "real_outputs.jsonl"))
    templates = chat_templates(options.shared)
    if options.only:
        templates = [
            t for t in templates if t[1] in options.only or Path(t[1]).stem in options.only
        ]
    started = time.perf_counter()
    infer_template(templates[0][2], bos_token=templates[0][3], eos_token=templates[0][4])
    print(f"first run (imports transformers): {time.perf_counter() - started:.2f} s\n")
    rows = []
    for group, name, text, bos, eos in templates:
        cases = by_file.get(name, []) if group == "chat_templates_more" else []
        rows.append(run_one(group, name, text, bos, eos, cases, options))
    print_table(rows)
    print()
    print_totals(rows)
    if options.failures:
        for row in rows:
            for run, failures in row.failures.items():
                for case, why in failures:
                    print(f"  {row.name} ({run} examples) {case}: {why[:300]}")
    if options.json:
        options.json.write_text(
            json.dumps([row.__dict__ for row in rows], indent=1, ensure_ascii=False)
        )
    if options.streaming:
        streaming_cost()
    if options.placeholders:
        placeholder_tokens_cost()
    return 0


if __name__ == "__main__":
    sys.exit(main())
