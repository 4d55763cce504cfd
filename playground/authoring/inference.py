"""Start from a chat template: infer the response template in a worker, show what was found and why.

`infer_from_page` runs `engine.infer_template` as an "infer" job of
`playground.server.workers`: a chat template is code, so it runs in a worker process
with the time and memory caps of the chat-template check
(`Limits.conformance_seconds`, `worker_mb`). The job answers with
`InferredTemplate.to_dict()`: the template, its matrix, and each finding with the
template key it decided, its value, a sentence, and the two renders compared with
the span where they differ. `inference_report` is what the panel shows of a result (an
`InferenceReport`), `evidence_of` one finding's two renders around their difference (an
`Evidence`), for the #explain panel when a finding, or a delimiter in the editor or on the
map, is clicked (`evidence_for` finds the findings of a template key and value); both are
drawn by `playground.panels.inference_panel`. The author's outputs are
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

from ..server import limits
from ..server.folders import FolderError, shown
from ..server.input_readers import InputError, read_tools
from ..server.redact import redact
from ..server.workers import JobError, run_job
from .chat_template_check import chat_template_input

# Characters of a render shown on each side of its difference.
CONTEXT_CHARS = 160
# Characters of a key's values shown in the list of what was found.
VALUES_SHOWN = 120
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
    elif key == CONTENT_CLOSE_PATTERN:  # markers found one by one, then written as one pattern
        key = CONTENT_CLOSE
    found = [finding for finding in result.get("findings", []) if finding["key"] == key]
    return sorted(
        found, key=lambda finding: finding["value"] != value and not _holds(value, finding["value"])
    )


def findings_for_template(result: dict | None, template: dict, key: str | None) -> list[dict]:
    """The findings of `result` for template key `key` (a JSON path such as
    ``fields.tool_calls.open_pattern``) whose value the template still holds there."""
    if not result or not key:
        return []
    if key in (CONTENT_CLOSE, CONTENT_CLOSE_PATTERN) and "close" not in _content_of(template):
        return [
            finding
            for finding in evidence_for(result, key)
            if _in_close_pattern(finding["value"], template)
        ]
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


CONTENT_CLOSE, CONTENT_CLOSE_PATTERN = "fields.content.close", "fields.content.close_pattern"


def _content_of(template: dict) -> dict:
    content = (template.get("fields") or {}).get("content")
    return content if isinstance(content, dict) else {}


def _in_close_pattern(found: Any, template: dict) -> bool:
    """Whether every marker of a content-close finding (`found`: a marker, a pattern or a list)
    is an alternative of the template's content close pattern (markers found one by one, some
    with a varying word, are written as one pattern)."""
    from engine.chat_templates.candidates import split_content_closes

    content = _content_of(template)
    if not isinstance(content.get("close_pattern"), str):
        return False
    closes, patterns = split_content_closes(content)
    markers = found if isinstance(found, list) else [found]
    return closes is not None and all(
        isinstance(marker, str) and (marker in closes or marker in patterns) for marker in markers
    )


def _holds(whole: Any, part: Any) -> bool:
    if isinstance(whole, list):
        return part in whole or (isinstance(part, list) and all(item in whole for item in part))
    return isinstance(whole, str) and isinstance(part, str) and part in whole


@dataclass(frozen=True)
class RenderExcerpt:
    """One render a finding compared, as shown: its label and the text around where the two
    renders differ (`difference`: the differing text, "" when one render has nothing there), or,
    for a render with no difference (`whole`), its last 2 * CONTEXT_CHARS characters in `after`.
    `cut_before` / `cut_after`: text was left out before / after what is shown."""

    label: str
    before: str = ""
    difference: str = ""
    after: str = ""
    cut_before: bool = False
    cut_after: bool = False
    whole: bool = False


@dataclass(frozen=True)
class Evidence:
    """A finding as the #explain panel shows it: its template key, its value (JSON), its
    sentence, and the renders it compared (`compared`: there are two, each showing the
    difference)."""

    key: str
    value: str
    how: str
    renders: list[RenderExcerpt]
    compared: bool


def render_excerpt(render: dict) -> RenderExcerpt:
    """One render of a finding (``label``, ``text``, ``difference``: [start, end] or absent)
    around its difference: CONTEXT_CHARS characters on each side."""
    text = render["text"]
    if "difference" not in render:
        return RenderExcerpt(render["label"], after=text[-2 * CONTEXT_CHARS :], whole=True)
    start, end = render["difference"]
    return RenderExcerpt(
        render["label"],
        before=text[max(0, start - CONTEXT_CHARS) : start],
        difference=text[start:end],
        after=text[end : end + CONTEXT_CHARS],
        cut_before=start > CONTEXT_CHARS,
        cut_after=end + CONTEXT_CHARS < len(text),
    )


def evidence_of(finding: dict) -> Evidence:
    """A finding (``key``, ``value``, ``how``, ``renders``) as `Evidence`."""
    renders = finding.get("renders", [])
    return Evidence(
        finding["key"],
        json.dumps(finding["value"], ensure_ascii=False),
        finding["how"],
        [render_excerpt(render) for render in renders],
        compared=len(renders) == 2,
    )


@dataclass(frozen=True)
class MissingPart:
    """A part inference could not learn: its name, why (a sentence without its period), what
    the template language lacks for it (a sentence, or ""), and the way out (a sentence)."""

    part: str
    why: str
    construct: str
    way: str


@dataclass(frozen=True)
class FoundKey:
    """What inference found for one template key: the index of its first finding (the one a
    click shows), its values as JSON joined by " / " (cut to VALUES_SHOWN characters), and how
    they were found."""

    key: str
    finding: int
    values: str
    how: str


@dataclass(frozen=True)
class InferenceReport:
    """An inference result as the panel shows it, every text in the author's words.

    Attributes:
        passed: the template passes its matrix; `complete`: every part was inferred, else
            `missing_parts` names those that were not (joined); `counts`: the matrix's (``passed``, ``failed``,
            ``not_renderable``); `examples`: how many of the author's outputs were given.
        verdict: the verdict sentence; `set_aside`: outputs of the previous chat template left out.
        missing: each part not inferred and the way out.
        unread: each of the author's outputs with text the template could not explain
            (``{"label", "text", "spans"}``, for `playground.panels.unexplained`).
        found: what was found, one `FoundKey` a key; `unused`: how many findings were for a
            candidate that was not chosen, `unused_keys` their keys.
        fallbacks, notes: sentences; `candidates`: the candidates are worth showing.
    """

    passed: bool
    complete: bool
    missing_parts: str
    counts: dict
    examples: int
    verdict: str
    set_aside: int
    missing: list[MissingPart]
    unread: list[dict]
    found: list[FoundKey]
    unused: int
    unused_keys: list[str]
    fallbacks: list[str]
    notes: list[str]
    candidates: bool


def _way_out(missing: dict, examples: int, sketched: bool, unread: bool) -> str:
    """The way out of a part not inferred: the checked sketch when there is one; the text of the
    author's outputs no field reads when they show the part; asking for an output only when none
    was given, or none shows anything unread."""
    if sketched and missing["part"] == "tool_calls":
        return (
            "The way out: the field sketched below, learnt from the calls and checked against "
            "the matrix and your outputs."
        )
    if examples and unread:
        return "Your outputs show text no field reads: it is highlighted in each output below."
    if missing["construct"]:
        return (
            "The template language cannot read it, so no example can teach it: what stays "
            "unread is shown below."
        )
    if examples:
        return (
            f"Your {examples} output{'s were' if examples != 1 else ' was'} sent as examples, but "
            "inference did not learn it from them: what fails below says which row or example "
            "stays unexplained. If none of them has it, add one where the model writes it."
        )
    return (
        "The way out: paste an output of the model that has it (Paste & parse), "
        "and Infer again: the pasted output and your test cases are sent as examples."
    )


def missing_parts(result: dict, examples: int) -> list[MissingPart]:
    """Each part inference could not learn (``missing``), why, and the way out."""
    sketched = bool((result.get("call_sketch") or {}).get("fix"))
    unread = bool(result.get("unexplained"))
    return [
        MissingPart(
            missing["part"],
            in_authors_words(missing["why"]),
            f" The template language lacks {missing['construct']}." if missing["construct"] else "",
            _way_out(missing, examples, sketched, unread),
        )
        for missing in result.get("missing", [])
    ]


def unread_outputs(result: dict) -> list[dict]:
    """Each of the author's outputs the template could not explain (``{"label", "text",
    "spans"}``: the text it leaves unread, each span with why), from ``unexplained`` (example
    index -> spans) and ``example_outputs``."""
    outputs = result.get("example_outputs") or []
    return [
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


def found_keys(result: dict) -> tuple[list[FoundKey], list[int]]:
    """What was found, one `FoundKey` a key the chosen template holds, and the indices of the
    findings for a candidate that was not chosen (`findings_by_key`)."""
    shown, unused = findings_by_key(result)
    found = []
    for key, indices in shown:
        values = []
        for index in indices:
            value = result["findings"][index]["value"]
            if value not in values:
                values.append(value)
        text = " / ".join(json.dumps(value, ensure_ascii=False) for value in values)
        hows = list(dict.fromkeys(result["findings"][index]["how"] for index in indices))
        found.append(
            FoundKey(
                key,
                indices[0],
                text if len(text) <= VALUES_SHOWN else text[: VALUES_SHOWN - 1] + "…",
                in_authors_words("; ".join(hows)),
            )
        )
    return found, unused


def inference_report(result: dict, examples: int = 0) -> InferenceReport:
    """`result` (an `InferredTemplate.to_dict()`) as the panel shows it; `examples`: how many of
    the author's outputs were given."""
    found, unused = found_keys(result)
    return InferenceReport(
        passed=result["passed"],
        complete=result.get("complete", True),
        missing_parts=", ".join(missing["part"] for missing in result.get("missing", [])),
        counts=result["report"]["counts"],
        examples=examples,
        verdict=in_authors_words(result.get("verdict", "")),
        set_aside=result.get("set_aside", 0),
        missing=missing_parts(result, examples),
        unread=unread_outputs(result),
        found=found,
        unused=len(unused),
        unused_keys=list(dict.fromkeys(result["findings"][i]["key"] for i in unused)),
        fallbacks=[in_authors_words(text) for text in result.get("fallbacks", [])],
        notes=[in_authors_words(text) for text in result.get("notes", [])],
        candidates=len(result.get("candidates", [])) > 1 or not result["passed"],
    )


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
