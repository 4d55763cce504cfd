"""Template inference, candidates: the learnt parts put together as response templates.

Where the renders cannot tell two readings apart, each reading is a candidate, most specific
first, and the conformance matrix (and the author's example outputs, when given) decides:

* reasoning also ends where a tool call starts (a call written inside unclosed reasoning),
  unless its closer follows later (a call only quoted inside reasoning stays reasoning);
* reasoning that starts the turn with no opener opens at the turn's start, or only when its
  closer follows (a continued answer with no closer is content, at the cost of holding the
  reasoning until the closer arrives while streaming);
* where the prompt pre-writes the reasoning's opener and example outputs are given, the
  reasoning also opens at the start of a turn whose prompt did not, when its closer follows
  (a prompt from another stack);
* the template as learnt, then without tool calls, then without reasoning; before them all, a
  template learnt by aligning the example outputs, where the others misread an example; after
  them all, a template learnt by aligning the renders with the messages rendered (the same
  aligner), where it differs from the others.
"""

from __future__ import annotations

from typing import Any

import regex

from ..pattern_shapes import pattern_literal, top_level_alternatives
from .markup import rendered_text_pattern
from .parts import Parts


def split_content_closes(content: dict) -> tuple[list[str] | None, list[str]]:
    """(the markers, the patterns) a content field closes at: its `close` (one marker or a
    list), or its `close_pattern` cut at its top-level alternatives, each plain text (a marker)
    or a pattern (a marker with a word that varies); (None, []) when the pattern cannot be cut."""
    if "close_pattern" not in content:
        closes = content.get("close", [])
        return ([closes] if isinstance(closes, str) else list(closes)), []
    alternatives = top_level_alternatives(content["close_pattern"])
    if alternatives is None:
        return None, []
    literals, patterns = [], []
    for alternative in filter(None, alternatives):
        # Plain text: the alternative is the pattern of its own text unescaped.
        text = regex.sub(r"\\(.)", r"\1", alternative)
        if pattern_literal(text) == alternative:
            literals.append(text)
        else:
            patterns.append(alternative)
    return literals, patterns


def content_keys(closes: list[str], patterns: list[str]) -> dict:
    """The implicit content field's close keys: `closes` as its close (one marker or a list),
    or, with `patterns` (each a pattern of a marker with a varying word), one close pattern:
    the markers a pattern matches only the start of, the patterns, then the other markers.
    Longer markers go first: one marker may start another, and the first alternative that
    matches wins. {} when there is none."""
    if not patterns:
        return {"close": closes[0] if len(closes) == 1 else list(closes)} if closes else {}
    ordered = sorted(closes, key=len, reverse=True)
    longer = [
        close
        for close in ordered
        if any(
            (start := regex.match(pattern, close)) and start.end() < len(close)
            for pattern in patterns
        )
    ]
    literals = [pattern_literal(close) for close in ordered if close not in longer]
    return {"close_pattern": "|".join([*map(pattern_literal, longer), *patterns, *literals])}


def candidates(parts: Parts) -> list[tuple[str, dict]]:
    """(description, template) for each candidate, most specific first."""
    anchor = anchor_keys(parts)
    content = content_keys(parts.closes, parts.close_patterns)

    def template(reasoning: dict | None, calls: dict | None) -> dict:
        fields: dict[str, Any] = {}
        if reasoning:
            fields["reasoning_content"] = reasoning
        if calls:
            fields["tool_calls"] = calls
        fields["content"] = content
        return {"defaults": {"role": "assistant"}, **anchor, "fields": fields}

    calls = parts.calls.field if parts.calls else None
    variants = reasoning_variants(parts)
    found = [(description, template(spec, calls)) for description, spec in variants]
    if not variants:
        found.append(("as learnt", template(None, calls)))
    plain = next((spec for description, spec in variants if description == "as learnt"), None)
    if calls:
        found.append(("without tool calls", template(plain, None)))
    if variants:
        found.append(("without reasoning", template(None, calls)))
    if parts.example_template is not None:
        found.insert(0, (LEARNT_FROM_EXAMPLES, parts.example_template))
    if parts.render_template is not None:
        found.append((LEARNT_FROM_RENDERS, parts.render_template))
    if parts.evidence_template is not None:
        found.append((LEARNT_FROM_ALL, parts.evidence_template))
    return found


# What sets apart the candidate learnt by aligning the example outputs with their messages.
LEARNT_FROM_EXAMPLES = "learnt by aligning the example outputs"
# What sets apart the candidate learnt by aligning the renders with the messages rendered.
LEARNT_FROM_RENDERS = "learnt by aligning the renders with their messages"
# What sets apart the candidate learnt by aligning the renders and the example outputs together.
LEARNT_FROM_ALL = "learnt by aligning the renders and the example outputs together"


def anchor_keys(parts: Parts) -> dict[str, Any]:
    """`start_anchor` (a literal or a list), or `start_anchor_pattern` when an anchor has blanks
    inside (they vary between prompts) or the prompt may pre-write an optional lead after it."""
    return anchors_as_keys(parts.anchors, parts.optional_tails)


def anchors_as_keys(anchors: list[str], optional_tails: list[str]) -> dict[str, Any]:
    """`anchor_keys` of these anchors and optional tails (patterns)."""
    if not optional_tails and not any(regex.search(r"\s", text) for text in anchors):
        return {"start_anchor": anchors[0] if len(anchors) == 1 else list(anchors)}
    pattern = "|".join(rendered_text_pattern(text) for text in anchors)
    if optional_tails:
        tails = "|".join(optional_tails)
        pattern = (f"(?:{pattern})" if len(anchors) > 1 else pattern) + rf"(?:\s*(?:{tails}))?"
    return {"start_anchor_pattern": pattern}


def reasoning_variants(parts: Parts) -> list[tuple[str, dict]]:
    """The reasoning field's readings, (description, field), most specific first; [] without
    reasoning. The plain reading is described "as learnt"."""
    reasoning = parts.reasoning
    if reasoning is None:
        return []
    close = pattern_literal(reasoning.close)
    if reasoning.at_start:
        opens = [
            ("", {"open_pattern": "^"}),
            (
                ", opened at the start only when its closer follows",
                {"open_pattern": f"^(?=.*?{close})"},
            ),
        ]
    else:
        opens = [("", {"open": reasoning.open})]
        tolerant = tolerant_opener(parts)
        if tolerant is not None and parts.has_examples:
            opens.append((WITHOUT_OPENER, {"open_pattern": tolerant}))
    closes = [("as learnt", {"close": reasoning.close})]
    if parts.calls is not None and parts.calls.call_starts:
        starts = "|".join(dict.fromkeys(parts.calls.call_starts))
        # A call quoted inside reasoning that is closed later stays reasoning.
        closes.insert(
            0,
            (
                "reasoning also ends where a tool call starts, when its closer never follows",
                {"close_pattern": f"{close}|(?=(?:{starts})(?!.*?{close}))"},
            ),
        )
    return [
        (description + extra, {**open_keys, **close_keys})
        for description, close_keys in closes
        for extra, open_keys in opens
    ]


# What sets apart the candidate whose reasoning also opens where a turn's text meets its closer.
WITHOUT_OPENER = ", its closer also read without the opener at a turn's start"


def tolerant_opener(parts: Parts) -> str | None:
    """Where the prompt pre-writes the reasoning's opener alone in some thinking mode (the model
    is trained to start inside reasoning), an open that also takes the start of a turn whose
    prompt did not, when the closer follows (a prompt from another stack); else None. Only
    example outputs choose it: with it, such a turn's text is held while streaming until the
    closer, an opener or the end decides."""
    reasoning = parts.reasoning
    opener = reasoning.open
    if reasoning.at_start or not any(text.strip() == opener for text in parts.prewritten.values()):
        return None
    written = pattern_literal(opener)
    return f"{written}|^(?=(?:(?!{written}).)*?{pattern_literal(reasoning.close)})"
