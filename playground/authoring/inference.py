"""Start from a chat template: infer the response template in a worker, show what was found and why.

`infer_from_page` runs `engine.infer_template` as an "infer" job of
`playground.server.workers`: a chat template is code, so it runs in a worker process
with the time and memory caps of the chat-template check
(`Limits.conformance_seconds`, `worker_mb`). The job answers with
`InferredTemplate.to_dict()`: the template, its matrix, and each finding with the
template key it decided, its value, a sentence, and the two renders compared with
the span where they differ. `findings_html` lists the findings; `evidence_html`
draws one finding's two renders, the difference highlighted, for the #explain
panel when a finding, or a delimiter in the editor or on the map, is clicked
(`evidence_for` finds the findings of a template key and value). The author's outputs are
evidence: the output pasted in the workspace and their test cases go to inference as example
outputs (`with_workspace_output`); what a failed learn could not explain in each is highlighted
in it, and the tool-call field offered as the way out is one checked against the rows and the
outputs (`playground.authoring.call_sketch`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from ..panels.markup import escape, key_path, visible_whitespace
from ..server import limits
from ..server.folders import FolderError, shown
from ..server.input_readers import InputError, read_tools
from ..server.redact import redact
from ..server.workers import JobError, run_job
from .chat_template_check import chat_template_input

# Characters of a render shown on each side of its difference.
CONTEXT_CHARS = 160
# The share of an inference job's seconds past which no tool-call sketch is learnt (learning
# and checking one takes a fraction of a second; the job is cut off at its seconds).
SKETCH_SHARE = 0.5


@dataclass
class InferenceOutcome:
    """What one inference gave: `result` (``InferredTemplate.to_dict()``) or `error`, the wall
    time (seconds) and what was inferred from ("the pasted chat template", a model)."""

    result: dict | None = None
    error: str | None = None
    seconds: float = 0.0
    source: str = ""


def infer_job(payload: dict) -> dict:
    """One inference in a worker: `InferredTemplate.to_dict()` for `payload` (chat_template or
    model, bos_token, eos_token, examples, regex_timeout, seconds), with what the panel shows
    of the author's outputs and the way out (`_add_example_evidence`: ``example_outputs``,
    ``unexplained`` for every output, ``call_sketch``)."""
    from engine.chat_templates.infer import infer_template
    from engine.chat_templates.render import ModelLoadError

    started = time.monotonic()
    try:
        result = infer_template(
            payload.get("chat_template"),
            model=payload.get("model"),
            bos_token=payload.get("bos_token"),
            eos_token=payload.get("eos_token"),
            examples=payload.get("examples") or None,
            regex_timeout=payload.get("regex_timeout"),
            time_budget=payload["seconds"],
        )
    except (ModelLoadError, ValueError, ImportError) as error:
        message = str(error)
        if getattr(error, "hint", "") == "time_budget":  # InferenceError's: name the page's cap
            message += ". The time limit is PLAYGROUND_LIMITS' conformance_seconds."
        raise JobError(redact(message)) from None
    found = result.to_dict()
    _add_example_evidence(found, payload, time.monotonic() - started)
    for row in found["report"]["situations"]:
        row["detail"] = redact(row["detail"])
    return found


def _add_example_evidence(found: dict, payload: dict, spent: float) -> None:
    """What the panel needs about the author's outputs and the way out, put in `found` (in the
    worker, within its caps): ``example_outputs`` (the outputs given, in order); ``unexplained``
    for every output when the template lacks a part or fails rows (not only when it misreads
    one: an output whose calls were taken as text still shows them); and ``call_sketch``, the
    checked tool-call field for a template that lacks one or fails rows with calls
    (`playground.authoring.call_sketch`), None when it passes and is complete, or when
    inference took more than SKETCH_SHARE of the job's `seconds` (`spent`: seconds so far), so
    the sketch never costs the inference its answer."""
    from engine.chat_templates.conformance import resolve_chat_template
    from engine.chat_templates.examples import read_examples
    from engine.chat_templates.unexplained import unexplained

    from .call_sketch import sketch_calls

    examples = payload.get("examples") or []
    timeout = payload.get("regex_timeout")
    found["example_outputs"] = [example["output"] for example in examples]
    if examples and not found["unexplained"] and not (found["passed"] and found["complete"]):
        spans = unexplained(found["template"], read_examples(examples), timeout)
        found["unexplained"] = {
            str(index): [span.to_dict() for span in listed] for index, listed in spans.items()
        }
    found["call_sketch"] = None
    if (found["passed"] and found["complete"]) or spent > SKETCH_SHARE * payload["seconds"]:
        return
    chat_template, bos_token, eos_token = resolve_chat_template(
        payload.get("chat_template"),
        payload.get("model"),
        payload.get("bos_token"),
        payload.get("eos_token"),
    )
    try:
        sketch = sketch_calls(found, chat_template, bos_token, eos_token, examples, timeout)
    except ValueError:  # TemplateError and a regex cut off by its time limit included
        sketch = None
    found["call_sketch"] = sketch.to_dict() if sketch is not None else None


def infer_from_page(
    chat_template_text: str,
    chat_template_model: str,
    bos_token: str = "",
    eos_token: str = "",
    examples: list[dict] | None = None,
) -> InferenceOutcome:
    """Inference as the page asks for it: from the pasted chat template, or else the named
    model's (a folder the server allows, or a hub id), with the author's outputs as `examples`
    (``{"prefix", "output", "tools"?, "expected"?}`` each). Bad input gives an outcome with
    `error`."""
    caps = limits.current()
    pasted = (chat_template_text or "").strip()
    try:
        model = chat_template_input(chat_template_text, chat_template_model, bos_token, eos_token)
    except (InputError, FolderError) as error:
        return InferenceOutcome(error=redact(str(error)))
    seconds = caps.conformance_seconds
    job = {
        "chat_template": chat_template_text if pasted else None,
        "model": None if pasted else model,
        "bos_token": bos_token or None,
        "eos_token": eos_token or None,
        "examples": examples or None,
        "regex_timeout": caps.regex_seconds,
        "seconds": seconds,
    }
    outcome = run_job("infer", job, seconds=seconds)
    source = "the pasted chat template" if pasted else f"the chat template of {shown(model)}"
    if outcome.cut_off:
        return InferenceOutcome(
            error=f"Inference ran out of time: it was cut off after {seconds:g} s (the chat "
            "template may render too slowly, or loop). The time limit is PLAYGROUND_LIMITS' "
            "conformance_seconds.",
            seconds=outcome.seconds,
            source=source,
        )
    return InferenceOutcome(outcome.result, outcome.error, outcome.seconds, source)


def with_workspace_output(
    examples: list[dict],
    prefix: str,
    generation: str,
    tools_text: str,
    page_made: set[str] | frozenset[str] = frozenset(),
) -> list[dict]:
    """`examples` (``{"prefix", "output", "tools"?, "expected"?}`` each) and, first, the output
    pasted in the workspace (`prefix`, `generation`, the tools of `tools_text`), so Infer learns
    from what the author pasted as from their test cases.

    The workspace's output is left out when it is empty, when an example already holds it (the
    same prefix and output), or when the page put it there itself (`page_made`: the shipped
    samples' generations and the renders of the last check or inference): a sample of another
    model, or a render of this chat template, is no evidence of what the model writes. Tools
    that do not read as a tool list are left out of the example (its output still counts).

    Returns:
        A new list; `examples` is not changed.
    """
    if not (generation or "").strip() or generation in page_made:
        return list(examples)
    if any(e["output"] == generation and e["prefix"] == (prefix or "") for e in examples):
        return list(examples)
    pasted: dict[str, Any] = {"prefix": prefix or "", "output": generation}
    try:
        tools = read_tools(tools_text)
    except InputError:
        tools = None
    if tools:
        pasted["tools"] = tools
    return [pasted, *examples]


def evidence_for(result: dict | None, key: str | None, value: Any = None) -> list[dict]:
    """The findings of `result` (an `InferredTemplate.to_dict()`) for template key `key`, those
    whose value is `value` first (a close list's findings each hold one of its markers)."""
    if not result or not key:
        return []
    if key == "start_anchor_pattern":
        key = "start_anchor"
    found = [finding for finding in result.get("findings", []) if finding["key"] == key]
    return sorted(
        found, key=lambda finding: finding["value"] != value and not _holds(value, finding["value"])
    )


def findings_for_template(result: dict | None, template: dict, key: str | None) -> list[dict]:
    """The findings of `result` for template key `key` (a JSON path such as
    ``fields.tool_calls.open_pattern``) whose value the template still holds there."""
    if not result or not key:
        return []
    value: Any = template
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if value is None:
        return []
    if key == "start_anchor_pattern":  # the anchors found became one pattern of them all
        return evidence_for(result, key)
    return [
        finding
        for finding in evidence_for(result, key, value)
        if finding["value"] == value or _holds(value, finding["value"])
    ]


def _holds(whole: Any, part: Any) -> bool:
    if isinstance(whole, list):
        return part in whole or (isinstance(part, list) and all(item in whole for item in part))
    return isinstance(whole, str) and isinstance(part, str) and part in whole


def _excerpt(render: dict) -> str:
    """One render around its difference: text before and after dimmed, the difference marked."""
    text = render["text"]
    start, end = render.get("difference", [0, 0])
    before = text[max(0, start - CONTEXT_CHARS) : start]
    after = text[end : end + CONTEXT_CHARS]
    lead = "…" if start > CONTEXT_CHARS else ""
    tail = "…" if end + CONTEXT_CHARS < len(text) else ""
    middle = (
        visible_whitespace(text[start:end])
        if end > start
        else '<span class="rt-evidence-none">(nothing)</span>'
    )
    return (
        f'<pre class="rt-evidence-text">{lead}{visible_whitespace(before)}<mark class="rt-evidence-diff">{middle}</mark>'
        f"{visible_whitespace(after)}{tail}</pre>"
    )


def evidence_html(finding: dict) -> str:
    """A finding's sentence, then each render it compared: its label and the text around where
    the two differ (or the whole render, cut, when there is one)."""
    value = json.dumps(finding["value"], ensure_ascii=False)
    parts = [
        f'<div class="rt-evidence" data-key="{escape(finding["key"])}">',
        f'<div class="rt-evidence-head"><code class="rt-key">{escape(finding["key"])}</code> = <code>{escape(value)}</code></div>',
        f'<div class="rt-evidence-how">{escape(finding["how"])}</div>',
    ]
    renders = finding.get("renders", [])
    if len(renders) == 2:
        parts.append(
            '<div class="rt-evidence-note">found by comparing these two renders (the difference marked):</div>'
        )
    for render in renders:
        parts.append(f'<div class="rt-evidence-label">{escape(render["label"])}</div>')
        if "difference" in render:
            parts.append(_excerpt(render))
        else:
            parts.append(
                f'<pre class="rt-evidence-text">{visible_whitespace(render["text"][-2 * CONTEXT_CHARS :])}</pre>'
            )
    parts.append("</div>")
    return "".join(parts)


def _verdict_html(result: dict, examples: int) -> str:
    """The badges (the matrix; partial), the counts, and the verdict sentence."""
    badge = (
        '<span class="rt-badge rt-pass" id="inference-badge">✔ passes its matrix</span>'
        if result["passed"]
        else '<span class="rt-badge rt-fail" id="inference-badge">✘ fails its matrix</span>'
    )
    if not result.get("complete", True):
        parts = ", ".join(missing["part"] for missing in result.get("missing", []))
        badge += f' <span class="rt-badge rt-pass-warn" id="inference-partial">◐ partial: {escape(parts)} missing</span>'
    counts = result["report"]["counts"]
    given = f"; {examples} of your outputs given as examples" if examples else ""
    return (
        f'<div class="rt-conformance-summary">{badge} {counts["passed"]} passed, {counts["failed"]} failed, '
        f"{counts['not_renderable']} not renderable{given}</div>"
        f'<div class="rt-note" id="inference-verdict">{escape(in_authors_words(result.get("verdict", "")))}</div>'
    )


def _missing_html(result: dict, examples: int) -> str:
    """Each part inference could not learn, why, and the way out: the checked sketch when there
    is one; the text of the author's outputs no field reads when they show the part; asking for
    an output only when none was given, or none shows anything unread."""
    parts = []
    sketched = bool((result.get("call_sketch") or {}).get("fix"))
    unread = bool(result.get("unexplained"))
    for missing in result.get("missing", []):
        construct = (
            f" The template language lacks {missing['construct']}." if missing["construct"] else ""
        )
        offered = sketched and missing["part"] == "tool_calls"
        way = (
            "The way out: the field sketched below, learnt from the calls and checked against "
            "the matrix and your outputs."
            if offered
            else "Your outputs show text no field reads: it is highlighted in each output below."
            if examples and unread
            else "The template language cannot read it, so no example can teach it: what stays "
            "unread is shown below."
            if missing["construct"]
            else f"Your {examples} output{'s were' if examples != 1 else ' was'} sent as examples, but "
            "inference did not learn it from them: what fails below says which row or example "
            "stays unexplained. If none of them has it, add one where the model writes it."
            if examples
            else "The way out: paste an output of the model that has it (Paste &amp; parse), "
            "and Infer again: the pasted output and your test cases are sent as examples."
        )
        parts.append(
            f'<div class="rt-diag rt-diag-warning rt-missing" data-part="{escape(missing["part"])}">◐ '
            f"<b>{escape(missing['part'])}</b> not inferred: {escape(in_authors_words(missing['why']))}.{escape(construct)} {way}</div>"
        )
    return "".join(parts)


def _unread_outputs_html(result: dict) -> str:
    """Each of the author's outputs the template could not explain, the text it leaves unread
    highlighted in the output (``unexplained``: example index -> spans; ``example_outputs``)."""
    from ..panels.unexplained import unexplained_html

    outputs = result.get("example_outputs") or []
    entries = [
        {
            "label": f"example {int(index) + 1}: your output",
            "text": outputs[int(index)],
            "spans": [{**span, "why": in_authors_words(span["why"])} for span in spans],
        }
        for index, spans in sorted(
            (result.get("unexplained") or {}).items(), key=lambda i: int(i[0])
        )
        if int(index) < len(outputs)
    ]
    return unexplained_html(
        entries,
        "What the template could not explain in your outputs (highlighted)",
        "inference-unexplained",
    )


def findings_html(
    result: dict | None,
    error: str | None = None,
    pending: str = "",
    examples: int = 0,
    workspace_status: str = "",
) -> str:
    """The inference panel: the verdict (the matrix, what is missing), the failing rows by cause
    with the way out (`playground.authoring.inference_failures`), what was found (each finding a
    button showing its renders in #explain, ``data-finding``), the fallbacks, the notes, and
    the candidates as changes against the chosen one; or the error, or what is running
    (`pending`). `examples`: how many of the author's outputs were given; `workspace_status`: the
    workspace's status after Infer, in one sentence, shown under the verdict ("" for none)."""
    from .inference_failures import candidates_html, failures_html

    if pending:
        return f'<div class="rt-status rt-status-live" id="inference-pending">⏳ {escape(pending)}</div>'
    if error:
        return (
            f'<div class="rt-status rt-status-error" id="inference-error">⚠ {escape(error)}</div>'
        )
    if result is None:
        return (
            '<div class="rt-note" id="inference-empty">Name a model (a hub id or a local folder) or paste its '
            "chat template, then <b>Infer a template</b>: the template is derived from the chat template's "
            "own renders, checked, put in the editor, and one of the renders is parsed in the workspace.</div>"
        )
    set_aside = result.get("set_aside", 0)
    parts = [
        '<div class="rt-inference" id="inference-report">',
        _verdict_html(result, examples),
        (
            f'<div class="rt-note" id="inference-workspace">{escape(workspace_status)} '
            '<a href="#status">See the workspace</a></div>'
            if workspace_status
            else ""
        ),
        (
            f'<div class="rt-note" id="inference-fresh">Started fresh for this chat template: '
            f"{set_aside} output{'s' if set_aside != 1 else ''} made for the previous chat template "
            f"{'were' if set_aside != 1 else 'was'} not sent as examples and left out of Tests (they "
            "belong to that model). To use one with this chat template, paste it again and Infer "
            "again.</div>"
            if set_aside
            else ""
        ),
        _missing_html(result, examples),
        _unread_outputs_html(result),
        failures_html(result.get("failure_groups", []), result),
        '<div class="rt-evidence-label">What inference found (click one: the renders behind it)</div>',
        '<ol class="rt-findings">',
    ]
    shown, unused = findings_by_key(result)
    for key, indices in shown:
        values = []
        for index in indices:
            value = result["findings"][index]["value"]
            if value not in values:
                values.append(value)
        text = " / ".join(json.dumps(value, ensure_ascii=False) for value in values)
        hows = list(dict.fromkeys(result["findings"][index]["how"] for index in indices))
        parts.append(
            f'<li><button type="button" class="rt-finding" data-finding="{indices[0]}"><code class="rt-key">'
            f"{key_path(key)}</code> = <code>{escape(text if len(text) <= 120 else text[:119] + '…')}</code>"
            f'</button> <span class="rt-finding-how">{escape(in_authors_words("; ".join(hows)))}</span></li>'
        )
    if unused:
        parts.append(
            f'<li class="rt-finding-how" id="inference-unused">{len(unused)} more found for a candidate '
            "the chosen template is not: "
            + ", ".join(
                f"<code>{escape(key)}</code>"
                for key in dict.fromkeys(result["findings"][i]["key"] for i in unused)
            )
            + "</li>"
        )
    parts.append("</ol>")
    for text in result.get("fallbacks", []):
        parts.append(
            f'<div class="rt-diag rt-diag-warning">△ fallback: {escape(in_authors_words(text))}</div>'
        )
    for text in result.get("notes", []):
        parts.append(f'<div class="rt-note">{escape(in_authors_words(text))}</div>')
    if len(result.get("candidates", [])) > 1 or not result["passed"]:
        parts.append(candidates_html(result))
    parts.append("</div>")
    return "".join(parts)


def findings_by_key(result: dict) -> tuple[list[tuple[str, list[int]]], list[int]]:
    """The findings of `result` the chosen template holds, one entry a key (its findings'
    indices, in order), and the indices of the others (found for a candidate that was not chosen:
    a ``repeats = true`` the template does not have is not shown as if it had). Findings of a
    field the template lacks (why a part was not inferred) are shown.

    Returns:
        ([(key, [index, ...]), ...] in order of first finding, [index, ...]).
    """
    template = result.get("template") or {}
    by_key: dict[str, list[int]] = {}
    unused = []
    for index, finding in enumerate(result.get("findings", [])):
        key = finding["key"]
        if key == "start_anchor" and "start_anchor_pattern" in template:
            key = "start_anchor_pattern"
        parts = key.split(".")
        field_absent = (
            parts[0] == "fields"
            and len(parts) >= 2
            and parts[1] not in (template.get("fields") or {})
        )
        if field_absent or finding in findings_for_template(result, template, key):
            by_key.setdefault(finding["key"], []).append(index)
        else:
            unused.append(index)
    return list(by_key.items()), unused


def in_authors_words(text: str) -> str:
    """`text` with the probe conversations' names (inference renders calls of tools with made-up
    names, arguments and values) put as what they stand for, so a sentence meant for the author
    does not read like internal noise."""
    from engine.chat_templates.probes import probe_names_in_words

    return probe_names_in_words(text)


def _looks_like_markup(text: str) -> bool:
    return len(text.strip()) >= 3 and any(not (c.isalnum() or c.isspace()) for c in text)


def inference_markers(result: dict) -> dict[str, str]:
    """The markup texts inference found, each with the template key of its finding: the
    findings' literal values, and the literal runs of their patterns."""
    from engine.authoring.pattern_explain import literal_runs

    found: dict[str, str] = {}
    for finding in result.get("findings", []):
        key, value = finding["key"], finding["value"]
        for text in value if isinstance(value, list) else [value]:
            if not isinstance(text, str):
                continue
            runs = (
                [run.literal for run in literal_runs(text)] if key.endswith("_pattern") else [text]
            )
            for run in runs:
                if _looks_like_markup(run):
                    found.setdefault(run, key)
    return found


def _applies(view, result: dict) -> bool:
    """Whether `view` parses an output of the chat template inference read: its prefix holds the
    inferred template's start anchor."""
    from engine import TemplateError, load_template

    prefix = view.cut_away + view.stream[: view.tail_length]
    if not prefix or not view.finished or not view.template:
        return False
    try:
        anchor = load_template(result["template"]).start_anchor
        return anchor.pattern.search(prefix, timeout=limits.current().regex_seconds) is not None
    except (TemplateError, TimeoutError):
        return False


def inference_losses(view, result: dict | None) -> list[str]:
    """What inference knows was lost in `view` (a `ParseView` of an output of the same chat
    template), a sentence each: a marker the chat template writes left in the implicit field's
    text, or a part inference could not learn (`missing`) that the template lacks while that
    text names a given tool."""
    if not result or not _applies(view, result):
        return []
    fields = view.template.get("fields", {})
    implicit = next(
        (
            name
            for name, spec in fields.items()
            if "open" not in spec and "open_pattern" not in spec
        ),
        None,
    )
    text = "".join(
        span.text
        for span in view.spans
        if span.field == implicit and span.kind == "body" and span.source == "generation"
    )
    if not text:
        return []
    written = json.dumps(view.template, ensure_ascii=False)
    losses = []
    for marker, key in inference_markers(result).items():
        if marker in text and json.dumps(marker, ensure_ascii=False)[1:-1] not in written:
            losses.append(
                f"{marker!r}, which the chat template writes (inference found it for {key}), is in "
                f"{implicit}: no field of this template reads it"
            )
    names = [
        (tool.get("function", tool) or {}).get("name")
        for tool in view.tools or []
        if isinstance(tool, dict)
    ]
    for part in result.get("missing", []):
        if part["part"] in fields:
            continue
        named = next((name for name in names if isinstance(name, str) and name in text), None)
        if named:
            losses.append(
                f"the template has no {part['part']} field (inference: {part['why']}), and {implicit} "
                f"holds {named!r}, a tool's name: a call is probably in {implicit}"
            )
    return losses
