"""Start from a chat template: the inferred template's findings, and the renders that show each one.

`engine.infer_template` (run in a worker, `playground.workers`) answers with
`InferredTemplate.to_dict()`: the template, its matrix, and each finding with the
template key it decided, its value, a sentence, and the two renders compared with
the span where they differ. `findings_html` lists the findings under the matrix;
`evidence_html` draws one finding's two renders, the difference highlighted, for
the #explain panel when a delimiter is clicked in the editor or on the map
(`evidence_for` finds the findings of a template key and value).
"""

from __future__ import annotations

import json
from typing import Any

from .markup import escape, visible_whitespace

# Characters of a render shown on each side of its difference.
CONTEXT_CHARS = 160


def evidence_for(result: dict | None, key: str | None, value: Any = None) -> list[dict]:
    """The findings of `result` (an `InferredTemplate.to_dict()`) for template key `key`, those
    whose value is `value` first (a close list's findings each hold one of its markers)."""
    if not result or not key:
        return []
    if key == "start_anchor_pattern":
        key = "start_anchor"
    found = [finding for finding in result.get("findings", []) if finding["key"] == key]
    return sorted(found, key=lambda finding: finding["value"] != value and not _holds(value, finding["value"]))


def _holds(whole: Any, part: Any) -> bool:
    if isinstance(whole, list):
        return part in whole or (isinstance(part, list) and all(item in whole for item in part))
    return isinstance(whole, str) and isinstance(part, str) and part in whole


def _excerpt(render: dict) -> str:
    """One render around its difference: text before and after dimmed, the difference marked."""
    text = render["text"]
    start, end = render.get("difference", [0, 0])
    before = text[max(0, start - CONTEXT_CHARS):start]
    after = text[end:end + CONTEXT_CHARS]
    lead = "…" if start > CONTEXT_CHARS else ""
    tail = "…" if end + CONTEXT_CHARS < len(text) else ""
    middle = visible_whitespace(text[start:end]) if end > start else '<span class="rt-evidence-none">(nothing)</span>'
    return (f'<pre class="rt-evidence-text">{lead}{visible_whitespace(before)}<mark class="rt-evidence-diff">{middle}</mark>'
            f"{visible_whitespace(after)}{tail}</pre>")


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
        parts.append('<div class="rt-evidence-note">found by comparing these two renders (the difference marked):</div>')
    for render in renders:
        parts.append(f'<div class="rt-evidence-label">{escape(render["label"])}</div>')
        if "difference" in render:
            parts.append(_excerpt(render))
        else:
            parts.append(f'<pre class="rt-evidence-text">{visible_whitespace(render["text"][-2 * CONTEXT_CHARS:])}</pre>')
    parts.append("</div>")
    return "".join(parts)


def findings_html(result: dict | None, error: str | None = None) -> str:
    """The inference panel: what was found (each finding a button showing its renders in
    #explain, ``data-finding``), the fallbacks used, the notes, and the candidates checked."""
    if error:
        return f'<div class="rt-status rt-status-error" id="inference-error">⚠ {escape(error)}</div>'
    if result is None:
        return ('<div class="rt-note" id="inference-empty">Paste a chat template (or name a model), then <b>Infer</b>: '
                "the template is derived from the chat template's own renders, checked, and put in the editor.</div>")
    verdict = ('<span class="rt-badge rt-pass" id="inference-badge">✔ passes its matrix</span>' if result["passed"]
               else '<span class="rt-badge rt-fail" id="inference-badge">✘ fails its matrix</span>')
    counts = result["report"]["counts"]
    parts = [f'<div class="rt-inference" id="inference-report"><div class="rt-conformance-summary">{verdict} '
             f'{counts["passed"]} passed, {counts["failed"]} failed, {counts["not_renderable"]} not renderable</div>',
             '<ol class="rt-findings">']
    for index, finding in enumerate(result["findings"]):
        value = json.dumps(finding["value"], ensure_ascii=False)
        parts.append(
            f'<li><button type="button" class="rt-finding" data-finding="{index}"><code class="rt-key">'
            f'{escape(finding["key"])}</code> = <code>{escape(value if len(value) <= 120 else value[:119] + "…")}</code>'
            f'</button> <span class="rt-finding-how">{escape(finding["how"])}</span></li>'
        )
    parts.append("</ol>")
    for text in result.get("fallbacks", []):
        parts.append(f'<div class="rt-diag rt-diag-warning">△ fallback: {escape(text)}</div>')
    for text in result.get("notes", []):
        parts.append(f'<div class="rt-note">{escape(text)}</div>')
    for candidate in result.get("candidates", []):
        mark = "✔" if candidate["passed"] else "✘"
        failures = "; ".join(candidate["failures"])
        parts.append(f'<div class="rt-candidate">{mark} candidate: {escape(candidate["description"])}'
                     + (f' <span class="rt-finding-how">({escape(failures)})</span>' if failures else "") + "</div>")
    parts.append("</div>")
    return "".join(parts)
