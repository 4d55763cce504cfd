"""The Tests panel: the test cases' results (`playground.authoring.test_cases.run_cases`), a
summary line by kind of case, then each case with its diff when it fails. A matrix row or a
sample has a *Use as example* button (``data-use``: its index), an unverified case (one with a
``check`` note) is marked so, with a *Confirm* button (``data-confirm``); TESTS_JS sends both."""

from __future__ import annotations

from .fragments import draw

# The kinds of case, by their source, as the summary and each case name them.
KINDS = (("output", "your outputs"), ("matrix", "matrix rows"), ("sample", "samples"))
CASE_KINDS = {"matrix": "matrix row", "sample": "sample"}


def results_html(results: list, total: int, problem: str = "") -> str:
    """The results panel for `results` (`CaseResult`s: ``name``, ``source``, ``passed``,
    ``check``, ``error``, ``diff`` lines) of `total` cases (the rest were not run), or
    `problem` (why the cases or the template cannot be read) as an error."""
    passed = sum(result.passed for result in results)
    summary = f"{passed} of {len(results)} cases pass" + (
        f" ({total - len(results)} more not run)" if total > len(results) else ""
    )
    kinds = [
        (label, [r for r in results if (r.source or "output") == source]) for source, label in KINDS
    ]
    shown = [(label, found) for label, found in kinds if found]
    if len(shown) > 1:
        summary += ": " + ", ".join(
            f"{sum(r.passed for r in found)} of {len(found)} {label}" for label, found in shown
        )
    cases = [
        {
            "result": result,
            "index": index,
            "kind": CASE_KINDS.get(result.source, "your output"),
            "made": result.source in CASE_KINDS,
            "lines": [
                (
                    "rt-add" if line.startswith("+") else "rt-del" if line.startswith("-") else "",
                    line,
                )
                for line in result.diff or []
            ],
        }
        for index, result in enumerate(results)
    ]
    return draw(
        "test_results",
        problem=problem,
        cases=cases,
        passed=passed,
        summary=summary,
        newline="\n",
    )
