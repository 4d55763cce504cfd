"""A tool-call field for a template that has none: learnt from the rows and outputs, then checked.

When inference gives a template without a `tool_calls` field while matrix rows (or the author's
outputs) hold calls, the inference panel offers a field to add: the way out. A way out that
fails every row with calls is a dead end, so the field is not guessed from the markers around
the calls. It is learnt by aligning each row's output with its expected message, and each of
the author's outputs with the tools it was given
(`engine.chat_templates.example_fields.learn_template`: every payload parser the template
language has is tried, and only one that reads the calls back is kept). It is then checked:

* it reads every row with calls and every output given back (to the expected message, or to a
  plausible one for an output without it);
* with it, the chat template's matrix fails no row the template passed, and no row with calls.

Only a field that passes both is offered (`CallSketch.fix`). Otherwise the sketch says why, and
which text of which row or output stays unexplained (`CallSketch.unexplained`, offsets into
that text), so the author sees what no field reads instead of an edit that cannot work.

`playground.panels.unexplained` draws such stretches highlighted in their text; the inference
panel uses it for the author's outputs a failed learn could not explain, too.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class CallSketch:
    """The tool-call field offered for a template that lacks one, or why none is.

    Attributes:
        fix: {template key path: value} to apply (``fields.tool_calls``, and
            ``fields.content.close`` when the calls' own markers must leave it), or None when
            no field learnt reads the rows and outputs.
        how: one sentence: what the field reads and what it was checked against, or why
            there is none.
        unexplained: for each row or output with text no field explains, ``{"label", "text",
            "spans": [{"start", "end", "why"}]}`` (offsets into `text`, characters).
    """

    fix: dict | None
    how: str
    unexplained: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def _row_examples(rows: list[dict], tools: list[dict]) -> tuple[list, list[str]]:
    """The failing renderable rows that expect calls, as examples with their labels (the
    row's name); rows with the same prompt and output once."""
    from engine.chat_templates.examples import Example

    examples, labels, seen = [], [], set()
    for row in rows:
        expected = row.get("expected") or {}
        if row["passed"] or not row["renderable"] or row.get("prompt") is None:
            continue
        if not expected.get("tool_calls"):
            continue
        key = (row["prompt"], row["generation"])
        if key in seen:
            continue
        seen.add(key)
        examples.append(
            Example(
                len(examples),
                row["prompt"],
                row["generation"],
                tools if row.get("tools") else None,
                expected,
            )
        )
        labels.append(f"matrix row {row['name']}")
    return examples, labels


def _relabelled(text: str, labels: list[str]) -> str:
    """`text` with the engine's "example N" put as the label of the N-th row or output."""

    def label(found: re.Match) -> str:
        index = int(found.group(1)) - 1
        return labels[index] if 0 <= index < len(labels) else found.group()

    return re.sub(r"\bexample (\d+)\b", label, text)


def _unexplained(
    template: dict, examples: list, labels: list[str], timeout: float | None
) -> list[dict]:
    """The rows and outputs whose text `template` leaves unexplained, as ``{"label", "text",
    "spans"}`` each (`labels`: by example index; `timeout`: seconds per regex call), one entry
    per distinct text, its label counting the others that write the same."""
    from engine.chat_templates.unexplained import unexplained

    found = unexplained(template, examples, timeout)
    entries: dict[str, dict] = {}  # by text: rows of several situations write the same output
    for example in examples:
        if example.index not in found:
            continue
        entry = entries.get(example.output)
        if entry is not None:
            entry["same"] += 1
            continue
        entries[example.output] = {
            "label": labels[example.index],
            "text": example.output,
            "spans": [
                {**span.to_dict(), "why": _relabelled(span.why, labels)}
                for span in found[example.index]
            ],
            "same": 0,
        }
    listed = []
    for entry in entries.values():
        same = entry.pop("same")
        if same:
            entry["label"] += f" (and {same} more with the same output)"
        listed.append(entry)
    return listed


def _without_call_markers(closes: Any, spec: dict) -> list[str]:
    """The content closes that are not markers of the calls' own open or close (a content close
    on the calls' opener would take the calls as text)."""
    listed = [closes] if isinstance(closes, str) else list(closes or [])
    own = " ".join(
        str(spec.get(key, "")) for key in ("open", "close", "open_pattern", "close_pattern")
    )
    return [
        marker
        for marker in listed
        if marker not in own and re.escape(marker) not in own and _pattern_text(marker) not in own
    ]


def _pattern_text(marker: str) -> str:
    """`marker` as a pattern writes it: its special characters escaped one by one."""
    return "".join("\\" + char if char in r"\.^$*+?{}[]|()" else char for char in marker)


def _fixes(learnt: dict, template: dict) -> list[dict]:
    """The edits to try, best first: the learnt calls' field with the content closes that are
    not the calls' own markers, then with the learnt closes as they are."""
    spec = learnt["fields"]["tool_calls"]
    learnt_content = learnt["fields"].get("content") or {}
    if "close_pattern" in learnt_content:  # closes that are patterns: the learnt field whole
        return [{"fields.tool_calls": spec, "fields.content": learnt_content}]
    learnt_closes = learnt_content.get("close")
    before = (template.get("fields", {}).get("content") or {}).get("close")
    kept = _without_call_markers(learnt_closes, spec)
    fixes = []
    for closes in (kept, learnt_closes):
        fix: dict = {"fields.tool_calls": spec}
        listed = [closes] if isinstance(closes, str) else list(closes or [])
        if listed != ([before] if isinstance(before, str) else list(before or [])):
            fix["fields.content.close"] = listed[0] if len(listed) == 1 else listed
        if fix not in fixes:
            fixes.append(fix)
    return fixes


def sketch_calls(
    result: dict,
    chat_template: str,
    bos_token: str = "",
    eos_token: str = "",
    examples: list[dict] | None = None,
    regex_timeout: float | None = 1.0,
) -> CallSketch | None:
    """The tool-call field to offer for `result`'s template (an ``InferredTemplate.to_dict()``):
    a field for a template that has none, or one in place of a field that fails rows with calls.

        Args:
            result: the inference result: its template and its matrix (``report.situations``).
            chat_template, bos_token, eos_token: the chat template the matrix was rendered from (the
                field is checked against its matrix again).
            examples: the author's outputs given to inference (``{"prefix", "output", "tools"?,
                "expected"?}`` each), read back too.
            regex_timeout: seconds per regex call of the templates' patterns.

        Returns:
            None when no failing row expects calls and the template has a tool_calls field (or no
            output holds a call to read); else a `CallSketch` (its `fix` None when no field learnt passes both
            checks, `unexplained` then naming the text that stays unread).

        Raises:
            ValueError: a malformed example (as `engine.chat_templates.examples.read_examples`).
    """
    from engine import TemplateError
    from engine.chat_templates.conformance import TOOLS
    from engine.chat_templates.example_fields import NotLearnt, learn_template
    from engine.chat_templates.examples import Example, check_examples, read_examples

    from .template_edits import apply_edit

    template = result["template"]
    rows = result["report"]["situations"]
    row_examples, labels = _row_examples(rows, TOOLS)
    if "tool_calls" in template.get("fields", {}) and not row_examples:
        return None
    given = read_examples(examples)
    for example in given:
        labels.append(f"your output {example.index + 1}")
    everything = row_examples + [
        Example(len(row_examples) + e.index, e.prefix, e.output, e.tools, e.expected) for e in given
    ]
    if not row_examples and not _shows_calls(template, everything, regex_timeout):
        return None
    try:
        learnt = learn_template(everything, template, regex_timeout)
    except (NotLearnt, TemplateError, ValueError) as error:
        return CallSketch(
            None,
            "no tool-call field reads these calls back: every payload parser was tried "
            f"({_relabelled(str(error), labels)})",
            _unexplained(template, everything, labels, regex_timeout),
        )
    if "tool_calls" not in learnt.template.get("fields", {}):
        return CallSketch(
            None,
            "the outputs were read without a tool-call field: no call was found to learn from",
            _unexplained(template, everything, labels, regex_timeout),
        )
    passed_before = {row["name"] for row in rows if row["passed"]}
    problem = ""
    for fix in _fixes(learnt.template, template):
        candidate = apply_edit(template, fix)
        wrong = check_examples(candidate, everything, regex_timeout)
        if wrong:
            problem = problem or _relabelled(wrong[0], labels)
            continue
        counts, broken = _matrix_with(
            candidate, chat_template, bos_token, eos_token, regex_timeout, passed_before
        )
        if broken:
            problem = problem or broken
            continue
        read = f"{len(row_examples)} matrix row(s) with calls" + (
            f" and {len(given)} of your output(s)" if given else ""
        )
        return CallSketch(
            fix,
            f"learnt from the calls: {learnt.description}; checked: it reads {read} back, and "
            f"with it the matrix passes {counts['passed']} of {counts['passed'] + counts['failed']} rows",
            [],
        )
    return CallSketch(
        None,
        f"a field was learnt ({learnt.description}) but it does not hold: {problem}",
        _unexplained(template, everything, labels, regex_timeout),
    )


def _shows_calls(template: dict, examples: list, regex_timeout: float | None) -> bool:
    """Whether some output leaves text unexplained by `template` (a call written, a marker)."""
    from engine.chat_templates.unexplained import unexplained

    return bool(examples) and bool(unexplained(template, examples, regex_timeout))


def _matrix_with(
    candidate: dict,
    chat_template: str,
    bos_token: str,
    eos_token: str,
    regex_timeout: float | None,
    passed_before: set[str],
) -> tuple[dict, str]:
    """The matrix of `candidate` against the chat template: (its counts, "" or why it does not
    hold: a row that passed before, or a row with calls, fails with it)."""
    from engine.chat_templates.conformance import check_conformance

    report = check_conformance(
        candidate,
        chat_template,
        bos_token=bos_token,
        eos_token=eos_token,
        regex_timeout=regex_timeout,
    )
    broken = [
        row
        for row in report.failed
        if row.name in passed_before or (row.expected or {}).get("tool_calls")
    ]
    why = f"with it, matrix row {broken[0].name} fails: {broken[0].detail}" if broken else ""
    return report.counts(), why
