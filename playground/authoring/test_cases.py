"""Per-template test cases: prefix / output / expected-message triples, re-run on every edit.

The cases are JSON text the visitor can edit: a list of
``{"name", "prefix", "generation", "expected"}`` (and optional ``"tools"``).
A shipped template starts with its family's samples from `samples/` as cases.
`run_cases` parses each with the editor's template and diffs the message it
got against the expected one.
"""

from __future__ import annotations

import difflib
import html
import json
from dataclasses import dataclass

from engine import ParseDeadlineError, ResponseParser, TemplateError

from ..catalog import samples_by_id
from ..server import limits
from ..server.input_readers import InputError, read_json
from ..server.redact import redact

# Cases run on each edit at most (the rest are reported as not run).
CASES_RUN = 40


@dataclass(frozen=True)
class CaseResult:
    """One case's outcome: `passed`, the message `got` (or None), `error`, and the diff lines."""

    name: str
    passed: bool
    expected: dict | None
    got: dict | None
    error: str | None
    diff: list[str]


def cases_for_template(template_name: str | None, template: dict | None = None) -> list[dict]:
    """The samples of a shipped template (by name), or those whose template equals `template`, as cases."""
    cases = []
    for sample in samples_by_id().values():
        if sample.expected is None:
            continue
        if sample.template_name == template_name or (
            template is not None and sample.template == template
        ):
            case = {
                "name": sample.id,
                "prefix": sample.prefix,
                "generation": sample.generation,
                "expected": sample.expected,
            }
            if sample.tools:
                case["tools"] = sample.tools
            cases.append(case)
    return cases


def cases_text(cases: list[dict]) -> str:
    return json.dumps(cases, ensure_ascii=False, indent=2)


def read_cases(text: str) -> list[dict]:
    """The cases from their JSON text. Raises InputError naming what is wrong."""
    if not (text or "").strip():
        return []
    caps = limits.current()
    cases = read_json(text, "The test cases", caps.prefix_chars + caps.generation_chars)
    if not isinstance(cases, list):
        raise InputError(
            'The test cases must be a list like [{"name": ..., "prefix": ..., "generation": ..., "expected": {...}}].'
        )
    for number, case in enumerate(cases, 1):
        if (
            not isinstance(case, dict)
            or not isinstance(case.get("generation"), str)
            or not isinstance(case.get("expected"), dict)
        ):
            raise InputError(
                f'Test case {number} needs a "generation" (text) and an "expected" message (an object).'
            )
    return cases


def _diff(expected: dict | None, got: dict | None) -> list[str]:
    def lines(message):
        return json.dumps(message, ensure_ascii=False, indent=2, sort_keys=True).splitlines()

    return list(
        difflib.unified_diff(lines(expected), lines(got), "expected", "got", lineterm="", n=2)
    )


def run_cases(template: dict, cases: list[dict]) -> list[CaseResult]:
    """Parse every case (up to CASES_RUN) with `template`; each result diffs expected and got."""
    results = []
    caps = limits.current()
    deadline = limits.deadline("parse_seconds")  # all the cases together, as one parse
    for number, case in enumerate(cases[:CASES_RUN], 1):
        name = str(case.get("name") or f"case {number}")
        try:
            # `parse_response` as a server runs it: within the parse's regions and value limits.
            parser = ResponseParser(
                template,
                prefix=case.get("prefix") or "",
                tools=case.get("tools"),
                regex_timeout=caps.regex_seconds,
                deadline=deadline,
                max_regions=caps.regions,
                max_value_chars=caps.value_chars,
            )
            got, error = parser.finalize(case["generation"])[0], None
        except ParseDeadlineError:
            got, error = None, limits.over_budget("parse_seconds", "Running the test cases")
        except (TemplateError, ValueError) as caught:
            got, error = None, redact(f"{type(caught).__name__}: {caught}")
        passed = error is None and got == case["expected"]
        results.append(
            CaseResult(
                name,
                passed,
                case["expected"],
                got,
                error,
                [] if passed else _diff(case["expected"], got),
            )
        )
    return results


def results_html(results: list[CaseResult], total: int, problem: str = "") -> str:
    """The results panel: a summary line, then each case with its diff when it fails."""
    if problem:
        return f'<div class="rt-diag rt-diag-error">⛔ {html.escape(problem)}</div>'
    if not results:
        return '<div class="rt-muted" id="test-summary">No test cases: add the current input as one, or write them as JSON below.</div>'
    passed = sum(r.passed for r in results)
    summary = f"{passed} of {len(results)} cases pass" + (
        f" ({total - len(results)} more not run)" if total > len(results) else ""
    )
    kind = "rt-status-ok" if passed == len(results) else "rt-status-error"
    out = [
        f'<div class="rt-status {kind}" id="test-summary" data-passed="{passed}" data-total="{len(results)}">{summary}</div>'
    ]
    for result in results:
        mark = "✔" if result.passed else "✘"
        out.append(
            f'<details class="rt-case" {"" if result.passed else "open"}><summary>{mark} {html.escape(result.name)}</summary>'
        )
        if result.error:
            out.append(f'<div class="rt-diag rt-diag-error">{html.escape(result.error)}</div>')
        if result.diff:
            lines = []
            for line in result.diff:
                kind = (
                    "rt-add" if line.startswith("+") else "rt-del" if line.startswith("-") else ""
                )
                lines.append(f'<span class="{kind}">{html.escape(line)}</span>')
            out.append('<pre class="rt-diff">' + "\n".join(lines) + "</pre>")
        out.append("</details>")
    return "".join(out)
