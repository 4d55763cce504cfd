"""Template inference, tool calls, where aligning the renders reads none: the syntax a chat
template writes calls in, from the differences of its renders.

`engine.chat_templates.examples.aligned_calls` learns the calls first, reading each render as a
labelled output; this learner runs only where it reads no call (renders that write one call
in two readings no parser shares), and says why no call syntax was found.

The renders of one call, of two calls with different names, of a call with only typed
arguments and of text followed by a call (`engine.chat_templates.probes`) are cut down to
their tool-call section (what they add to a plain answer), and the needles in them
locate everything else:

* the payload of each call: a JSON list of calls, a JSON object holding the name and
  the arguments, a JSON object of the arguments alone, a Python-style call list,
  JSON with bare keys and string delimiters of the template's own, tagged
  arguments (a key tag and a value tag per argument), or one `key: value` line an
  argument;
* around the payloads, from the text before the first, between the two and after the
  last: the marker each call opens and closes with (where the name sits when it is not
  in the payload, and an index or id that varies), the section markers around all the
  calls, and the separator between them.

Each shape that could explain the renders is built as a `tool_calls` field and kept
only when it parses every render back to its calls. Nothing here knows a model family.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

import regex

from ..errors import ResponseParseError
from ..pattern_shapes import pattern_literal
from .call_shapes import (
    SHAPES,
    Sections,
    Shape,
    call_paths,
    json_arguments_spans,
    keyed_by_name,
)
from .markup import (
    CALL_ID,
    NAME,
    NUMBER,
    STAND_INS,
    has_stand_in,
    literal_head,
    markup_pieces,
    pattern_with_stand_ins,
    shared_end,
    shared_start,
    show_text,
    token_joints,
)
from .probes import (
    ALPHA,
    ALPHA_ARGUMENTS,
    ANSWER,
    BETA,
    BETA_ARGUMENTS,
    CALL_IDS,
    FINAL_MESSAGES,
    LEAD,
    PROBE_TOOLS,
    STRING_KEY,
    Finding,
    Render,
    Turn,
)
from .render import common_suffix_length, token_boundary
from .turns import argument_defects, back_to_boundary, common_length


@dataclass
class CallTurns:
    """The turns that show the call syntax, in one thinking mode (None: not rendered).

    Attributes:
        answer: a plain answer (what the call turns are compared with).
        call, two_calls, typed_call, lead_and_call: see `engine.chat_templates.probes.FINAL_MESSAGES`.
        end_markers: the end-of-turn markers learnt from the answer (for a call without a close).
        generation_prompt: what the first turn's generation prompt writes.
    """

    answer: Turn
    call: Turn | None
    two_calls: Turn | None
    typed_call: Turn | None
    lead_and_call: Turn | None
    end_markers: list[str]
    generation_prompt: str = ""


@dataclass
class CallSyntax:
    """A tool-call syntax that reads every call render back.

    Attributes:
        field: the `tool_calls` field of the response template.
        content_closes: markers around the calls (a section's begin and end) that end the
            implicit field's text and are dropped.
        call_starts: patterns of what a call (or its section) starts with, for a reasoning
            region that a call may end (with the payload's first character where it follows).
        description: the shape, for people ("a JSON object per call, the name inside").
        findings: the evidence of each part.
        prewritten: the start of each call's open that the prompt writes before the first call
            (the generation prompt ends with it), or "".
        opening: the literal text each call (or its list) opens with, or "".
        close_patterns: content closes that are patterns (a marker before each call with a
            word that varies: the call's id), which no turn without a call writes.
    """

    field: dict
    content_closes: list[str]
    call_starts: list[str]
    description: str
    findings: list[Finding] = field(default_factory=list)
    prewritten: str = ""
    opening: str = ""
    close_patterns: list[str] = field(default_factory=list)


@dataclass
class NoCallSyntax:
    """Why no tool-call syntax was learnt from the renders.

    Attributes:
        why: one sentence (the note inference writes).
        written: whether some render writes a call (the syntax is there but cannot be read).
        construct: the construct of the template language that would read it, when that is
            what is missing ("" otherwise).
        renders: the renders that show it (a plain answer and a call).
    """

    why: str
    written: bool = False
    construct: str = ""
    renders: tuple[Render, ...] = ()


# What the template language lacks to read calls keyed by the function's name.
NAME_AS_KEY = (
    "a way to read a JSON object's key as a value: a content parser or transform that turns "
    '{"NAME": {ARGUMENTS}} into a name and its arguments'
)


def learn_call_syntax(modes: list[CallTurns]) -> CallSyntax | NoCallSyntax:
    """The tool-call syntax of these renders (one `CallTurns` a thinking mode), or why none was
    found."""
    rendered = [turns for turns in modes if turns.call is not None]
    if not rendered:
        return NoCallSyntax(
            "the chat template writes no tool call of an assistant message (or refuses every one)"
        )
    all_sections = [(turns, _sections(turns)) for turns in rendered]
    all_sections = [(turns, sections) for turns, sections in all_sections if sections.one.strip()]
    if not all_sections:
        return NoCallSyntax(
            f"the render of {rendered[0].call.render.label} adds nothing to a plain answer: it "
            "writes no tool call"
        )
    problems, construct = [], ""
    for turns, sections in all_sections:
        shapes = [shape for make in SHAPES for shape in [make(sections)] if shape]
        if not shapes:
            problem, missing = _unreadable(sections)
            problems.append(problem)
            construct = construct or missing
            continue
        others = [other for _, other in all_sections if other is not sections]
        for shape in shapes:
            built = _build(shape, sections, others, turns)
            if isinstance(built, str):
                problems.append(f"{shape.description}: {built}")
                continue
            return built
    sections = all_sections[0][1]
    renders = (sections.renders["answer"], sections.renders["call"])
    return NoCallSyntax("; ".join(dict.fromkeys(problems)), True, construct, renders)


def _unreadable(sections: Sections) -> tuple[str, str]:
    """Why no payload shape explains the calls, and the construct that would (or "")."""
    if keyed_by_name(sections.one):
        return (
            "each call is a JSON object whose only key is the function's name and whose value is "
            f"its arguments ({show_text(sections.one)}); a transform reads values, never a key",
            NAME_AS_KEY,
        )
    if regex.search(rf"'(?:{ALPHA}|{STRING_KEY})'", sections.one):
        return (
            f"the calls are Python literals (single-quoted strings, True/False/None: "
            f"{show_text(sections.one)}), and no content parser reads a Python dict",
            "a content parser for Python literals (dicts with single-quoted strings)",
        )
    return f"no call syntax the template language can read explains {show_text(sections.one)}", ""


# -- the sections ----------------------------------------------------------------------


def _sections(turns: CallTurns) -> Sections:
    answer = turns.answer.text
    at = answer.find(ANSWER)
    before, after = (answer[:at], answer[at + len(ANSWER) :]) if at >= 0 else ("", answer)
    renders = {"answer": turns.answer.render}

    def cut(turn: Turn | None, name: str) -> str | None:
        if turn is None:
            return None
        renders[name] = turn.render
        return _between(turn.text, before, after)

    after_lead = None
    if turns.lead_and_call is not None:
        renders["lead-and-call"] = turns.lead_and_call.render
        text = turns.lead_and_call.text
        at = text.find(LEAD)
        if at >= 0:
            after_lead = _between(text[at + len(LEAD) :], "", after)
    return Sections(
        cut(turns.call, "call") or "",
        cut(turns.two_calls, "two-calls"),
        cut(turns.typed_call, "typed-call"),
        after_lead,
        renders,
    )


def _between(text: str, before: str, after: str) -> str:
    """`text` without what it shares with `before` at its start and with `after` at its end
    (each cut at a token boundary)."""
    start = back_to_boundary(text, common_length(text, before)) if before else 0
    body = text.rstrip()
    tail = after.rstrip()
    end = len(body) - common_suffix_length(body, tail) if tail else len(body)
    while start < end < len(body) and not token_boundary(body, end):
        end += 1
    return body[start : max(end, start)]


# -- payload shapes ----------------------------------------------------------------------


# -- the text around the payloads ---------------------------------------------------------


def _generalize(text: str, name: str | None) -> str:
    for call_id in CALL_IDS:
        text = text.replace(call_id, CALL_ID)
    if name:
        text = text.replace(name, NAME)
    return regex.sub(r"\d+", NUMBER, text)


def _shared_end(texts: list[str]) -> str:
    return shared_end(texts, STAND_INS)


@dataclass
class _Around:
    """The text around the payloads of a shape, stand-ins in place of names and numbers.

    Attributes:
        befores: before the first payload of each call render (and after the lead text).
        afters: after the last payload of each call render.
        middles: between the two payloads of each two-call render.
    """

    befores: list[str] = field(default_factory=list)
    afters: list[str] = field(default_factory=list)
    middles: list[str] = field(default_factory=list)


@dataclass
class _Markers:
    """What marks the calls: each call's open and close, the section's, and the separator.

    Attributes:
        call_open, call_close: the text before and after each call's payload.
        section_open: written once before all the calls.
        section_closes: written once after them (one per distinct ending).
        separator: between two calls, besides their own open and close.
        prewritten: the part of each call's open that the prompt writes before the first call
            (a recipient marker the generation prompt ends with), or "".
        two_rendered: whether a render shows two calls (else the separator is unknown).
    """

    call_open: str
    call_close: str
    section_open: str
    section_closes: list[str]
    separator: str
    prewritten: str = ""
    two_rendered: bool = False

    @property
    def section_close(self) -> str:
        return " ".join(text for text in self.section_closes if text)


def _around(shape: Shape, sections: Sections, others: list[Sections]) -> _Around:
    around = _Around()
    for each in [sections, *others]:
        found = shape.spans(each.one, (ALPHA,))
        if found is None:
            continue
        around.befores.append(_generalize(each.one[: found[0][0]], ALPHA))
        around.afters.append(_generalize(each.one[found[-1][1] :], ALPHA))
        pair = shape.spans(each.two, (ALPHA, BETA)) if each.two else None
        if pair is not None:
            (s1, e1), (s2, e2) = pair
            around.befores.append(_generalize(each.two[:s1], ALPHA))
            around.middles.append(_generalize(each.two[e1:s2], BETA).replace(ALPHA, NAME))
            around.afters.append(_generalize(each.two[e2:], BETA))
        typed = shape.spans(each.typed, (BETA,)) if each.typed is not None else None
        if typed:
            around.befores.append(_generalize(each.typed[: typed[0][0]], BETA))
            around.afters.append(_generalize(each.typed[typed[-1][1] :], BETA))
        lead = shape.spans(each.after_lead, (ALPHA,)) if each.after_lead is not None else None
        if lead:
            around.befores.append(_generalize(each.after_lead[: lead[0][0]], ALPHA))
    return around


def _markers(around: _Around) -> _Markers:
    befores, afters, middles = around.befores, around.afters, around.middles
    call_open = _shared_end(befores + middles)
    middle = middles[0] if middles else None
    if middle is not None and len(call_open) <= len(middle):
        call_close = shared_start([middle[: len(middle) - len(call_open)], *afters]).rstrip()
    else:
        call_close = shared_start(afters).rstrip()
    section_open = _shared_end(
        [before[: len(before) - len(call_open)] for before in befores]
    ).strip()
    section_closes = list(
        dict.fromkeys(
            after[len(call_close) :].strip() for after in afters if after.startswith(call_close)
        )
    )
    separator = ""
    if middle is not None and len(middle) >= len(call_close) + len(call_open):
        separator = middle[len(call_close) : len(middle) - len(call_open)]
    markers = _Markers(
        call_open, call_close, section_open, section_closes, separator, "", middle is not None
    )
    # A recipient format: nothing closes a call, the text between two calls starts the next one,
    # and the first call lacks it because the prompt writes it (it ends with it).
    if not call_close.strip() and separator.strip() and not literal_head(call_open):
        if any(before.endswith(separator + call_open) for before in befores + middles):
            markers.call_open = separator + call_open
            markers.prewritten, markers.separator = separator, ""
    return markers


def _build(
    shape: Shape, sections: Sections, others: list[Sections], turns: CallTurns
) -> CallSyntax | str:
    """The field for `shape`, its open and close learnt from the text around the payloads in
    `sections` and in the other thinking modes' `others`."""
    spans1 = shape.spans(sections.one, (ALPHA,))
    if spans1 is None:
        return f"its payload is not found in {show_text(sections.one)}"
    if shape.list_form:
        return _build_list(shape, sections, others, spans1, turns)
    markers = _markers(_around(shape, sections, others))
    if markers.prewritten and not turns.generation_prompt.rstrip().endswith(
        markers.prewritten.strip()
    ):
        # The first call's open lacks the separator, but not because the prompt writes it.
        markers.separator, markers.prewritten = markers.prewritten, ""
        markers.call_open = markers.call_open[len(markers.separator) :]
    if shape.name_outside and NAME not in markers.call_open:
        return (
            "the function's name is neither in the payload nor in the text before it "
            f"({show_text(markers.call_open)})"
        )
    spec: dict[str, Any] = {}
    ends = [marker for marker in turns.end_markers if marker]
    problem = _open_spec(spec, shape, markers, sections.one[spans1[0][0] : spans1[0][1]], ends)
    if problem:
        return problem
    shape = spec.pop("_shape", shape)
    problem = _close_spec(spec, shape, markers, ends)
    if problem:
        return problem
    spec.update({"repeats": True, "content": shape.content})
    if shape.content_args:
        spec["content_args"] = shape.content_args
    spec["transform"] = shape.transform
    content_closes = [
        piece
        for text in (markers.section_open, *markers.section_closes)
        if text and not has_stand_in(text)
        for piece in markup_pieces(text)
    ]
    syntax = CallSyntax(
        spec,
        content_closes,
        _call_starts(shape, markers),
        shape.description,
        [],
        markers.prewritten,
        literal_head(markers.call_open),
    )
    if markers.prewritten:
        sections = _with_prewritten(sections, markers.prewritten)
    return _verified(syntax, sections, turns, markers)


def _with_prewritten(sections: Sections, prewritten: str) -> Sections:
    """The call renders as the parser sees them: after what the prompt pre-writes."""
    return replace(
        sections,
        one=prewritten + sections.one,
        two=prewritten + sections.two if sections.two else sections.two,
        typed=prewritten + sections.typed if sections.typed else sections.typed,
    )


def _call_starts(shape: Shape, markers: _Markers) -> list[str]:
    """Patterns of what a call (or its section) starts with."""
    opening = markers.call_open.strip()
    starts = [pattern_literal(markers.section_open)] if markers.section_open else []
    head = literal_head(opening)
    if head:
        whole = head == opening and shape.payload_start
        starts.append(
            pattern_literal(head) + (rf"\s*{pattern_literal(shape.payload_start)}" if whole else "")
        )
    return starts


def _separator_pattern(markers: _Markers) -> str:
    """What may stand between two calls besides blanks: the rendered separator, or, where the
    chat template never renders two calls, a comma or semicolon (models join calls with them)."""
    between = markers.separator.strip()
    if between:
        return pattern_literal(between)
    return "" if markers.two_rendered else r"[,;]"


def _open_spec(
    spec: dict, shape: Shape, markers: _Markers, payload: str, ends: list[str]
) -> str | None:
    """Fill the field's open (and, for a call with nothing around it, its close); a sentence
    saying why not, or None."""
    opening = markers.call_open.strip()
    between = _separator_pattern(markers)
    if not opening:
        if shape.content != "json" or shape.name_outside:
            return "nothing marks where a call starts"
        # Nothing but the JSON marks a call: inside a JSON object, a closing brace is followed by a
        # comma or another brace, never by the next object or what ends the calls.
        found = _json_prefix_pattern(payload)
        if found is not None:
            patterns, spec["_shape"] = found
            spec["open_pattern"], braces = patterns.split("\x1f")
        else:
            first_key = regex.match(r'\{\s*"([^"\\]+)"', payload)
            if first_key is None:
                return (
                    "nothing marks where a call starts, and its JSON has no first key to know it by"
                )
            spec["open_pattern"] = rf'(?=\{{\s*"{pattern_literal(first_key.group(1))}")'
            braces = r"(?<=\})"
        following = [pattern_literal(text) for text in (*markers.section_closes, *ends) if text]
        following.append("$")
        consumed = rf"(?:\s*{between}(?=\s*\{{))?" if between else ""
        spec["close_pattern"] = braces + consumed + r"(?=\s*(?:\{|" + "|".join(following) + "))"
        return None
    payload_start = shape.payload_start
    if not payload_start and opening.endswith(NAME) and shape.content == "json":
        payload_start = "{"  # only blanks after the name: the payload must follow
    if (
        has_stand_in(opening)
        or regex.search(r"\s", opening)
        or payload_start
        or token_joints(opening)
    ):
        # A JSON payload must follow: text that only mentions the marker stays text.
        spec["open_pattern"] = pattern_with_stand_ins(opening) + (
            rf"(?=\s*{pattern_literal(payload_start)})" if payload_start else ""
        )
    else:
        spec["open"] = opening
    return None


def _close_spec(spec: dict, shape: Shape, markers: _Markers, ends: list[str]) -> str | None:
    """Fill the field's close; a sentence saying why not, or None."""
    if "close_pattern" in spec:
        return None
    closing = markers.call_close.strip()
    head = literal_head(markers.call_open.strip())
    between = _separator_pattern(markers)
    if closing:
        # A separator that is more than blanks goes with the call before it (when another call follows).
        consumed = rf"(?:\s*{between}(?=\s*{pattern_literal(head)}))?" if between and head else ""
        if shape.json_like:
            spec["close_pattern"] = (
                r"(?<=[}\]])\s*" + pattern_with_stand_ins(closing, name_group=False) + consumed
            )
        elif (
            regex.search(r"\s", closing)
            or has_stand_in(closing)
            or consumed
            or token_joints(closing)
        ):
            spec["close_pattern"] = pattern_with_stand_ins(closing, name_group=False) + consumed
        else:
            spec["close"] = closing
        return None
    if not head:
        return "no text closes a call, and none starts the next one"
    # Nothing closes a call: the next call's start, or the end of the turn, ends it.
    alternatives = [f"(?={pattern_literal(head)})"] + [pattern_literal(marker) for marker in ends]
    spec["close_pattern"] = "|".join(alternatives)
    return None


def _json_text_pattern(text: str) -> str:
    """A regex for the start of a JSON object as rendered, blanks allowed between its tokens (a
    model writes ``{ "name":"x"`` where the render writes ``{"name": "x"``), the name's stand-in
    inside a string as the `name` group."""
    pieces = regex.findall(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^\s{}\[\],:"]+', text)
    pattern = r"\s*".join(
        pattern_literal(piece).replace(NAME, r'(?P<name>[^"\\]+)') for piece in pieces
    )
    return pattern + (r"\s*" if text[-1:].isspace() or text.rstrip().endswith(":") else "")


def _json_prefix_pattern(call_text: str) -> tuple[str, Shape] | None:
    """For a call written as a JSON object with nothing around it: a pattern of its text up to the
    arguments object, with the name as a group, the pattern of what closes it after the arguments,
    and the shape whose content is the arguments object. None unless the name comes first."""
    try:
        value = json.loads(call_text)
    except ValueError:
        return None
    paths = call_paths(value, ALPHA, ALPHA_ARGUMENTS)
    if not paths:
        return None
    key_at = call_text.find(f'"{paths[1][-1]}"')
    brace = call_text.find("{", key_at)
    if key_at < 0 or brace < 0:
        return None
    try:
        _, end = json.JSONDecoder().raw_decode(call_text, brace)
    except ValueError:
        return None
    head, tail = call_text[:brace], call_text[end:].strip()
    if ALPHA not in head or not tail or tail.strip("}"):
        return None
    opening = _json_text_pattern(head.replace(ALPHA, NAME))
    closing = r"(?<=\})" + "".join(
        r"\s*\}" for _ in tail
    )  # the lookahead of what follows is added by _build
    transform = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    what = ".".join(paths[1])
    shape = Shape(
        f"a JSON object per call with nothing around it, the name before {what!r}",
        "json",
        {},
        transform,
        False,
        json_arguments_spans,
    )
    return f"{opening}\x1f{closing}", shape


def _build_list(
    shape: Shape,
    sections: Sections,
    others: list[Sections],
    spans: list[tuple[int, int]],
    turns: CallTurns,
) -> CallSyntax | str:
    one = sections.one
    befores = [one[: spans[0][0]]]
    for each in [sections, *others]:
        found = shape.spans(each.one, (ALPHA,))
        if found and each is not sections:
            befores.append(each.one[: found[0][0]])
        if each.after_lead is not None:
            lead = shape.spans(each.after_lead, (ALPHA,))
            if lead:
                befores.append(each.after_lead[: lead[0][0]])
        if each.two:
            two = shape.spans(each.two, (ALPHA, BETA))
            if two:
                befores.append(each.two[: two[0][0]])
    opening = _shared_end(befores).strip()
    closing = one[spans[0][1] :].strip()
    spec: dict[str, Any] = {}
    if opening and shape.payload_start:
        spec["open_pattern"] = (
            pattern_with_stand_ins(opening) + rf"(?=\s*{pattern_literal(shape.payload_start)})"
        )
    elif opening:
        spec["open"] = opening
    elif shape.content == "python-call-list":
        spec["open_pattern"] = r"(?=\[\s*[A-Za-z_][\w.\-]*\()"
    else:
        spec["open_pattern"] = r"(?=\[\s*\{)"
    ends = [pattern_literal(marker) for marker in turns.end_markers if marker]
    if closing:
        spec["close_pattern"] = r"(?<=\])\s*" + pattern_with_stand_ins(closing)
    elif ends:
        spec["close_pattern"] = r"(?<=\])\s*(?:" + "|".join(ends) + ")"
    spec.update({"content": shape.content, "transform_each": True, "transform": shape.transform})
    section_open = befores[0].strip()[: -len(opening)].strip() if opening else befores[0].strip()
    starts = (
        [
            pattern_with_stand_ins(opening)
            + (rf"\s*{pattern_literal(shape.payload_start)}" if shape.payload_start else "")
        ]
        if opening
        else []
    )
    syntax = CallSyntax(
        spec, [section_open] if section_open else [], starts, shape.description, [], "", opening
    )
    return _verified(syntax, sections, turns, _Markers(opening, closing, section_open, [], ""))


def _verified(
    syntax: CallSyntax, sections: Sections, turns: CallTurns, markers: _Markers
) -> CallSyntax | str:
    """`syntax` with its findings when it parses every call render back, else what failed."""
    problem = _reads_back(syntax, sections, turns)
    if problem:
        return problem
    syntax.findings += _evidence(syntax, sections, markers)
    return syntax


def _reads_back(syntax: CallSyntax, sections: Sections, turns: CallTurns) -> str | None:
    """None when `syntax` parses every call render (that writes its arguments readably) back to
    its calls, else what failed."""
    from ..parser import ResponseParser

    closes = [*syntax.content_closes, *(marker for marker in turns.end_markers if marker)]
    template = {
        "start_anchor": "\x03",
        "fields": {"tool_calls": syntax.field, "content": {"close": closes} if closes else {}},
    }
    cases = [(sections.one, [(ALPHA, ALPHA_ARGUMENTS)], "call")]
    if sections.two:
        cases.append(
            (sections.two, [(ALPHA, ALPHA_ARGUMENTS), (BETA, BETA_ARGUMENTS)], "two-calls")
        )
    if sections.typed:
        cases.append((sections.typed, [(BETA, BETA_ARGUMENTS)], "typed-call"))
    read = 0
    for text, expected, name in cases:
        if argument_defects(FINAL_MESSAGES[name], text):
            continue  # the chat template writes this call in a form no parser reads back (say, unquoted strings)
        read += 1
        try:
            parser = ResponseParser(template, prefix="", tools=PROBE_TOOLS)
            message, _ = parser.finalize(text)
        except (ResponseParseError, ValueError) as error:
            return f"it does not parse the render of {sections.renders[name].label}: {error}"
        got = [
            (c.get("function", {}).get("name"), c.get("function", {}).get("arguments"))
            for c in message.get("tool_calls", [])
        ]
        if got != expected:
            return (
                f"it reads {got} from the render of {sections.renders[name].label}, not {expected}"
            )
    if not read:
        return "the chat template writes every call in a form no parser reads back (strings without quotes)"
    return None


def _evidence(syntax: CallSyntax, sections: Sections, markers: _Markers) -> list[Finding]:
    """The findings of a verified syntax, each with the two renders that show it."""
    one, two = sections.renders["call"], sections.renders.get("two-calls")
    answer = sections.renders["answer"]
    pair = (one, two) if two else (answer, one)
    spec = syntax.field
    found = [
        Finding(
            "fields.tool_calls.content",
            spec["content"],
            f"the calls' payload is {syntax.description}: read back as every call's name and arguments",
            (answer, one),
        )
    ]
    key = "open_pattern" if "open_pattern" in spec else "open"
    if key in spec:
        how = (
            f"the text before each call's payload ({show_text(markers.call_open)}), the same before "
            "the first call and the second"
            + (" with the function's name as a group" if NAME in markers.call_open else "")
            + (
                f"; the prompt writes {show_text(markers.prewritten)} before the first"
                if markers.prewritten
                else ""
            )
        )
        found.append(Finding(f"fields.tool_calls.{key}", spec[key], how, pair))
    key = "close_pattern" if "close_pattern" in spec else "close"
    if key in spec:
        how = (
            f"the text after each call's payload ({show_text(markers.call_close.strip())})"
            if markers.call_close.strip()
            else "no text ends a call: the next call's start or the end of the turn does"
        )
        if not markers.two_rendered and markers.call_open.strip():
            how += (
                "; no render shows two calls"
                if two is None
                else "; the render of two calls could not be split call by call"
            ) + ", so a comma or semicolon between two is allowed"
        found.append(Finding(f"fields.tool_calls.{key}", spec[key], how, pair))
    section_open, section_close = markers.section_open, markers.section_close
    if section_open.strip() or section_close.strip():
        found.append(
            Finding(
                "fields.content.close",
                [t for t in (section_open, section_close) if t.strip()],
                f"markers around all the calls, written once for two calls ({show_text(section_open)} before, "
                f"{show_text(section_close)} after): they end the text before them and are dropped",
                pair,
            )
        )
    if two is not None:
        found.append(
            Finding(
                "fields.tool_calls.repeats",
                True,
                f"two calls are written one after the other, separated by {show_text(markers.separator)}",
                (one, two),
            )
        )
    return found
