"""The sampling round trip: every output drawn from a derived grammar parses back.

For every shipped template and every template inferred from the shared chat templates, and
every tool choice (auto, required, none, one named function; with and without parallel
calls), outputs are drawn at random from the grammar with the demo model's tokenizer
(`tests.support.grammar_walks`) and parsed back strictly, one-shot and in random chunks:
each parses, every call's arguments validate against its tool's schema, and the tool choice
holds. The suite draws a few outputs per template and choice (`SAMPLES`, the structural tag
walked with xgrammar; the GBNF with xgrammar and the Lark with llguidance on shipped templates);
scripts/bench_grammar.py draws 200 and prints the table.
"""

from __future__ import annotations

import pytest

from tests.support.grammar_walks import (
    BARE_CALL_OBJECTS,
    CHOICES,
    Case,
    choice_label,
    inferred_cases,
    round_trip,
    shipped_cases,
)
from tests.support.paths import needs_shared

pytest.importorskip("xgrammar")
pytest.importorskip("llguidance")

SAMPLES = {"structural-tag": 6, "gbnf": 3, "lark": 3}
ENGINE_OF = {"structural-tag": "xgrammar", "gbnf": "xgrammar", "lark": "llguidance"}
SHIPPED = shipped_cases()


def _walk_all_choices(case, form: str) -> list[str]:
    problems = []
    for choice, parallel in CHOICES:
        result = round_trip(
            case, choice, parallel, SAMPLES[form], engine_name=ENGINE_OF[form], form=form
        )
        label = f"{case.name} [{choice_label(choice, parallel)}] {form}"
        if result.unconstrainable:
            problems.append(f"{label}: not constrainable: {result.unconstrainable}")
            continue
        if result.samples < SAMPLES[form]:
            problems.append(f"{label}: only {result.samples} walks ended")
        problems += [f"{label}: {failure[:600]}" for failure in result.failures]
    return problems


@pytest.mark.parametrize("form", ["structural-tag", "gbnf", "lark"])
@pytest.mark.parametrize("case", SHIPPED, ids=[case.name for case in SHIPPED])
def test_every_output_of_a_shipped_templates_grammar_parses_back(case, form):
    assert _walk_all_choices(case, form) == []


def test_every_output_of_a_grammar_for_call_objects_the_open_looks_ahead_for_parses_back():
    case = Case("bare call objects", BARE_CALL_OBJECTS, "<|a|>")
    assert _walk_all_choices(case, "structural-tag") == []


@needs_shared
def test_every_output_of_an_inferred_templates_grammar_parses_back():
    problems = []
    for case in inferred_cases():
        for problem in _walk_all_choices(case, "structural-tag"):
            # A chat template that writes no tool call gives a template without a tool field:
            # a request that needs a call cannot be honoured, and says so.
            if (
                "no tool or no tool-call field exists" in problem
                and "tool_calls" not in case.template["fields"]
            ):
                continue
            problems.append(problem)
    # One inferred template reads its calls' arguments as `key:value` pairs with a lazy value up
    # to the next comma: no schema-typed value can be written through that pattern, so a
    # request that needs a call is refused, and said (never an output that does not parse back).
    refused = "structural-tag: not constrainable: no tool call can be written for this template and these tools"
    assert problems == [
        f"inferred functiongemma-litert.jinja [{choice}] {refused}"
        for choice in ("required", "required, no parallel", "set_alarm")
    ]
