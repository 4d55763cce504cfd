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
- a tool-call field the template lacks, while the rows leave the calls in content: a field
  sketched from that text (`sketch_tool_calls`: the marker before the calls, the marker after
  them, the payload read as JSON), marked as a sketch: no render has checked it.

Each group names the findings of its key (`FailureGroup.findings`, their indices), so the
panel can show the renders behind the finding the rows contradict. `candidate_changes` says how
another candidate differs from the chosen one, key by key, instead of printing both whole.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from engine import TemplateError, trace
from engine.chat_templates.conformance import TOOLS
from engine.chat_templates.markup import MARKUP_TOKEN
from engine.chat_templates.probes import probe_names_in_words

from ..panels.markup import escape, key_path
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
        sketch: the fix is a sketch from the evidence, not checked by any render.
    """

    key: str
    cause: str
    rows: list[int] = field(default_factory=list)
    findings: list[int] = field(default_factory=list)
    fix: dict | None = None
    sketch: bool = False

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


def _row_cause(row: dict, template: dict) -> tuple[str, str, dict | None]:
    """(template key, cause, fix) of one failing row: the leading diagnosis of its parse, else
    what its message shows."""
    from ..parse.causes import brief, leading_of

    try:
        result = trace(
            row["generation"],
            template,
            prefix=row["prompt"],
            tools=TOOLS if row.get("tools") else None,
            on_error="keep",
            regex_timeout=limits.current().regex_seconds,
        )
        found = leading_of(result.diagnoses)
    except (TemplateError, ValueError):
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
    changed = (
        gained or lost or [k for k in set(expected) | set(got) if expected.get(k) != got.get(k)]
    )
    key = f"fields.{changed[0]}" if changed and changed[0] != "role" else "fields"
    return key, difference_summary(expected, got, template), None


def _extra_text(expected: str, got: str) -> str:
    """What `got` holds besides `expected` (a text field that took another's text)."""
    expected, got = (expected or "").strip(), (got or "").strip()
    at = got.find(expected) if expected else 0
    if at < 0:
        return got
    return (got[:at] + got[at + len(expected) :]).strip()


def sketch_tool_calls(rows: list[dict]) -> dict | None:
    """A tool-call field sketched from the calls `rows` left in content: the marker the text
    starts with as the open, the one it ends with as the close, the payload between as JSON
    (read into calls when its objects hold a name and arguments). None when the text has no
    markers around it."""
    for row in rows:
        expected, got = row.get("expected") or {}, row.get("got") or {}
        text = _extra_text(expected.get("content") or "", got.get("content") or "")
        opened = MARKUP_TOKEN.match(text)
        closes = [m for m in MARKUP_TOKEN.finditer(text) if m.end() == len(text)]
        if not opened or not closes or closes[-1].start() < opened.end():
            continue
        sketch: dict[str, Any] = {
            "open": opened.group(),
            "close": closes[-1].group(),
            "content": "json",
        }
        try:
            payload = json.loads(text[opened.end() : closes[-1].start()])
        except ValueError:
            payload = None
        items = payload if isinstance(payload, list) else [payload]
        if items and all(isinstance(item, dict) for item in items):
            keys = set(items[0])
            arguments = next((k for k in ("arguments", "parameters") if k in keys), None)
            if "name" in keys and arguments:
                call = {
                    "type": "function",
                    "function": {"name": "{name}", "arguments": "{" + arguments + "}"},
                }
                if isinstance(payload, list):
                    sketch["transform_each"] = True
                sketch["transform"] = call
        return sketch
    return None


def sketch_problem(template: dict, rows: list[dict], examples: list[dict]) -> str | None:
    """What `template` (with a sketched field) fails to read, or None when it reads every row
    that has tool calls and every example.

    Args:
        template: the template with the sketch applied (`apply_edit`).
        rows: matrix rows (``SituationResult.to_dict()``); the renderable ones that expect tool
            calls must give their expected message.
        examples: the author's outputs (``{"prefix", "output", "tools"?, "expected"?}``): each
            must parse, to its expected message when it has one.

    Returns:
        one phrase naming the first row or example left unexplained and why, or None. A message
        read means its text fields as expected and as many tool calls: a sketch of calls the
        template language cannot turn into name and arguments still reads them out of content.
    """
    from engine import ResponseParseError, parse_response

    def reads(prefix: str, output: str, tools, expected) -> str | None:
        try:
            got = parse_response(
                output,
                template,
                prefix=prefix,
                tools=tools,
                regex_timeout=limits.current().regex_seconds,
            )
        except (ResponseParseError, TemplateError, ValueError) as error:
            return str(error)
        if expected is None:
            return None
        # Read: the text fields as expected and as many calls, each a call (a sketch of a form
        # the language cannot turn into name and arguments still keeps the calls out of content).
        calls, wanted = got.get("tool_calls") or [], expected.get("tool_calls") or []
        others = {k: v for k, v in expected.items() if k != "tool_calls"}
        if {k: v for k, v in got.items() if k != "tool_calls"} != others or len(calls) != len(
            wanted
        ):
            return difference_summary(expected, got, template)
        return None

    for row in rows:
        if not row.get("renderable") or "tool_calls" not in (row.get("expected") or {}):
            continue
        why = reads(
            row.get("prompt") or "",
            row.get("generation") or "",
            TOOLS if row.get("tools") else None,
            row["expected"],
        )
        if why:
            return f"matrix row {row['name']} ({why})"
    for number, example in enumerate(examples, 1):
        why = reads(
            example.get("prefix") or "",
            example.get("output") or "",
            example.get("tools"),
            example.get("expected"),
        )
        if why:
            return f"example {number} ({why})"
    return None


def failure_groups(result: dict, examples: list[dict] = ()) -> list[FailureGroup]:
    """The failing rows of an inference result by the template key they contradict, the most
    rows first, each with the findings of that key and the fix when one is known.

    A tool-call field sketched from the rows is offered only when the template with it reads
    every matrix row that has calls and every one of `examples` (the author's outputs, as
    `sketch_problem` takes them); otherwise the group's cause says what stays unexplained."""
    template = result["template"]
    rows = result["report"]["situations"]
    groups: dict[tuple[str, str], FailureGroup] = {}
    for index, row in enumerate(rows):
        if row["passed"] or not row["renderable"] or row.get("prompt") is None:
            continue
        key, cause, fix = _row_cause(row, template)
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
        if group.key == "fields.tool_calls" and "tool_calls" not in template.get("fields", {}):
            sketch = sketch_tool_calls([rows[i] for i in group.rows])
            if sketch is not None:
                fix = {"fields.tool_calls": sketch}
                problem = sketch_problem(apply_edit(template, fix), rows, list(examples))
                if problem is None:
                    group.fix, group.sketch = fix, True
                else:
                    group.cause += (
                        f"; a field reading the calls between {sketch['open']!r} and "
                        f"{sketch['close']!r} as {sketch['content']} was tried, but it leaves "
                        f"{problem} unexplained, so no sketch is offered"
                    )
    return found


def apply_edit(template: dict, fix: dict) -> dict:
    """`template` with each {key path: value} of `fix` set (a new field goes before the
    implicit field, where a reader looks for it). `template` is not changed."""
    changed = json.loads(json.dumps(template))
    for path, value in fix.items():
        parts = path.split(".")
        if parts[0] == "start_anchor" or parts[0] == "start_anchor_pattern":
            changed.pop("start_anchor", None)
            changed.pop("start_anchor_pattern", None)
        target = changed
        for part in parts[:-1]:
            target = target.setdefault(part, {})
        if parts[:-1] == ["fields"] and parts[-1] not in target:
            items = list(target.items())
            at = next(
                (
                    i
                    for i, (_, spec) in enumerate(items)
                    if "open" not in spec and "open_pattern" not in spec
                ),
                len(items),
            )
            items.insert(at, (parts[-1], value))
            target.clear()
            target.update(items)
        else:
            target[parts[-1]] = value
    return changed


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


def _change_html(path: str, before: Any, after: Any) -> str:
    if before is None:
        return f'<li class="rt-add"><code>+ {escape(path)}</code> = <code>{escape(_value(after))}</code></li>'
    if after is None:
        return f'<li class="rt-del"><code>− {escape(path)}</code> (not in this candidate)</li>'
    return (
        f'<li><code>{escape(path)}</code>: <code class="rt-del">{escape(_value(before))}</code> → '
        f'<code class="rt-add">{escape(_value(after))}</code></li>'
    )


def candidates_html(result: dict) -> str:
    """The candidates checked, each as its counts and how it differs from the chosen template."""
    chosen = result["template"]
    parts = [
        '<div class="rt-candidates" id="inference-candidates"><div class="rt-evidence-label">Candidates checked</div>'
    ]
    for candidate in result.get("candidates", []):
        counts = candidate["counts"]
        mark = "✔" if candidate["passed"] else "✘"
        head = (
            f'<div class="rt-candidate">{mark} {escape(candidate["description"])} '
            f'<span class="rt-finding-how">({counts["passed"]} passed, {counts["failed"]} failed'
            + (
                f"; misreads {len(candidate['example_problems'])} example(s)"
                if candidate.get("example_problems")
                else ""
            )
            + ")</span>"
        )
        if candidate["template"] == chosen:
            parts.append(head + ' <span class="rt-badge rt-pass rt-small">chosen</span></div>')
            continue
        changes = candidate_changes(chosen, candidate["template"])
        listed = "".join(_change_html(*change) for change in changes[:CHANGES_SHOWN])
        more = (
            f"<li>… and {len(changes) - CHANGES_SHOWN} more</li>"
            if len(changes) > CHANGES_SHOWN
            else ""
        )
        parts.append(
            f'{head}<ul class="rt-changes">{listed or "<li>the same template</li>"}{more}</ul></div>'
        )
    parts.append("</div>")
    return "".join(parts)


def failures_html(groups: list[dict], result: dict) -> str:
    """The failing rows by cause: the key, the cause, the rows, the findings to look at (buttons
    showing their renders), and the edit with an Apply button (``data-apply``) when known."""
    if not groups:
        return ""
    rows = result["report"]["situations"]
    findings = result.get("findings", [])
    parts = [
        '<div class="rt-failures" id="inference-failures"><div class="rt-evidence-label">What fails, and the way out</div>'
    ]
    for index, group in enumerate(groups):
        names = ", ".join(rows[i]["name"] for i in group["rows"][:3]) + (
            f" and {len(group['rows']) - 3} more" if len(group["rows"]) > 3 else ""
        )
        parts.append(
            f'<div class="rt-failure" data-group="{index}"><div class="rt-failure-head">'
            f"<b>{len(group['rows'])} row{'s' if len(group['rows']) != 1 else ''}</b> contradict "
            f'<code class="rt-key">{key_path(group["key"])}</code>: {escape(probe_names_in_words(group["cause"]))}</div>'
            f'<div class="rt-finding-how">{escape(names)}</div>'
        )
        if group["findings"]:
            buttons = "".join(
                f'<button type="button" class="rt-finding" data-finding="{i}"><code class="rt-key">'
                f"{key_path(findings[i]['key'])}</code> = <code>{escape(_value(findings[i]['value']))}</code></button>"
                for i in group["findings"][:4]
            )
            parts.append(
                f'<div class="rt-failure-findings">what inference found there: {buttons}</div>'
            )
        if group["fix"]:
            edits = "".join(_change_html(path, None, value) for path, value in group["fix"].items())
            label = "Apply the sketch" if group["sketch"] else "Apply the fix"
            note = (
                '<div class="rt-diag rt-diag-warning">△ a sketch from the text the rows left in '
                "content: no render has checked it. Apply it, then check the template.</div>"
                if group["sketch"]
                else ""
            )
            parts.append(
                f'<div class="rt-edit">The edit: <ul class="rt-changes">{edits}</ul>{note}'
                f'<button type="button" class="rt-apply" data-apply="{index}">{label}</button></div>'
            )
        parts.append("</div>")
    parts.append("</div>")
    return "".join(parts)
