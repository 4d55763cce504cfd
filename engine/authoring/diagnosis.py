"""Diagnosis: the cause of a parse that went wrong, in the template author's terms.

A parse error is usually a symptom: a JSON error in a tool call whose close
delimiter is misspelt, or in the system prompt because the start anchor never
matched. `diagnose` reads a finished parse (the spans of a tracer,
`engine.authoring.trace.Tracer`, which works the diagnoses out once when the
parse ends) and says what caused it, naming the template key and what to change:

- ``anchor-not-in-prefix``: the start anchor does not occur in the prefix, so the
  whole prefix was parsed as part of the message. Reported first: what follows
  may all come from it. It says what the prefix has instead (a near miss, or what
  follows the anchor's longest beginning the prefix holds: `<|im_start|>` then
  `assistant\\n`).
- ``near-miss``: a region's text holds something close to one of its delimiters:
  the close of a region that ran to the end without it, or the open of a field
  that never opened, in the text outside every region. Close means one or two
  characters differ, the case differs, or whitespace is missing or extra.
- ``pattern-context``: the literal of a delimiter pattern is there exactly, but the
  pattern did not match because of what it needs around the literal (a lookbehind,
  a lookahead). Severity ``note`` for an open (templates use a lookahead on purpose
  to skip a mere mention of the tag), ``error`` for the close of a region that never
  closed. When that region's text up to the literal does not parse with its content
  parser (JSON the model broke), the output is named as the cause, not the pattern.
- ``region-never-closed``: a region ran to the end without its close and swallowed
  other delimiters ("the tool_calls region never closed, and swallowed ...").
- ``close-is-open``: a close delimiter that expects its own field's open text (a close is never
  a near miss of its own open, so the output's real close is not called a misspelling of it).
- ``anchor-past-open``: the prompt ends with a field's open delimiter (a chat template that
  pre-writes `<think>`), but the start anchor cuts the prefix after it, so that field never
  opens and what the model writes in it goes to the implicit field. The fix is known (the
  anchor without the opener) and given as `Diagnosis.fix`.

Everything here is linear in the text: candidate places for a near miss are found
with q-gram counts, and fuzzy matching (the `regex` module's ``{e<=2}``) only runs
on those short windows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import regex

from ..content import parse_content
from ..delimiters import Delimiter
from ..pattern_shapes import pattern_literal
from ..template import FieldSpec, ResponseTemplate
from .pattern_explain import literal_runs
from .time_budget import deadline_in_force, regex_timeout

SEVERITY_ORDER = {"error": 0, "warning": 1, "note": 2}
# Seconds one regex call of the diagnosis may take.
REGEX_BUDGET = 0.05
# Delimiter texts shorter than this are too common to have near misses.
SHORTEST_NEAR_MISS = 5
# q-gram hits collected at most per delimiter text (beyond it the text is too repetitive to search).
MAX_GRAM_HITS = 50_000
# Characters of context shown around a place.
CONTEXT_SHOWN = 24


@dataclass
class Diagnosis:
    """One cause found in a parse.

    Attributes:
        code: ``anchor-not-in-prefix``, ``near-miss``, ``pattern-context`` or ``region-never-closed``.
        severity: ``error`` (explains a failed or wrong parse), ``warning`` (probably why
            something is missing) or ``note`` (may be intended).
        key: the template key to change (``start_anchor``, ``fields.tool_calls.close_pattern``).
        message: the cause and what to change, one or two sentences, naming `key`.
        change: what to change alone (``change '</toolcall>' to '</tool_call>' in
            fields.tool_calls.close_pattern``), or "".
        expected: the delimiter text the template expects, or None.
        found: the text in the input that came close (or that was swallowed), or None.
        how: ``edit``, ``case``, ``whitespace``, ``context``, ``prefix`` (what follows the
            anchor's beginning) or ``swallowed``; "" when it does not apply.
        field: the field whose region holds `found` (None: discarded text, or the prefix).
        stream_start, stream_end: the place of `found` in parser stream offsets (the prefix
            tail, then the generation), or None.
        source, start, end: the same place as ``"prefix"``/``"generation"`` and offsets in it.
        places: how many places hold the same near miss (the first is given).
        fix: the edit that fixes it when one is known, as {template key path: new value}
            (``{"start_anchor": "<|assistant|>"}``), else None.
        consequence: what the near miss did to the parse, in words (``the tool_calls region
            never closed and ran to the end of the text``), or "".
        confirmed_by: for a near miss the output is to blame for, where the template's delimiter
            is confirmed (`engine.authoring.delimiter_evidence.blame_the_output`), else ().
    """

    code: str
    severity: str
    key: str
    message: str
    change: str = ""
    expected: str | None = None
    found: str | None = None
    how: str = ""
    field: str | None = None
    stream_start: int | None = None
    stream_end: int | None = None
    source: str | None = None
    start: int | None = None
    end: int | None = None
    places: int = 1
    fix: dict | None = None
    consequence: str = ""
    confirmed_by: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class NearMiss:
    """Text close to a delimiter text: `[start, end)` in the searched text, how it differs."""

    start: int
    end: int
    text: str
    how: str
    errors: int = 0


class _Stretch:
    """What `diagnose` reads of a span (`engine.authoring.trace.TraceSpan`): its stream offsets,
    kind, field and region."""

    stream_start: int
    stream_end: int
    kind: str
    field: str | None
    region: int | None


def _show(text: str) -> str:
    return repr(text)


def _max_errors(literal: str) -> int:
    if len(literal) < SHORTEST_NEAR_MISS:
        return 0
    return 1 if len(literal) < 9 else 2


def _candidate_windows(literal: str, text: str, errors: int) -> list[tuple[int, int]] | None:
    """Windows of `text` that can hold a match of `literal` with at most `errors` edits
    (q-gram lemma), merged; None when the filter cannot tell (search the whole text)."""
    q = 2 if len(literal) < 8 else 3
    need = (len(literal) - q + 1) - errors * q
    if need < 1:
        return None
    implied: dict[int, set[int]] = {}
    hits = 0
    for k in range(len(literal) - q + 1):
        gram = literal[k : k + q]
        at = text.find(gram)
        while at != -1:
            implied.setdefault(at - k, set()).add(k)
            hits += 1
            if hits > MAX_GRAM_HITS:
                return []
            at = text.find(gram, at + 1)
    windows: list[tuple[int, int]] = []
    for start in sorted(implied):
        seen: set[int] = set()
        for shift in range(-errors, errors + 1):
            seen |= implied.get(start + shift, set())
        if len(seen) >= need:
            low, high = max(0, start - errors), min(len(text), start + len(literal) + errors)
            if windows and low <= windows[-1][1]:
                windows[-1] = (windows[-1][0], max(windows[-1][1], high))
            else:
                windows.append((low, high))
    return windows


def _same_edges(literal: str, found: str) -> bool:
    """A near miss starts and ends like its delimiter text (punctuation or a word character), so a
    piece cut out of a longer token (`m_start|>` of `<|im_start|>`) is not one."""

    def kind(char: str) -> bool:
        return char.isalnum() or char == "_"

    return kind(literal[0]) == kind(found[0]) and kind(literal[-1]) == kind(found[-1])


def _fuzzy(literal: str, text: str, errors: int, timeout: float) -> list[NearMiss]:
    windows = _candidate_windows(literal, text, errors)
    if windows is None:
        windows = [(0, len(text))] if len(text) <= 20_000 else []
    found: list[NearMiss] = []
    for allowed in range(1, errors + 1):
        pattern = regex.compile(
            f"(?e)(?:{regex.escape(literal)}){{e<={allowed}}}", regex.BESTMATCH, cache_pattern=False
        )
        for low, high in windows:
            try:
                match = pattern.search(text, low, high, timeout=regex_timeout(timeout))
            except TimeoutError:
                continue
            if (
                match is not None
                and match.group() != literal
                and match.group().strip()
                and _same_edges(literal, match.group())
            ):
                found.append(
                    NearMiss(
                        match.start(), match.end(), match.group(), "edit", sum(match.fuzzy_counts)
                    )
                )
        if found:
            return found
    return found


def near_misses(literal: str, text: str, *, timeout: float = REGEX_BUDGET) -> list[NearMiss]:
    """Places in `text` that hold something close to `literal` but not `literal` itself, best
    kind first: a case difference, then missing or extra whitespace, then two neighbouring
    characters swapped, then one or two edits (two only for texts of 9 characters or more;
    none below `SHORTEST_NEAR_MISS`)."""
    if len(literal) < SHORTEST_NEAR_MISS - 1 or not text:
        return []
    try:
        cased = [
            NearMiss(m.start(), m.end(), m.group(), "case")
            for m in regex.compile(
                regex.escape(literal), regex.IGNORECASE, cache_pattern=False
            ).finditer(text, timeout=regex_timeout(timeout))
            if m.group() != literal
        ]
        if cased:
            return cased
        bare = regex.sub(r"\s+", "", literal)
        if bare and len(bare) >= 3:
            loose = r"\s*".join(regex.escape(char) for char in bare) + (
                r"\s*" if literal[-1:].isspace() else ""
            )
            if literal[:1].isspace():
                loose = r"\s*" + loose
            spaced = [
                NearMiss(m.start(), m.end(), m.group(), "whitespace")
                for m in regex.compile(loose, cache_pattern=False).finditer(
                    text, timeout=regex_timeout(timeout)
                )
                if m.group() != literal
            ]
            if spaced:
                return spaced
        swapped = _swapped(literal, text, timeout)
        if swapped:
            return swapped
    except TimeoutError:
        return []
    errors = _max_errors(literal)
    return _fuzzy(literal, text, errors, timeout) if errors else []


def _swapped(literal: str, text: str, timeout: float) -> list[NearMiss]:
    """Places in `text` that hold `literal` with two neighbouring characters swapped
    (`</thnik>` for `</think>`): one slip of the fingers, though two edits apart."""
    if len(literal) < SHORTEST_NEAR_MISS:
        return []
    variants = {
        literal[:i] + literal[i + 1] + literal[i] + literal[i + 2 :]
        for i in range(len(literal) - 1)
        if literal[i] != literal[i + 1]
    }
    if not variants:
        return []
    pattern = regex.compile(
        "|".join(regex.escape(v) for v in sorted(variants, key=len, reverse=True)),
        cache_pattern=False,
    )
    return [
        NearMiss(m.start(), m.end(), m.group(), "swap", 1)
        for m in pattern.finditer(text, timeout=regex_timeout(timeout))
        if _same_edges(literal, m.group())
    ]


def how_it_differs(miss: NearMiss) -> str:
    """Words for how a near miss differs from its delimiter text."""
    if miss.how == "case":
        return "only the case differs"
    if miss.how == "whitespace":
        return "only whitespace differs (missing or extra spaces or newlines)"
    if miss.how == "swap":
        return "two neighbouring characters are swapped"
    if miss.how == "edit":
        return f"{miss.errors} character{'s' if miss.errors != 1 else ''} differ{'s' if miss.errors == 1 else ''}"
    return ""


# -- what a delimiter expects ---------------------------------------------------------


@dataclass(frozen=True)
class _Expected:
    """One text a delimiter's matches hold: the literal, or a pattern's literal run."""

    delimiter: Delimiter
    text: str
    pattern_before: str = ""
    pattern_after: str = ""

    @property
    def is_pattern(self) -> bool:
        return self.delimiter.literals is None


def _expected_texts(delimiter: Delimiter) -> list[_Expected]:
    if delimiter.literals is not None:
        return [_Expected(delimiter, literal) for literal in delimiter.literals]
    return [
        _Expected(delimiter, run.literal, run.before, run.after)
        for run in literal_runs(delimiter.source)
    ]


def _texts(delimiter: Delimiter | None) -> set[str]:
    return (
        set() if delimiter is None else {expected.text for expected in _expected_texts(delimiter)}
    )


def _fired_texts(spans: Sequence[_Stretch], stream: str) -> set[str]:
    """The texts delimiters matched in this parse (a near miss is never one of them)."""
    return {
        stream[s.stream_start : s.stream_end].strip()
        for s in spans
        if s.kind in ("open", "close") and s.stream_end > s.stream_start
    }


def _change_text(delimiter: Delimiter, expected: str, found: str) -> str:
    """How to change `delimiter`'s template key so it matches `found` where it expects `expected`."""
    found = found.strip() if expected.strip() == expected else found
    if delimiter.literals is not None and len(delimiter.literals) > 1:
        return f"change {_show(expected)} to {_show(found)} in {delimiter.path} (or add {_show(found)} to its list)"
    if delimiter.literals is not None:
        return f"change {delimiter.path} to {_show(found)}"
    escaped = f" (escaped: {pattern_literal(found)})" if pattern_literal(found) != found else ""
    return f"in {delimiter.path}, write {_show(found)} instead of {_show(expected)}{escaped}"


# -- the regions of a parse -------------------------------------------------------------


@dataclass
class _Region:
    field: str | None  # None: discarded text
    region: int | None
    start: int
    end: int
    closed: bool = False


def _regions(spans: Iterable[_Stretch]) -> list[_Region]:
    """Body stretches by region (discarded text by run), and whether a close span ended each."""
    found: dict[tuple, _Region] = {}
    order: list[_Region] = []
    last_discarded: _Region | None = None
    for span in spans:
        if span.kind == "body":
            key = (span.field, span.region)
            if key in found:
                found[key].end = span.stream_end
            else:
                found[key] = _Region(span.field, span.region, span.stream_start, span.stream_end)
                order.append(found[key])
            last_discarded = None
        elif span.kind == "close" and (span.field, span.region) in found:
            found[(span.field, span.region)].closed = True
        elif span.kind == "discarded":
            if last_discarded is not None and last_discarded.end == span.stream_start:
                last_discarded.end = span.stream_end
            else:
                last_discarded = _Region(None, None, span.stream_start, span.stream_end)
                order.append(last_discarded)
    return order


class _Places:
    """Stream offsets as places in the prefix or the generation, for messages."""

    def __init__(self, cut: int, tail_length: int):
        self.cut, self.tail_length = cut, tail_length

    def locate(self, stream_offset: int) -> tuple[str, int]:
        if stream_offset < self.tail_length:
            return "prefix", self.cut + stream_offset
        return "generation", stream_offset - self.tail_length

    def name(self, stream_offset: int) -> str:
        source, offset = self.locate(stream_offset)
        return f"{source} offset {offset:,}"

    def fill(self, diagnosis: Diagnosis) -> Diagnosis:
        if diagnosis.stream_start is not None:
            diagnosis.source, diagnosis.start = self.locate(diagnosis.stream_start)
            end = (
                diagnosis.stream_end if diagnosis.stream_end is not None else diagnosis.stream_start
            )
            diagnosis.end = diagnosis.start + (end - diagnosis.stream_start)
        return diagnosis


def _context(stream: str, start: int, end: int) -> str:
    return _show(stream[max(0, start - CONTEXT_SHOWN) : end + CONTEXT_SHOWN])


# -- the diagnoses ----------------------------------------------------------------------


def diagnose(
    template: ResponseTemplate,
    *,
    prefix: str,
    cut: int,
    anchor_found: bool,
    stream: str,
    tail_length: int,
    spans: Sequence[_Stretch],
    timeout: float = REGEX_BUDGET,
    deadline: float | None = None,
) -> list[Diagnosis]:
    """The causes visible in a finished parse, the start anchor first, then by severity and place.

    Args:
        template: the loaded template.
        prefix: the whole prefix; cut: where the start anchor cut it (0 when it did not).
        anchor_found: whether the anchor matched in the prefix.
        stream: the prefix tail followed by the generation; tail_length: the tail's length.
        spans: the parse's `TraceSpan`s, in order, tiling `stream` (what is read of them:
            ``stream_start``, ``stream_end``, ``kind``, ``field``, ``region``).
        timeout: seconds one regex call may take (a call over it finds nothing).
        deadline: a `time.perf_counter()` value all of it must end by (`time_budget`), or None:
            past it every regex call finds nothing, so what is found by then is returned.

    Returns:
        `Diagnosis` objects (see the module docstring); [] when nothing looks wrong.
    """
    with deadline_in_force(deadline):
        return _diagnose(template, prefix, cut, anchor_found, stream, tail_length, spans, timeout)


def _diagnose(
    template: ResponseTemplate,
    prefix: str,
    cut: int,
    anchor_found: bool,
    stream: str,
    tail_length: int,
    spans: Sequence[_Stretch],
    timeout: float,
) -> list[Diagnosis]:
    places = _Places(cut, tail_length)
    found: list[Diagnosis] = []
    if prefix and not anchor_found:
        found.append(_anchor_diagnosis(template.start_anchor, prefix, timeout))
    elif prefix:
        found += _anchor_past_open(template, prefix, cut, stream, tail_length, spans, timeout)
    fired = _fired_texts(spans, stream)
    regions = _regions(spans)
    opened = {region.field for region in regions if region.field is not None} | {
        span.field for span in spans if span.kind == "open"
    }
    opened -= _opened_leniently_only(template, spans)
    last_end = regions[-1].end if regions else 0
    runs_to_end = [r for r in regions if not r.closed and r.field is not None and r.end >= last_end]
    for region in runs_to_end:
        spec = template.fields.get(region.field)
        if spec is None or spec.close is None:
            continue
        found += _unclosed_region(
            template, spec, region, stream, places, fired | _texts(spec.open), timeout
        )
    unclaimed = [
        r
        for r in regions
        if r.field is None or (template.fields.get(r.field) and template.fields[r.field].implicit)
    ]
    for spec in template.fields.values():
        if spec.open is None or spec.name in opened:
            continue
        found += _open_near_misses(
            spec, unclaimed, stream, places, fired | _texts(spec.close), timeout
        )
    found = [places.fill(d) for d in found]
    first = found[:1] if found and found[0].code == "anchor-not-in-prefix" else []
    rest = sorted(
        found[len(first) :],
        key=lambda d: (
            SEVERITY_ORDER[d.severity],
            d.stream_start if d.stream_start is not None else -1,
        ),
    )
    return first + rest


def _unclosed_region(
    template: ResponseTemplate,
    spec: FieldSpec,
    region: _Region,
    stream: str,
    places: _Places,
    known: set[str],
    timeout: float,
) -> list[Diagnosis]:
    """A region that ran to the end without its close: near misses of the close, its literal
    failing on context, and the delimiters it swallowed."""
    body = stream[region.start : region.end]
    close = spec.close
    swallowed = [] if spec.implicit else _swallowed(template, spec, body, region.start)
    consequence = _never_closed(spec, swallowed, places)
    found: list[Diagnosis] = []
    expected_texts = _expected_texts(close)
    best = _best_near_miss(expected_texts, body, known, timeout)
    if best is not None and best[0].text in _texts(spec.open):  # never a near miss of its open
        found.append(_close_is_open(spec, best[0].text, consequence, region.start))
        best, expected_texts = None, []
    if best is not None:
        expected, misses = best
        miss = misses[0]
        at = region.start + miss.start
        change = _change_text(close, expected.text, miss.text)
        found.append(
            Diagnosis(
                "near-miss",
                "error" if not spec.implicit or swallowed else "warning",
                close.path,
                f"{close.path} expects {_show(expected.text)}, but the text has {_show(miss.text)} at {places.name(at)} "
                f"({how_it_differs(miss)}), so {consequence}. Fix: {change}.",
                change,
                expected.text,
                miss.text,
                miss.how,
                spec.name,
                at,
                at + len(miss.text),
                places=len(misses),
                consequence=consequence,
            )
        )
    for expected in expected_texts if not found else ():
        if expected.is_pattern:
            context = _context_failure(close, expected, body, region.start, stream, timeout)
            if context is not None:
                at, needs = context
                fix, change = _close_context_fix(spec, expected, body[: at - region.start])
                found.append(
                    Diagnosis(
                        "pattern-context",
                        "error" if not spec.implicit else "warning",
                        close.path,
                        f"{_show(expected.text)}, the literal of {close.path} {_show(close.source)}, is at {places.name(at)}, "
                        f"but the pattern does not match there: {needs}; the text there is "
                        f"{_context(stream, at, at + len(expected.text))}. So {consequence}. {fix}",
                        change,
                        expected.text,
                        expected.text,
                        "context",
                        spec.name,
                        at,
                        at + len(expected.text),
                    )
                )
                break
    if swallowed and not found:
        first_at, first_text, _ = swallowed[0]
        found.append(
            Diagnosis(
                "region-never-closed",
                "error",
                close.path,
                f"{consequence[0].upper()}{consequence[1:]}: its close {_show(close.source)} ({close.path}) never matched "
                f"after the open. Check {close.path} against what the model writes to end a {spec.name} region.",
                f"check {close.path}",
                close.source,
                first_text,
                "swallowed",
                spec.name,
                first_at,
                first_at + len(first_text),
                places=len(swallowed),
            )
        )
    return found


def _counts(miss: NearMiss, expected: str, known: set[str]) -> bool:
    """A near miss counts unless it is (after trimming) a text of `known` other than `expected`."""
    text = miss.text.strip() or miss.text
    return text == expected or text not in known - {expected}


_HOW_RANK = {"case": 0, "whitespace": 1, "swap": 2, "edit": 2}


def _never_closed(spec: FieldSpec, swallowed: list, places: _Places) -> str:
    """What a region that never closed did, in words."""
    return f"the {spec.name} region never closed" + (
        f" and swallowed {_swallowed_list(swallowed, places)}"
        if swallowed
        else " and ran to the end of the text"
    )


def _close_is_open(spec: FieldSpec, opened: str, consequence: str, at: int) -> Diagnosis:
    """``close-is-open``: a close delimiter that expects `opened`, its own field's open text,
    where the output has something close to it: the output's real close, which is no near miss
    of the open."""
    close = spec.close
    return Diagnosis(
        "close-is-open",
        "error",
        close.path,
        f"{close.path} expects {_show(opened)}, the open delimiter of {spec.name} itself, so "
        f"{consequence}. Fix: set {close.path} to the text the model writes to end a {spec.name} "
        "region (the output's close is not a misspelling of the open).",
        f"set {close.path} to the text that ends a {spec.name} region",
        opened,
        None,
        "",
        spec.name,
        at,
        at,
    )


def _best_near_miss(
    expected_texts: list[_Expected], text: str, known: set[str], timeout: float
) -> tuple[_Expected, list[NearMiss]] | None:
    """The closest near miss of any of `expected_texts` in `text`: a case difference first, then
    whitespace, then the fewest edits; with every place of the same text."""
    best = None
    for expected in expected_texts:
        misses = [
            m
            for m in near_misses(expected.text, text, timeout=timeout)
            if _counts(m, expected.text, known)
        ]
        if not misses:
            continue
        rank = (_HOW_RANK[misses[0].how], misses[0].errors, -len(expected.text))
        if best is None or rank < best[0]:
            best = (rank, expected, misses)
    return None if best is None else (best[1], best[2])


def _swallowed(
    template: ResponseTemplate, spec: FieldSpec, body: str, offset: int
) -> list[tuple[int, str, str]]:
    """(stream offset, text, what it is) of the delimiters matched inside `body`, in order."""
    found = []
    for other in template.fields.values():
        for delimiter, role in ((other.open, "open"), (other.close, "close")):
            if delimiter is None or (other is spec and role == "close"):
                continue
            if role == "close" and not other.implicit:
                continue  # another region's close means nothing while that region is not open
            try:
                match = next(
                    (
                        m
                        for m in delimiter.pattern.finditer(
                            body, timeout=regex_timeout(REGEX_BUDGET)
                        )
                        if m.end() > m.start()
                    ),
                    None,
                )
            except TimeoutError:
                match = None
            if match is not None:
                what = (
                    f"another {other.name} open" if other is spec else f"the {role} of {other.name}"
                )
                found.append((offset + match.start(), match.group(), what))
    return sorted(found)


def _swallowed_list(swallowed: list[tuple[int, str, str]], places: _Places) -> str:
    shown = [f"{_show(text)} at {places.name(at)} ({what})" for at, text, what in swallowed[:3]]
    more = f" and {len(swallowed) - 3} more" if len(swallowed) > 3 else ""
    return ", ".join(shown) + more


def _close_context_fix(spec: FieldSpec, expected: _Expected, before: str) -> tuple[str, str]:
    """(the sentence that ends a close's `pattern-context` message, its `change`): the pattern
    to loosen; or, when the body `before` the literal does not parse with the field's content
    parser, the model's output (a pattern that waits for a well-formed body, such as a
    lookbehind for the JSON's closing brace, is right not to close there)."""
    close = spec.close
    malformed = _unparsed_body(spec, before)
    if not malformed:
        return (
            f"Fix: make {close.path} accept what the model writes around {_show(expected.text)}.",
            f"make {close.path} accept the text around {_show(expected.text)}",
        )
    return (
        f"The {spec.name} text before it does not parse as {spec.content} ({malformed}): the "
        f"model's {spec.content} is broken there, and {close.path} waits for one that ends "
        "well. The template is right for a well-formed output; loosen "
        f"{close.path} only if the model writes this on purpose.",
        f"none in the template: the model's {spec.content} is broken before {_show(expected.text)}",
    )


def _unparsed_body(spec: FieldSpec, text: str) -> str:
    """Why `text` (a region's body up to where its close's literal stands) does not parse with the
    field's content parser, shortened; "" when it parses, or when the field takes any text."""
    if spec.content == "text" or not text.strip():
        return ""
    try:
        parse_content(spec.content, text, spec.content_args)
    except ValueError as error:
        return _shortened_reason(str(error))
    return ""


def _shortened_reason(reason: str, most: int = 80) -> str:
    """The first line of a parser's error without the text it quotes, at most `most` characters."""
    line = reason.splitlines()[0].split(": '", 1)[0] if reason else ""
    return line if len(line) <= most else line[: most - 1] + "…"


def _context_failure(
    delimiter: Delimiter, expected: _Expected, body: str, offset: int, stream: str, timeout: float
) -> tuple[int, str] | None:
    """(stream offset, what the pattern needs) where `expected.text` occurs in `body` but the
    pattern matches nowhere near it; None when there is no such place."""
    at = body.find(expected.text)
    while at != -1:
        start = offset + at
        low, high = max(0, start - 256), min(len(stream), start + len(expected.text) + 256)
        try:
            matched = any(
                m.start() <= start + len(expected.text) and m.end() >= start
                for m in delimiter.pattern.finditer(
                    stream, low, high, timeout=regex_timeout(timeout)
                )
            )
        except TimeoutError:
            return None
        if not matched:
            needs = []
            if expected.pattern_before:
                needs.append(f"{_show(expected.pattern_before)} must come before it")
            if expected.pattern_after:
                needs.append(f"{_show(expected.pattern_after)} after it")
            return start, " and ".join(
                needs
            ) or "the rest of the pattern does not fit the text around it"
        at = body.find(expected.text, at + 1)
    return None


def _opened_leniently_only(template: ResponseTemplate, spans: Sequence[_Stretch]) -> set[str]:
    """The fields whose regions only lenient reading opened (`engine.strays`: an open without
    its leading marker, a variant), never their own open: for the author, they never opened."""
    own = {name: spec.open.source for name, spec in template.fields.items() if spec.open}
    lenient, by_own = set(), set()
    for span in spans:
        if span.kind != "open" or span.field not in own:
            continue
        written = getattr(span, "delimiter", None)
        (by_own if written is None or written == own[span.field] else lenient).add(span.field)
    return lenient - by_own


def _open_near_misses(
    spec: FieldSpec,
    unclaimed: list[_Region],
    stream: str,
    places: _Places,
    known: set[str],
    timeout: float,
) -> list[Diagnosis]:
    """A field that never opened, and text outside every region close to its open."""
    open_ = spec.open
    where = (
        "the implicit field's text"
        if any(r.field is not None for r in unclaimed)
        else "the discarded text"
    )
    expected_texts = _expected_texts(open_)
    for region in unclaimed:
        body = stream[region.start : region.end]
        best = _best_near_miss(expected_texts, body, known, timeout)
        if best is None:
            continue
        expected, misses = best
        miss = misses[0]
        at = region.start + miss.start
        change = _change_text(open_, expected.text, miss.text)
        return [
            Diagnosis(
                "near-miss",
                "warning",
                open_.path,
                f"{open_.path} expects {_show(expected.text)}, but the text has {_show(miss.text)} at {places.name(at)} "
                f"({how_it_differs(miss)}), so no {spec.name} region opened and that text stayed in {where}. Fix: {change}.",
                change,
                expected.text,
                miss.text,
                miss.how,
                region.field,
                at,
                at + len(miss.text),
                places=len(misses),
                consequence=f"no {spec.name} region opened and that text stayed in {where}",
            )
        ]
    for region in unclaimed:
        body = stream[region.start : region.end]
        for expected in expected_texts:
            if not expected.is_pattern:
                continue
            context = _context_failure(open_, expected, body, region.start, stream, timeout)
            if context is not None:
                at, needs = context
                return [
                    Diagnosis(
                        "pattern-context",
                        "note",
                        open_.path,
                        f"{_show(expected.text)}, the literal of {open_.path} {_show(open_.source)}, is at {places.name(at)}, "
                        f"but the pattern does not match there: {needs}; the text there is "
                        f"{_context(stream, at, at + len(expected.text))}. If it was meant to open {spec.name}, "
                        f"make {open_.path} accept it.",
                        "",
                        expected.text,
                        expected.text,
                        "context",
                        region.field,
                        at,
                        at + len(expected.text),
                    )
                ]
    return []


def nearest_anchor(
    anchor: Delimiter, prefix: str, timeout: float = REGEX_BUDGET
) -> tuple[str, NearMiss] | None:
    """What in `prefix` comes closest to the start anchor: (the anchor text it is close to, the
    place), the last such place (the anchor cuts after its last match); None when nothing does.

    A near miss (`near_misses`) wins; else the longest beginning of the anchor text that the
    prefix holds (at least 3 characters), with what follows it up to the end of its line (or
    of its word, for an anchor with no newline), as ``how="prefix"``.
    """
    expected = _expected_texts(anchor)
    for item in expected:
        misses = near_misses(item.text, prefix, timeout=timeout)
        if misses:
            return item.text, misses[-1]
    best: tuple[int, str, NearMiss] | None = (
        None  # (length of the beginning found, anchor text, place)
    )
    for item in expected:
        text = item.text
        for length in range(len(text) - 1, max(2, len(text) // 3 - 1), -1):
            head = text[:length]
            if not head.strip():
                break
            at = prefix.rfind(head)
            if at == -1:
                continue
            end, limit = at + length, min(len(prefix), at + 2 * len(text) + 16)
            newline = prefix.find("\n", end, limit)
            if "\n" in text[length:] and newline != -1:
                end = newline + 1
            else:
                word = regex.match(r"[^\s<>\[\]|]*", prefix[end:limit])
                end += word.end() if word else 0
            if best is None or length > best[0]:
                best = (length, text, NearMiss(at, end, prefix[at:end], "prefix"))
            break
    return None if best is None else (best[1], best[2])


def _anchor_diagnosis(anchor: Delimiter, prefix: str, timeout: float) -> Diagnosis:
    key = anchor.path
    parsed = f"so the whole prefix ({len(prefix):,} characters, earlier turns and any system prompt included) was parsed as part of the message, and what follows may come from that"
    head = f"The start anchor {_show(anchor.source)} is not in the prefix, {parsed}."
    nearest = nearest_anchor(anchor, prefix, timeout)
    if nearest is None:
        return Diagnosis(
            "anchor-not-in-prefix",
            "error",
            key,
            head
            + f" The prefix ends with {_show(prefix[-40:])}."
            + f" Fix: set {key} to the assistant header the prompt ends with.",
            f"set {key} to the assistant header the prompt ends with",
            anchor.source,
            None,
            "",
            None,
            None,
            None,
        )
    expected, miss = nearest
    if miss.how == "prefix":
        common = _common_beginning(expected, miss.text)
        said = (
            f"The prefix's last {_show(common)} (at prefix offset {miss.start:,}) is followed by {_show(miss.text[len(common) :])}, "
            f"where the anchor has {_show(expected[len(common) :])}."
        )
    else:
        said = f"The prefix has {_show(miss.text)} at prefix offset {miss.start:,} ({how_it_differs(miss)})."
    change = (
        f"add {_show(miss.text)} to {key}"
        if anchor.literals is not None and len(anchor.literals) > 1
        else f"change {key} to {_show(miss.text)}"
        if anchor.literals is not None
        else f"make {key} match {_show(miss.text)}"
    )
    return Diagnosis(
        "anchor-not-in-prefix",
        "error",
        key,
        f"{head} {said} Fix: {change}.",
        change,
        expected,
        miss.text,
        miss.how,
        None,
        miss.start,
        miss.end,
    )


# How far before the cut an open delimiter the anchor cut past is looked for (characters).
OPENER_WINDOW = 400


def opener_before_cut(
    spec: FieldSpec, prefix: str, cut: int, timeout: float = REGEX_BUDGET
) -> str | None:
    """The text of `spec`'s open delimiter when a match of it ends the prefix before `cut` (only
    blanks between, and nothing but blanks after `cut`: a prompt that pre-writes the opener and
    whose start anchor cut after it), else None."""
    if spec.open is None or not cut or prefix[cut:].strip():
        return None
    low = max(0, cut - OPENER_WINDOW)
    try:
        matches = [
            m
            for m in spec.open.pattern.finditer(
                prefix, low, len(prefix), timeout=regex_timeout(timeout)
            )
            if m.end() > m.start() and m.end() <= cut and not prefix[m.end() : cut].strip()
        ]
    except TimeoutError:
        return None
    return matches[-1].group() if matches else None


def _anchor_without(anchor: Delimiter, opener: str) -> dict | None:
    """The start anchor with `opener` taken off the end of each literal that ends with it, as
    {key: value}; None for a pattern anchor (no edit is known) or when nothing ends with it."""
    literals = anchor.literals
    if literals is None:
        return None
    shortened = []
    for literal in literals:
        written = literal.rstrip()
        kept = written[: -len(opener)] if written.endswith(opener) else literal
        if kept and kept not in shortened:
            shortened.append(kept)
    if shortened == list(literals) or not shortened:
        return None
    key = anchor.path
    return {key: shortened[0] if len(shortened) == 1 else shortened}


def _anchor_past_open(
    template: ResponseTemplate,
    prefix: str,
    cut: int,
    stream: str,
    tail_length: int,
    spans: Sequence[_Stretch],
    timeout: float,
) -> list[Diagnosis]:
    """``anchor-past-open``: the prompt ends with a field's open delimiter and the start anchor
    cut the prefix after it, so the field never opened (a prompt whose tail holds text, such as
    a prefilled answer after the opener, is left alone: the anchor takes the opener on purpose)."""
    if not cut or prefix[cut:].strip():
        return []
    opened = {span.field for span in spans if span.kind == "open"}
    implicit = template.implicit_field
    found = []
    for spec in template.fields.values():
        if spec.open is None or spec.name in opened:
            continue
        opener = opener_before_cut(spec, prefix, cut, timeout)
        if opener is None:
            continue
        generation = stream[tail_length:]
        closes = sorted(
            (generation.find(text), text)
            for text in _texts(spec.close)
            if text and generation.find(text) >= 0
        )
        goes = f"goes to {implicit.name}" if implicit is not None else "is discarded"
        written = (
            f"; the model closed it ({_show(closes[0][1])} at generation offset {closes[0][0]:,}), "
            f"so what it wrote before that {goes}"
            if closes
            else f", and what the model writes in it {goes}"
        )
        fix = _anchor_without(template.start_anchor, opener)
        key = template.start_anchor.path
        change = (
            f"end the start anchor before {_show(opener)}: set {key} to {_show(next(iter(fix.values())))} "
            f"({spec.open.path} stays {_show(spec.open.source)})"
            if fix
            else f"make {key} end before {_show(opener)}, so the prompt's {_show(opener)} opens {spec.name}"
        )
        found.append(
            Diagnosis(
                "anchor-past-open",
                "error" if closes else "warning",
                key,
                f"The prompt ends with {_show(opener)}, the open delimiter of {spec.name} ({spec.open.path}), "
                f"but the start anchor {_show(template.start_anchor.source)} cuts the prefix after it, so "
                f"{spec.name} never opens{written}. Fix: {change}.",
                change,
                template.start_anchor.source,
                opener,
                "anchor",
                None,
                None,
                None,
                "prefix",
                cut - len(opener),
                cut,
                fix=fix,
            )
        )
    return found


def _common_beginning(a: str, b: str) -> str:
    length = 0
    while length < min(len(a), len(b)) and a[length] == b[length]:
        length += 1
    return a[:length]


def headline(diagnoses: Sequence[Diagnosis]) -> Diagnosis | None:
    """The diagnosis to lead with: the first of severity error or warning, else None."""
    return next((d for d in diagnoses if d.severity in ("error", "warning")), None)
