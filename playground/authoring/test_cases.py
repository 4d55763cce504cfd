"""Per-template test cases: prefix / output / expected-message triples, re-run on every edit.

The cases are JSON text the visitor can edit: a list of
``{"name", "prefix", "generation", "expected"}`` (and optional ``"tools"`` and
``"source"``). A shipped template starts with its family's samples from
`samples/` as cases (``"source": "sample"``); a template inferred from a chat
template with that chat template's matrix rows (``"source": "matrix"``,
`matrix_cases`), never another family's samples; the author's own outputs
(added from the workspace, ``"source": "output"``, or written by hand with no
source; one recorded from a parse that probably lost text carries ``"check"`` until
the author corrects its expected message) come first, are kept across inferences, and are what inference takes
as examples (`author_cases`, `as_examples`; downloaded as the JSONL file that
`python -m engine infer --examples` reads). `run_cases` parses each with the
editor's template and diffs the message it got against the expected one.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass

from engine import ParseDeadlineError, ResponseParser, TemplateError

from ..catalog import samples_by_id
from ..server import limits
from ..server.input_readers import InputError, read_json
from ..server.redact import in_words, redact

# Cases run on each edit at most (the rest are reported as not run): the author's outputs and
# a chat template's matrix (40 rows at most) fit.
CASES_RUN = 80
# The sources of cases the page makes itself; any other case is one of the author's outputs.
MADE_SOURCES = ("sample", "matrix")
# The "check" of a case recorded from a parse that probably lost text: its expected message is
# not sent to inference as evidence while it is there.
CHECK_NOTE = (
    "recorded from a parse that probably lost text: correct expected, then delete this line"
)
# The "check" of an output generated live and added with "Use as example": inference gets its
# output and tools, not the message it parsed to, until the author checks that message.
LIVE_NOTE = (
    "generated live: sent to inference as an output with its tools; check expected, then "
    "delete this line to send the message too"
)


@dataclass(frozen=True)
class CaseResult:
    """One case's outcome: `passed`, the message `got` (or None), `error`, the diff lines, the
    case's `source` ("sample", "matrix", "output" or "") and its `check` note ("" when none)."""

    name: str
    passed: bool
    expected: dict | None
    got: dict | None
    error: str | None
    diff: list[str]
    source: str = ""
    check: str = ""


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
                "source": "sample",
                "prefix": sample.prefix,
                "generation": sample.generation,
                "expected": sample.expected,
            }
            if sample.tools:
                case["tools"] = sample.tools
            cases.append(case)
    return cases


def matrix_cases(rows: list[dict], tools: list[dict]) -> list[dict]:
    """The renderable rows of a chat-template check (``ConformanceReport.to_dict()``'s
    situations) as cases: each row's prompt, its generation and the message the chat template
    wrote (`tools` where the check gave them)."""
    cases = []
    for row in rows:
        if not row["renderable"] or row.get("expected") is None or row.get("prompt") is None:
            continue
        case = {
            "name": row["name"],
            "source": "matrix",
            "prefix": row["prompt"],
            "generation": row["generation"],
            "expected": row["expected"],
        }
        if row.get("tools"):
            case["tools"] = tools
        cases.append(case)
    return cases


def author_cases(cases: list[dict]) -> list[dict]:
    """The author's own outputs among `cases`: every case the page did not make itself."""
    return [case for case in cases if case.get("source") not in MADE_SOURCES]


def as_examples(cases: list[dict]) -> list[dict]:
    """Cases as inference's example outputs: ``{"prefix", "output", "tools"?, "expected"?}``;
    the expected message of a case still marked ``"check"`` is left out (only plausibility is
    asked of the output)."""
    examples = []
    for case in cases:
        example = {"prefix": case.get("prefix") or "", "output": case["generation"]}
        if "check" not in case:
            example["expected"] = case["expected"]
        if case.get("tools"):
            example["tools"] = case["tools"]
        examples.append(example)
    return examples


def examples_jsonl(cases: list[dict]) -> str:
    """`cases` as a JSONL file of example outputs, one a line (what `--examples` reads)."""
    return "".join(json.dumps(example, ensure_ascii=False) + "\n" for example in as_examples(cases))


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
            got, error = None, redact(in_words(type(caught).__name__, caught))
        passed = error is None and got == case["expected"]
        results.append(
            CaseResult(
                name,
                passed,
                case["expected"],
                got,
                error,
                # A parse that failed has no message to diff: its error says why.
                [] if passed or got is None else _diff(case["expected"], got),
                str(case.get("source") or ""),
                str(case.get("check") or ""),
            )
        )
    return results
