"""Per-template test cases: prefix / output / expected-message triples, re-run on every edit.

The cases are JSON text the visitor can edit: a list of
``{"name", "prefix", "generation", "expected"}`` (and optional ``"tools"`` and
``"source"``). A shipped template starts with its family's samples from
`samples/` as cases (``"source": "sample"``); a template inferred from a chat
template with that chat template's matrix rows (``"source": "matrix"``,
`matrix_cases`), never another family's samples; the author's own outputs
(added from the workspace, from Generate live or from another case with one click,
``"source": "output"``, or written by hand with no source; one recorded from a parse with
errors or warnings carries a ``"check"`` note, and is unverified until the author confirms its
expected message) come first, are kept across inferences, and are what inference takes as
examples (`author_cases`, `as_examples`; downloaded as the JSONL file that
`python -m engine infer --examples` reads). Each case is read as the one record of a labelled
output (`case_example`: `engine.chat_templates.evidence.Example`) and `run_cases` decides it
with the one comparison inference uses (`Example.differences`), so a case Infer reads right
passes here too; a unified diff of expected and got shows how a failing one differs.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine import ParseDeadlineError, ResponseParser, TemplateError
from engine.chat_templates.evidence import Example

from ..catalog import samples_by_id
from ..server import limits
from ..server.input_readers import InputError, read_json
from ..server.redact import in_words, redact

# Cases run on each edit at most (the rest are reported as not run): the author's outputs and
# a chat template's matrix (40 rows at most) fit.
CASES_RUN = 80
# The sources of cases the page makes itself; any other case is one of the author's outputs.
MADE_SOURCES = ("sample", "matrix")
# The most characters of the reason a case is unverified quoted in its note.
REASON_SHOWN = 160


def unverified_note(reasons: list[str]) -> str:
    """The ``"check"`` note of a case recorded from a parse with errors or warnings (`reasons`,
    a sentence each; "" when there are none): while a case has it, it is unverified and
    inference gets its output and tools, not its expected message."""
    if not reasons:
        return ""
    reason = " ".join(reasons[0].split())
    if len(reason) > REASON_SHOWN:
        reason = reason[: REASON_SHOWN - 1].rstrip() + "…"
    return (
        f"unverified: recorded from a parse with errors or warnings ({reason}); correct "
        "expected if needed, then Confirm"
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


def matrix_cases(rows: list[dict], tools: list[dict], besides: Sequence[dict] = ()) -> list[dict]:
    """The renderable rows of a chat-template check (``ConformanceReport.to_dict()``'s
    situations) as cases: each row's prompt, its generation and the message the chat template
    wrote (`tools` where the check gave them). A row `besides` already holds (the same prompt
    and generation: one the author made an example) is left out, so it is listed once."""
    held = {(case.get("prefix") or "", case["generation"]) for case in besides}
    cases = []
    for row in rows:
        if not row["renderable"] or row.get("expected") is None or row.get("prompt") is None:
            continue
        if (row["prompt"], row["generation"]) in held:
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


def case_example(case: dict, index: int = 0) -> Example:
    """A case (as `read_cases` checked it) as the one record of a labelled output: its prefix,
    generation, tools and expected message, named by its name (else "case INDEX+1")."""
    return Example(
        index,
        case.get("prefix") or "",
        case["generation"],
        case.get("tools") or None,
        case["expected"],
        "case",
        str(case.get("name") or ""),
    )


def as_examples(cases: list[dict]) -> list[dict]:
    """Cases as inference's example outputs: ``{"prefix", "output", "tools"?, "expected"?}``;
    the expected message of an unverified case (still marked ``"check"``) is left out (only
    plausibility is asked of the output)."""
    examples = []
    for index, case in enumerate(cases):
        example = case_example(case, index)
        examples.append((replace(example, expected=None) if "check" in case else example).to_dict())
    return examples


def use_as_example(cases: list[dict], index: int) -> list[dict]:
    """`cases` with the one at `index` made one of the author's outputs (``"source": "output"``,
    placed after the others), so inference takes it as an example. A matrix row's or a sample's
    expected message is the chat template's or the sample file's own: it is verified. An index
    out of range, or a case already the author's, leaves `cases` as they are (a copy)."""
    if not 0 <= index < len(cases) or cases[index].get("source") not in MADE_SOURCES:
        return list(cases)
    mine = author_cases(cases)
    chosen = {**cases[index], "source": "output"}
    rest = [case for number, case in enumerate(cases) if number != index and case not in mine]
    return [*mine, chosen, *rest]


def confirm_case(cases: list[dict], index: int) -> list[dict]:
    """`cases` with the ``"check"`` note of the one at `index` removed: the author confirms its
    expected message as it stands, and inference gets it from now on (a copy; an index out of
    range changes nothing)."""
    return [
        {key: value for key, value in case.items() if key != "check"} if number == index else case
        for number, case in enumerate(cases)
    ]


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
        passed = error is None and not case_example(case, number - 1).differences(got)
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
