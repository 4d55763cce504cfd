"""Every regex call of an author's tools runs within one time budget (engine.authoring.time_budget):
lint, diagnosis, a trace's warnings, pattern explanation."""

from __future__ import annotations

import copy
import threading
import time

from engine import trace
from engine.authoring import time_budget
from engine.authoring.diagnosis import diagnose
from engine.authoring.faults import find_warnings
from engine.authoring.lint import lint
from engine.authoring.pattern_explain import explain_pattern, pieces_taken
from engine.authoring.samples import load_samples
from engine.template import load_template
from engine.template_files import load_template_file

QWEN3_CASE = next(s for s in load_samples() if s.id == "qwen3/text-then-tool-calls")
# A start anchor that backtracks exponentially on a run of a's, and an open that is such a run.
ANCHOR_INSIDE = {
    "start_anchor_pattern": "(?:a|aa)+c",
    "fields": {"thing": {"open": "a" * 100, "close": "</x>"}, "content": {}},
}


def test_lint_answers_for_an_anchor_pattern_that_backtracks_on_a_delimiter():
    # The anchor used to be searched in each delimiter literal with no timeout: it never answered.
    found = lint(ANCHOR_INSIDE)
    assert [(d.code, d.path) for d in found] == [
        ("catastrophic-backtracking", "start_anchor_pattern")
    ]


def test_lint_stops_at_its_deadline_and_says_so():
    slow = {
        "start_anchor": "<s>",
        "fields": {
            **{f"f{i}": {"open_pattern": f"(?:a|aa)+{i}", "close": f"</{i}>"} for i in range(20)},
            "content": {},
        },
    }
    whole = lint(slow)  # each pattern takes its probe's 50 ms at least: a second in all
    assert [d.code for d in whole].count("catastrophic-backtracking") == 20
    assert not any(d.code == "lint-cut-off" for d in whole)
    cut = lint(slow, deadline=time.perf_counter() + 0.3)
    assert cut[-1].code == "lint-cut-off" and cut[-1].severity == "info"
    assert cut[-1].message.startswith("lint stopped at its time budget: ")
    assert len(cut) < len(whole)


def test_a_spent_deadline_makes_the_next_regex_call_time_out_in_this_thread_only():
    assert time_budget.regex_timeout(0.05) == 0.05
    seen = []
    with time_budget.deadline_in_force(time.perf_counter() - 1):
        assert time_budget.out_of_time()
        other = threading.Thread(target=lambda: seen.append(time_budget.regex_timeout(0.05)))
        other.start()
        other.join()
        try:
            time_budget.regex_timeout(0.05)
        except TimeoutError as error:
            seen.append(str(error))
    assert seen == [0.05, "the tool's time budget is spent"]
    assert not time_budget.out_of_time()


def test_diagnosis_finds_nothing_past_its_deadline():
    template = copy.deepcopy(load_template_file("qwen3").response_template)
    template["fields"]["tool_calls"]["close_pattern"] = template["fields"]["tool_calls"][
        "close_pattern"
    ].replace("</tool_call>", "</toolcall>")
    result = trace(QWEN3_CASE.generation, template, prefix=QWEN3_CASE.prefix, on_error="keep")
    assert result.diagnoses[0].code == "near-miss"
    late = diagnose(
        load_template(template),
        prefix=QWEN3_CASE.prefix,
        cut=result.anchor.offset,
        anchor_found=result.anchor.found,
        stream=result.prefix_tail + QWEN3_CASE.generation,
        tail_length=len(result.prefix_tail),
        spans=result.spans,
        deadline=time.perf_counter() - 1,
    )
    assert [d for d in late if d.code == "near-miss"] == []


def test_a_traces_warnings_are_read_within_its_deadline():
    result = trace("</think>x" + QWEN3_CASE.generation, "qwen3", prefix="")
    assert [w.code for w in result.warnings] == ["close-without-open"]
    with time_budget.deadline_in_force(time.perf_counter() - 1):
        assert find_warnings(result.spans, None, load_template("qwen3")) == []


def test_a_pattern_over_the_bounds_is_explained_by_its_bound_and_never_compiled():
    explanation = explain_pattern("a{4294967294}")
    assert explanation.error.startswith("the pattern is too large to compile: over 10,000 pieces")
    assert [piece.kind for piece in explanation.pieces()] == ["other"]
    deep = "(" * 600 + "a" + ")" * 600
    assert (
        explain_pattern(deep).error
        == "the pattern nests groups more than 32 deep (at character 32)"
    )
    assert pieces_taken(deep, "a", 0) is None
