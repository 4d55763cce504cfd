"""Template inference on the 31 chat templates of ../shared/chat_templates_more, scored on real
outputs of their models (tests/support/real_outputs.py: all three parse modes), without
examples and with each chat template's first 2 outputs as examples; and transformers' own
parser reads the inferred templates the same way, bar the documented differences. Skipped,
with the reason, when the development material is absent.
"""

from __future__ import annotations

import random

import pytest

from engine import infer_template
from tests.support.real_outputs import (
    MORE,
    as_examples,
    cases_by_chat_template,
    load_cases,
    manifest,
    needs_real_outputs,
    score_case,
)
from tests.support.reference_parity import compare

pytestmark = needs_real_outputs

# The headline outputs a chat template's inferred template cannot read, and why.
UNREAD = {
    # The chat template lists the tools but writes no call; the model's call syntax is in no
    # render, prompt or source: example outputs teach it (below).
    "LFM2-8B-A1B.jinja": 13,
    "LFM2.5-Instruct.jinja": 13,
}
# With two example outputs every headline output is read: aligning the examples also puts a
# call keyed by the function's name in the open (the name as a pattern group).
UNREAD_WITH_EXAMPLES: dict[str, int] = {}


@pytest.fixture(scope="module")
def inferred():
    """{file: (template without examples, result with 2 examples, result without, cases)}."""
    by_file = cases_by_chat_template(load_cases())
    found = {}
    for entry in manifest(MORE):
        text = (MORE / entry["file"]).read_text(encoding="utf-8")
        tokens = {"bos_token": entry["bos_token"] or "", "eos_token": entry["eos_token"] or ""}
        cases = by_file.get(entry["file"], [])
        result = infer_template(text, **tokens)
        taught = (
            infer_template(text, examples=as_examples(cases[:2]), **tokens) if cases else result
        )
        found[entry["file"]] = (result.template, taught, result, cases)
    return found


def _unread(template: dict, cases: list[dict]) -> int:
    rng = random.Random(36)
    return sum(bool(score_case(template, case, rng)) for case in cases if not case.get("doubt"))


def test_every_chat_template_gives_a_template_that_passes_its_matrix(inferred):
    assert len(inferred) == 31
    assert [name for name, (_, _, result, _) in inferred.items() if not result.passed] == []


def test_the_renders_aligned_with_their_messages_read_every_call_before_any_last_candidate(
    inferred,
):
    # The aligner reads the renders' calls before the candidates are built (calls keyed by the
    # function's name, a call id before each call), so no chat template's kept template is
    # the one aligned again as a last resort.
    kept = {
        name
        for name, (template, _, result, _) in inferred.items()
        if any(
            each.description == "learnt by aligning the renders with their messages"
            and each.template is template
            for each in result.candidates
        )
    }
    assert kept == set()


def _misread(candidate) -> set[str]:
    return {row.name for row in candidate.report.failed} | {
        problem.split(":")[0] for problem in candidate.example_problems
    }


def test_no_candidate_kept_misreads_a_row_or_example_another_candidate_reads(inferred):
    """The judge never keeps a candidate when another reads all it reads and more: the matrix's
    rows and the examples count alike."""
    dominated = []
    for name, (_, taught, result, _) in inferred.items():
        for inference in (result, taught):
            kept = next(
                each for each in inference.candidates if each.template is inference.template
            )
            for other in inference.candidates:
                if _misread(other) < _misread(kept):
                    dominated.append(f"{name}: {kept.description} by {other.description}")
    assert dominated == []


def test_without_examples_the_inferred_templates_read_all_but_the_outputs_no_evidence_shows(
    inferred,
):
    unread = {name: _unread(template, cases) for name, (template, _, _, cases) in inferred.items()}
    assert {name: count for name, count in unread.items() if count} == UNREAD
    headline = sum(not case.get("doubt") for *_, cases in inferred.values() for case in cases)
    assert (headline, headline - sum(unread.values())) == (221, 195)


def test_what_cannot_be_read_is_said(inferred):
    for name in UNREAD:
        result = inferred[name][2]
        assert [missing.part for missing in result.missing] == ["tool_calls"], name
        assert result.exit_code == 1


def test_with_two_examples_a_chat_template_the_model_writes_calls_no_render_shows_is_read(inferred):
    unread = {
        name: _unread(taught.template, cases) for name, (_, taught, _, cases) in inferred.items()
    }
    assert {name: count for name, count in unread.items() if count} == UNREAD_WITH_EXAMPLES
    assert (
        inferred["LFM2-8B-A1B.jinja"][1].template["fields"]["tool_calls"]["open"]
        == "<|tool_call_start|>"
    )


def test_transformers_reads_the_inferred_templates_the_same_way_bar_the_documented_differences(
    inferred,
):
    differences = []
    for name, (template, _, _, cases) in inferred.items():
        for case in cases:
            why = compare(template, case["output"], case["prefix"], case.get("tools"))
            if why:
                differences.append(f"{case['id']}: {why}")
    assert differences == []
