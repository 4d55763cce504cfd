"""Measure derived grammars: the sampling round trip, the build times, constrained generation.

    python scripts/bench_grammar.py [--samples 200] [--forms structural-tag] [--choices auto,...]
                                    [--skip-walks]
                                    [--skip-generation] [--prompts 20] [--only NAME,...]
                                    [--parser-limits [--limit-samples 2]]

1. Round trip: for every shipped template and every template inferred from the shared chat
   templates (skipped, saying why, when they are absent), and every tool choice (auto,
   required, none, one named function; with and without parallel calls), `--samples`
   outputs drawn at random from the grammar (tests/support/grammar_walks.py) and parsed back,
   the tools `KEYWORD_TOOLS` (bounded integers and numbers, strings with lengths and a
   pattern, arrays with item bounds, nested required objects, anyOf, a $ref), every call
   validated with `jsonschema` against its tool's whole schema.
   The table: samples, parsed (one-shot and chunked, strict), schema-valid, choice held,
   dead ends (a failure), noted (valid but for keywords the form's notes name as not
   enforced), not UTF-8 (the engine let such bytes through), walks that did not end (drawn
   again), and why a request could not be constrained; then the failures per form.
2. Build times: deriving the grammar and compiling it (per template and form: the largest
   over the tool choices), target at most 1 s.
3. Generation: the demo model on the prompts of scripts/evaluate_demo_model.py (tool choice
   auto, sampled with the prompt's index as seed), unconstrained and constrained with each
   engine, interleaved prompt by prompt in one run: messages that parse, messages that parse
   with every call's arguments valid, calls, tokens per second (new tokens over wall time).
4. Parser limits (`--parser-limits`, alone: the other parts are skipped): what llguidance's
   parser limits must allow for the grammars of real templates, next to the values a server
   sets (`engine.grammar.matching.SERVING_PARSER_LIMITS`) and llguidance's defaults. The
   grammars: every template (shipped and inferred) with the test tools and with 46 realistic
   tools (`realistic_tools`, 62 KB of JSON), tool choices auto and required, in Lark. For the
   limits that bound compiling (grammar size, initial lexer fuel) the least value each grammar
   compiles with; for those that bound generating (lexer states, step fuel and items, items
   in a row) the least value with which `--limit-samples` random walks of every grammar pass
   no limit.

Figures depend on the machine's load: the script prints `os.getloadavg()` first.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from tests.support.grammar_walks import (  # noqa: E402
    CHOICES,
    KEYWORD_TOOLS,
    choice_label,
    demo_tokenizer,
    inferred_cases,
    realistic_tools,
    round_trip,
    shipped_cases,
)
from tests.support.paths import CHAT_TEMPLATES, MANIFEST  # noqa: E402

ENGINE_OF = {"structural-tag": "xgrammar", "gbnf": "xgrammar", "lark": "llguidance"}


def walks(cases, samples: int, forms: list[str], choices) -> dict[tuple[str, str], float]:
    """Print the round-trip table (tools: `KEYWORD_TOOLS`, every call validated against its
    tool's whole schema) and the failures per form; return the build seconds by (template,
    form)."""
    builds: dict[tuple[str, str], float] = {}
    for (
        form
    ) in forms:  # the engines' one-time setup (imports, the tokenizer's tables) is not a build
        round_trip(cases[0], "auto", True, 1, engine_name=ENGINE_OF[form], form=form)
    header = (
        f"{'template':46} {'tool choice':22} {'form':15} {'samples':>7} {'parsed':>6} "
        f"{'valid':>6} {'choice':>6} {'dead':>4} {'noted':>5} {'utf8':>4} {'redrawn':>7}  "
        "not constrainable"
    )
    print(header)
    print("-" * len(header))
    totals = {
        form: {"samples": 0, "failures": 0, "dead": 0, "noted": 0, "utf8": 0} for form in forms
    }
    for case in cases:
        for form in forms:
            for choice, parallel in choices:
                result = round_trip(
                    case, choice, parallel, samples, engine_name=ENGINE_OF[form], form=form
                )
                key = (case.name, form)
                builds[key] = max(builds.get(key, 0.0), result.build_seconds)
                label = choice_label(choice, parallel)
                if result.unconstrainable:
                    print(
                        f"{case.name:46} {label:22} {form:15} {'-':>7} {'-':>6} {'-':>6} {'-':>6} "
                        f"{'-':>4} {'-':>5} {'-':>4} {'-':>7}  {result.unconstrainable}"
                    )
                    continue
                print(
                    f"{case.name:46} {label:22} {form:15} {result.samples:>7} {result.parsed:>6} "
                    f"{result.valid:>6} {result.choice_held:>6} {result.dead_ends:>4} "
                    f"{result.noted:>5} {result.invalid_utf8:>4} {result.not_ended:>7}"
                )
                total = totals[form]
                total["samples"] += result.samples
                total["failures"] += len(result.failures)
                total["dead"] += result.dead_ends
                total["noted"] += result.noted
                total["utf8"] += result.invalid_utf8
                for failure in result.failures[:3]:
                    print(f"    FAILURE {failure[:400]}")
                for failure in result.engine_failures[:1]:
                    print(f"    NOT UTF-8 (the engine's) {failure[:300]}")
            sys.stdout.flush()
    print(
        "\nper form (failures: a sample that does not parse back, breaks its tool's schema where "
        "the form claims to enforce it, breaks the tool choice, or reaches a dead end; noted: "
        "valid except for keywords the grammar's notes say that form cannot enforce; utf8: the "
        "engine let bytes through that are not UTF-8)"
    )
    print(
        f"{'form':15} {'engine':11} {'samples':>7} {'failures':>8} {'dead ends':>9} {'noted':>6} {'utf8':>5}"
    )
    for form, total in totals.items():
        print(
            f"{form:15} {ENGINE_OF[form]:11} {total['samples']:>7} {total['failures']:>8} "
            f"{total['dead']:>9} {total['noted']:>6} {total['utf8']:>5}"
        )
    return builds


def build_times(builds: dict[tuple[str, str], float]) -> None:
    if not builds:
        return
    seconds = sorted(builds.values())
    worst = max(builds, key=builds.get)
    print(
        f"\nbuild (derive + compile), largest over tool choices, per template: median {statistics.median(seconds) * 1000:.0f} ms, "
        f"max {seconds[-1] * 1000:.0f} ms ({worst[0]}, {worst[1]}); target <= 1000 ms"
    )


def generation(prompts: int, engines: list[str], max_new_tokens: int) -> None:
    """Unconstrained and constrained generation side by side, interleaved prompt by prompt."""
    from demo_corpus import evaluation_samples
    from evaluate_demo_model import EVALUATION_SEED, SAMPLING, valid_call_count

    from engine import parse_response
    from playground.model.generation import (
        DEFAULT_MODEL_PATH,
        choose_template,
        constrained_processor,
        load_model,
        render_prompt,
        stream_generation,
    )

    loaded = load_model(DEFAULT_MODEL_PATH)
    template, _ = choose_template(loaded)
    samples = evaluation_samples(prompts, EVALUATION_SEED)
    modes = ["unconstrained", *engines]
    tally = {
        mode: {"parsed": 0, "valid": 0, "calls": 0, "tokens": 0, "seconds": 0.0, "grammar": 0.0}
        for mode in modes
    }
    for index, sample in enumerate(samples):
        prompt = render_prompt(
            loaded,
            sample["messages"][:-1],
            sample["tools"],
            enable_thinking=sample["enable_thinking"],
        )
        for mode in modes:
            processors = []
            started = time.perf_counter()
            if mode != "unconstrained":
                processor, derived = constrained_processor(
                    loaded, template, sample["tools"], prompt, engine=mode
                )
                if processor is None:
                    raise SystemExit(f"not constrainable: {derived.unconstrainable}")
                processors = [processor]
            pieces = list(
                stream_generation(
                    loaded,
                    prompt,
                    max_new_tokens=max_new_tokens,
                    seed=index,
                    logits_processors=processors,
                    **SAMPLING,
                )
            )
            elapsed = time.perf_counter() - started
            text = "".join(piece.text for piece in pieces)
            row = tally[mode]
            row["tokens"] += sum(len(piece.ids) for piece in pieces)
            row["seconds"] += elapsed
            row["grammar"] += processors[0].seconds if processors else 0.0
            try:
                message = parse_response(text, template, prefix=prompt.text, tools=sample["tools"])
            except ValueError:
                continue
            row["parsed"] += 1
            calls = message.get("tool_calls") or []
            row["calls"] += len(calls)
            row["valid"] += valid_call_count(message, sample["tools"]) == len(calls)
    base = tally["unconstrained"]["tokens"] / tally["unconstrained"]["seconds"]
    print(
        f"\ngeneration: demo model, {len(samples)} prompts of scripts/evaluate_demo_model.py, tool choice auto, sampled {SAMPLING}, max_new_tokens {max_new_tokens}"
    )
    print(
        f"{'':16} {'parsed':>8} {'parsed, valid args':>19} {'calls':>6} {'tokens':>7} {'tok/s':>7} {'ratio':>6} {'in grammar':>11}"
    )
    for mode in modes:
        row = tally[mode]
        rate = row["tokens"] / row["seconds"]
        per_token = row["grammar"] / row["tokens"] * 1000 if row["tokens"] else 0
        print(
            f"{mode:16} {row['parsed']:>5}/{len(samples):<2} {row['valid']:>16}/{len(samples):<2} {row['calls']:>6} "
            f"{row['tokens']:>7} {rate:>7.1f} {rate / base:>6.2f} {per_token:>8.3f} ms/token"
        )


# llguidance's defaults (llguidance 1.9.1, `LLParserLimits`).
LLGUIDANCE_DEFAULTS = {
    "max_grammar_size": 500_000,
    "initial_lexer_fuel": 1_000_000,
    "max_lexer_states": 250_000,
    "step_lexer_fuel": 200_000,
    "step_max_items": 50_000,
    "max_items_in_row": 2_000,
}
COMPILE_LIMITS = ("max_grammar_size", "initial_lexer_fuel")
GENERATE_LIMITS = ("max_lexer_states", "step_lexer_fuel", "step_max_items", "max_items_in_row")


def _least(passes, high: int) -> int | None:
    """The least value in 1..`high` for which `passes(value)` holds (it holds for all above),
    or None when it fails at `high`."""
    if not passes(high):
        return None
    low = 1
    while low < high:
        middle = (low + high) // 2
        if passes(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _recording(compiled) -> list:
    """The matchers `compiled` makes from now on (`random_walk` makes its own), kept in a list."""
    made = []
    plain = type(compiled).matcher

    def matcher():
        made.append(plain(compiled))
        return made[-1]

    compiled.matcher = matcher
    return made


def parser_limits(cases, samples: int) -> None:
    """Print what the grammars of `cases` need of each llguidance parser limit."""
    import random

    import llguidance

    from engine.grammar import derive_grammar
    from engine.grammar.matching import (
        SERVING_PARSER_LIMITS,
        DeadEnd,
        compile_grammar,
        parser_limits_of,
        random_walk,
        special_tokens,
        steering_sequences,
    )

    tokenizer = demo_tokenizer()
    specials = special_tokens(tokenizer)
    grammars = []
    for case in cases:
        for tools, label in ((KEYWORD_TOOLS, "test tools"), (realistic_tools(), "46 tools")):
            for choice in ("auto", "required"):
                derived = derive_grammar(case.template, tools, choice, prefix=case.prefix)
                if derived.ok:
                    lark = derived.lark(specials)
                    grammars.append((f"{case.name}, {label}, {choice}", derived, lark))
    print(f"\nparser limits: {len(grammars)} grammars (Lark), {samples} walks each for generating")
    if not grammars:
        print("no grammar to measure")
        return
    # llguidance's tokenizer for the demo model, as every compiled grammar holds it.
    engine_tokenizer = compile_grammar(grammars[0][1], tokenizer, "llguidance").engine_tokenizer
    needs: dict[str, tuple[int | None, str]] = {}
    for key in COMPILE_LIMITS:
        worst: tuple[int | None, str] = (0, "")
        for name, _, lark in grammars:
            grammar = llguidance.grammar_from("lark", lark)

            def compiles(value: int) -> bool:
                limits = llguidance.LLParserLimits(verbose_errors=False, **{key: value})
                return not llguidance.LLMatcher.validate_grammar(
                    grammar, engine_tokenizer, limits=limits
                )

            least = _least(compiles, LLGUIDANCE_DEFAULTS[key])
            if least is None or worst[0] is not None and least > worst[0]:
                worst = (least, name)
        needs[key] = worst
    compiled_grammars = [
        (name, compile_grammar(derived, tokenizer, "llguidance"), derived)
        for name, derived, _ in grammars
    ]
    for key in GENERATE_LIMITS:
        failed = [""]

        def walks(value: int) -> bool:
            for name, compiled, derived in compiled_grammars:
                compiled.parser_limits = parser_limits_of({key: value})  # for its matchers
                made = _recording(compiled)
                rng = random.Random(7)
                steering = steering_sequences(derived, tokenizer)
                for _ in range(samples):
                    made.clear()
                    try:
                        random_walk(compiled, tokenizer, rng, steering, max_tokens=300)
                    except DeadEnd:
                        pass  # not a limit (the round trip counts dead ends)
                    if any(matcher.problem() for matcher in made):
                        failed[0] = name
                        return False
            return True

        least = _least(walks, LLGUIDANCE_DEFAULTS[key])
        needs[key] = (least, failed[0] if least and least > 1 else "")
    print(f"{'limit':20} {'needed':>10} {'set':>10} {'default':>10} {'headroom':>9}  needed by")
    for key, (least, name) in needs.items():
        value = SERVING_PARSER_LIMITS[key]
        shown = "refused" if least is None else f"{least:,}"
        room = f"{value / least:.0f}x" if least else "-"
        print(
            f"{key:20} {shown:>10} {value:>10,} {LLGUIDANCE_DEFAULTS[key]:>10,} {room:>9}  {name}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--samples", type=int, default=200, help="outputs per template and tool choice"
    )
    parser.add_argument(
        "--forms", default="structural-tag", help="comma-separated: structural-tag, gbnf, lark"
    )
    parser.add_argument(
        "--only", help="comma-separated template names (shipped, or 'inferred ...')"
    )
    parser.add_argument(
        "--choices", help="comma-separated tool choices to walk (auto, required, none, set_alarm)"
    )
    parser.add_argument("--skip-walks", action="store_true")
    parser.add_argument("--skip-inferred", action="store_true")
    parser.add_argument("--skip-shipped", action="store_true")
    parser.add_argument("--skip-generation", action="store_true")
    parser.add_argument("--prompts", type=int, default=20)
    parser.add_argument(
        "--engines", default="llguidance,xgrammar", help="engines constraining generation"
    )
    parser.add_argument("--max-new-tokens", type=int, default=200)
    parser.add_argument(
        "--parser-limits",
        action="store_true",
        help="measure what real grammars need of llguidance's parser limits (only that)",
    )
    parser.add_argument(
        "--limit-samples", type=int, default=2, help="random walks per grammar for --parser-limits"
    )
    args = parser.parse_args()
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores)")
    if args.parser_limits:
        cases = shipped_cases() + ([] if args.skip_inferred else list(inferred_cases()))
        parser_limits(cases, args.limit_samples)
        return
    if not args.skip_walks:
        cases = [] if args.skip_shipped else shipped_cases()
        if args.skip_inferred:
            pass
        elif MANIFEST:
            cases += list(inferred_cases())
        else:
            print(f"inferred templates skipped: no chat templates at {CHAT_TEMPLATES}")
        if args.only:
            wanted = set(args.only.split(","))
            cases = [case for case in cases if case.name in wanted]
        wanted_choices = args.choices.split(",") if args.choices else None
        choices = [
            (choice, parallel)
            for choice, parallel in CHOICES
            if wanted_choices is None or choice in wanted_choices
        ]
        builds = walks(cases, args.samples, args.forms.split(","), choices)
        build_times(builds)
    if not args.skip_generation:
        generation(args.prompts, args.engines.split(","), args.max_new_tokens)


if __name__ == "__main__":
    main()
