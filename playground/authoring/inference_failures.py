"""A failed or partial inference and the way out: what is wrong, and the edit that fixes it.

An inferred template that fails rows of its matrix is a start, not an answer. The author needs
to know which finding the failing rows contradict and what to change, not forty rows of
details. `failure_groups` reads an inference result (``InferredTemplate.to_dict()``) and
groups its failing rows by the template key they contradict:

- the cause the engine finds in a row's parse (`engine.authoring.diagnosis`: a start anchor
  that cut past the opener the prompt ends with, a near miss of a delimiter), with its edit
  (`Diagnosis.fix`) when one is known;
- else what the row's message shows (`difference_summary`: one field took another's text, a
  field is missing), the field that took the text being the one whose delimiters are wrong;
- a tool-call field the template lacks, while the rows leave the calls in content: the field
  learnt from the rows and the author's outputs and checked against them and the matrix
  (`playground.authoring.call_sketch`, run with the inference: the result's ``call_sketch``),
  offered only when it reads them; else the text that stays unexplained is shown instead.

Each group names the findings of its key (`FailureGroup.findings`, their indices), so the
panel can show the renders behind the finding the rows contradict. `candidate_changes` says how
another candidate differs from the chosen one, key by key, instead of printing both whole.
`failure_views` and `candidate_views` are what the panel shows of them (drawn by
`playground.panels.failing_rows`).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from engine import TemplateError, trace
from engine.chat_templates.conformance import TOOLS
from engine.chat_templates.evidence import differing_keys
from engine.chat_templates.probes import probe_names_in_words

from ..server import limits
from .chat_template_check import difference_summary

# Changes listed per candidate at most, and characters of a value shown.
CHANGES_SHOWN = 6
VALUE_SHOWN = 90


@dataclass
class FailureGroup:
    """Failing rows of one cause.

    Attributes:
        key: the template key the rows contradict (``start_anchor``, ``fields.reasoning_content``).
        cause: one sentence: what is wrong, in the template's terms.
        rows: the rows' indices in the report's situations.
        findings: the indices of the findings of `key` (what inference found there).
        fix: the edit that fixes it, {template key path: new value} (None when none is known).
        sketch: the fix is the tool-call field learnt from the rows and the author's outputs
            and checked against them and the matrix (`playground.authoring.call_sketch`).
        calls: the first group whose rows lose or misread calls: the sketch, or why there is
            none and the text no field reads, is shown with it.
    """

    key: str
    cause: str
    rows: list[int] = field(default_factory=list)
    findings: list[int] = field(default_factory=list)
    fix: dict | None = None
    sketch: bool = False
    calls: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


def _gained(expected: dict, got: dict) -> list[str]:
    """The keys of `got` holding text `expected` does not give them (another field's, say)."""
    found = []
    for key, value in got.items():
        if key == "role" or value == expected.get(key):
            continue
        before = expected.get(key)
        if before is None or (
            isinstance(value, str) and isinstance(before, str) and len(value) > len(before)
        ):
            found.append(key)
    return found


def _field_key(key: str) -> str:
    """The field part of a template key path (``fields.x.close_pattern`` -> ``fields.x``)."""
    parts = key.split(".")
    if parts[0] == "fields" and len(parts) > 2:
        return ".".join(parts[:2])
    return "start_anchor" if key.startswith("start_anchor") else key


# How a conformance row's detail starts when its parse reported an error.
FAILED_PARSE = "the parse failed: "


def _row_cause(row: dict, template: dict, deadline: float) -> tuple[str, str, dict | None]:
    """(template key, cause, fix) of one failing row: the leading diagnosis of its parse (traced
    within the parse's caps and by `deadline`, a `time.perf_counter()` value), else what its
    message shows (also when the trace stopped at a cap or the deadline)."""
    from ..parse.causes import brief, leading_of

    caps = limits.current()
    found = None
    if time.perf_counter() < deadline:
        try:
            result = trace(
                row["generation"],
                template,
                prefix=row["prompt"],
                tools=TOOLS if row.get("tools") else None,
                on_error="keep",
                regex_timeout=caps.regex_seconds,
                deadline=deadline,
                max_regions=caps.regions,
                max_value_chars=caps.value_chars,
            )
            found = leading_of(result.diagnoses)
        except (TemplateError, ValueError):  # a parse stopped by a cap or the deadline too
            found = None
    if found is not None:
        return found.key, brief(found), found.fix
    expected, got = row.get("expected") or {}, row.get("got") or {}
    gained, lost = _gained(expected, got), [k for k in expected if k != "role" and k not in got]
    if "tool_calls" in lost and "tool_calls" not in template.get("fields", {}):
        return (
            "fields.tool_calls",
            "the template has no tool_calls field: the calls are read as text",
            None,
        )
    if gained and lost:
        took = gained[0]
        return (
            f"fields.{took}",
            f"{took} took the text of {', '.join(lost)}: its delimiters do not end it where the chat template does",
            None,
        )
    if "tool_calls" in lost:
        return (
            "fields.tool_calls",
            "no tool_calls region opened: its open delimiter does not match the calls the chat template writes",
            None,
        )
    # The keys the one comparison of a parse with its expected message finds different.
    changed = gained or lost or [key for key, _ in differing_keys(expected, got)]
    failed = str(row.get("detail") or "").removeprefix(FAILED_PARSE)
    if not changed and failed != row.get("detail"):
        # The message is right, but reading it took a lenient reading: the error names its key.
        key = failed.split(":", 1)[0]
        if key.startswith(("fields.", "start_anchor")):
            return key, failed, None
    key = f"fields.{changed[0]}" if changed and changed[0] != "role" else "fields"
    return key, difference_summary(expected, got, template), None


def failure_groups(result: dict, deadline: float | None = None) -> list[FailureGroup]:
    """The failing rows of an inference result by the template key they contradict, the most
    rows first, each with the findings of that key and the fix when one is known.

    Each failing row is traced in this process, all of them together within one parse's
    budget: by `deadline` (a `time.perf_counter()` value; default PLAYGROUND_LIMITS
    `parse_seconds` from now), each within `regions` and `value_chars`. A row whose trace
    stops is grouped by what its message shows."""
    deadline = limits.deadline("parse_seconds") if deadline is None else deadline
    template = result["template"]
    rows = result["report"]["situations"]
    groups: dict[tuple[str, str], FailureGroup] = {}
    for index, row in enumerate(rows):
        if row["passed"] or not row["renderable"] or row.get("prompt") is None:
            continue
        key, cause, fix = _row_cause(row, template, deadline)
        group = groups.setdefault((key, cause), FailureGroup(key, cause, fix=fix))
        group.rows.append(index)
    found = sorted(groups.values(), key=lambda group: -len(group.rows))
    findings = result.get("findings", [])
    for group in found:
        wanted = _field_key(group.key)
        group.findings = [
            i
            for i, finding in enumerate(findings)
            if finding["key"] == wanted or finding["key"].startswith(wanted + ".")
        ]
    sketch = result.get("call_sketch") or {}
    about_calls = next(
        (
            group
            for group in found
            if _field_key(group.key) == "fields.tool_calls"
            or any(_misreads_calls(rows[i]) for i in group.rows)
        ),
        None,
    )
    if about_calls is not None and sketch:
        about_calls.calls = True
        if sketch.get("fix") and not about_calls.fix:
            about_calls.fix, about_calls.sketch = sketch["fix"], True
    return found


def _misreads_calls(row: dict) -> bool:
    """Whether a row expects calls its parse did not give as expected."""
    expected = (row.get("expected") or {}).get("tool_calls")
    return bool(expected) and (row.get("got") or {}).get("tool_calls") != expected


def _flat(value: Any, path: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        found: dict[str, Any] = {}
        for key, item in value.items():
            found.update(_flat(item, f"{path}.{key}" if path else key))
        return found
    return {path: value}


def candidate_changes(chosen: dict, other: dict) -> list[tuple[str, Any, Any]]:
    """How `other` differs from `chosen`, key path by key path: (path, chosen's value, other's);
    a whole field present in one only is one change (None for the side that lacks it)."""
    changes = []
    chosen_fields, other_fields = chosen.get("fields", {}), other.get("fields", {})
    for name in chosen_fields.keys() - other_fields.keys():
        changes.append((f"fields.{name}", chosen_fields[name], None))
    for name in other_fields.keys() - chosen_fields.keys():
        changes.append((f"fields.{name}", None, other_fields[name]))
    shared = {
        **{k: v for k, v in chosen.items() if k != "fields"},
        "fields": {k: v for k, v in chosen_fields.items() if k in other_fields},
    }
    theirs = {
        **{k: v for k, v in other.items() if k != "fields"},
        "fields": {k: v for k, v in other_fields.items() if k in chosen_fields},
    }
    mine, yours = _flat(shared), _flat(theirs)
    for path in [*mine, *(p for p in yours if p not in mine)]:
        if mine.get(path) != yours.get(path):
            changes.append((path, mine.get(path), yours.get(path)))
    return sorted(changes, key=lambda change: change[0])


def _value(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= VALUE_SHOWN else text[: VALUE_SHOWN - 1] + "…"


@dataclass(frozen=True)
class Change:
    """One change of a template as shown: its key path, `kind` ("add": `before` is None, a key
    set; "remove": `after` is None, a key the other lacks; "change"), and the values as JSON
    cut to VALUE_SHOWN characters ("" for the side that has none)."""

    path: str
    kind: str
    before: str = ""
    after: str = ""


def change_of(path: str, before: Any, after: Any) -> Change:
    """The `Change` of `path` from `before` to `after` (None: the key is not there)."""
    if before is None:
        return Change(path, "add", after=_value(after))
    if after is None:
        return Change(path, "remove", before=_value(before))
    return Change(path, "change", _value(before), _value(after))


@dataclass(frozen=True)
class FailureView:
    """A `FailureGroup` as the panel shows it, in the author's words.

    Attributes:
        index: the group's index (its Apply button's ``data-apply``).
        key, cause: the template key the rows contradict, and what is wrong.
        rows: how many rows; `row_names`: the first three names (and how many more).
        findings: what inference found there, (finding index, key, value as JSON) each, the
            first four.
        edits: the fix as changes ([] when none is known); `apply_label`: its button's text;
            `sketch`: the fix is the sketched tool-call field, `sketch_how` how it was learnt
            and checked.
        no_sketch: why no tool-call field is offered ("" when it is not said); `unexplained`:
            then the text of each row or output no field reads (``{"label", "text", "spans"}``).
    """

    index: int
    key: str
    cause: str
    rows: int
    row_names: str
    findings: list[tuple[int, str, str]]
    edits: list[Change]
    apply_label: str = ""
    sketch: bool = False
    sketch_how: str = ""
    no_sketch: str = ""
    unexplained: list[dict] = field(default_factory=list)


def failure_views(groups: list[dict], result: dict) -> list[FailureView]:
    """The failing rows by cause (`groups`: `FailureGroup.to_dict()`s of `result`, an inference
    result) as shown: the key, the cause, the rows, the findings to look at, and the edit with
    its Apply label when one is known, else why no tool-call field is offered."""
    rows = result["report"]["situations"]
    findings = result.get("findings", [])
    sketch = result.get("call_sketch") or {}
    views = []
    for index, group in enumerate(groups):
        names = ", ".join(rows[i]["name"] for i in group["rows"][:3]) + (
            f" and {len(group['rows']) - 3} more" if len(group["rows"]) > 3 else ""
        )
        view = FailureView(
            index,
            group["key"],
            probe_names_in_words(group["cause"]),
            len(group["rows"]),
            names,
            [(i, findings[i]["key"], _value(findings[i]["value"])) for i in group["findings"][:4]],
            [change_of(path, None, value) for path, value in (group["fix"] or {}).items()],
        )
        if group["fix"]:
            view = replace(
                view,
                apply_label="Apply the sketch" if group["sketch"] else "Apply the fix",
                sketch=bool(group["sketch"]),
                sketch_how=probe_names_in_words(sketch.get("how", "")) if group["sketch"] else "",
            )
        elif group.get("calls") and sketch.get("how"):
            view = replace(
                view,
                no_sketch=probe_names_in_words(sketch["how"]),
                unexplained=_unread_elsewhere(sketch, result),
            )
        views.append(view)
    return views


def _unread_elsewhere(sketch: dict, result: dict) -> list[dict]:
    """The text of each row or output no field reads, from the sketch (an output of the
    author's whose unread text the panel shows already is not shown twice)."""
    outputs = result.get("example_outputs") or []
    shown = {outputs[int(i)] for i in result.get("unexplained") or {} if int(i) < len(outputs)}
    return [entry for entry in sketch.get("unexplained", []) if entry["text"] not in shown]


@dataclass(frozen=True)
class CandidateView:
    """A candidate inference checked, as shown: passed or not, its description, its matrix
    counts, how many examples it misreads, whether it is the chosen template, else how it
    differs from it (the first CHANGES_SHOWN changes, and how many more)."""

    passed: bool
    description: str
    passed_rows: int
    failed_rows: int
    misread: int
    chosen: bool
    changes: list[Change]
    more: int


def candidate_views(result: dict) -> list[CandidateView]:
    """The candidates of `result` (an inference result), each with its changes against the
    chosen template."""
    chosen = result["template"]
    views = []
    for candidate in result.get("candidates", []):
        is_chosen = candidate["template"] == chosen
        changes = [] if is_chosen else candidate_changes(chosen, candidate["template"])
        views.append(
            CandidateView(
                candidate["passed"],
                candidate["description"],
                candidate["counts"]["passed"],
                candidate["counts"]["failed"],
                len(candidate.get("example_problems") or []),
                is_chosen,
                [change_of(*change) for change in changes[:CHANGES_SHOWN]],
                max(0, len(changes) - CHANGES_SHOWN),
            )
        )
    return views
