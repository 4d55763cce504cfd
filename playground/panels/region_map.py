"""The region map: every character of a parse, coloured by what became of it.

A pure function from a `ParseView` to HTML. Each stretch carries `data-i`, its
index in `view.spans`, which the page's script sends back when it is clicked
or chosen from the keyboard (see `playground.panels.page_script`), so
`playground.panels.explain` can say what it is. Colours come from classes
(`rt-f0`..`rt-f7` per field) defined for both themes in `playground.panels.styles`.

Offsets are stream offsets: 0 is the first character of the prefix after its
start-anchor cut; the generation follows the prefix tail.

The Tokens view (a parse of token ids, with "Tokens view" checked) underlines every other
token, gives each piece its token's index, id and text on hover, draws a delimiter matched
by a control token's id apart from one matched in text, and marks a control token spelled
out with ordinary tokens, with a note saying why it is no delimiter.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from engine.authoring.trace import TraceSpan

from ..parse.causes import diagnoses_of
from ..parse.parse_view import ParseView
from .markup import escape, visible_whitespace

# Colour slots; the message keys every template uses keep theirs whatever the field order.
PALETTE_SIZE = 8
FIXED_SLOTS = {"reasoning_content": 0, "tool_calls": 1, "content": 2}
# Characters of cut-away prefix shown before the start-anchor cut.
CUT_PREFIX_SHOWN = 160
# The map is drawn in blocks of about this many characters, each ending after a newline, so the
# browser can skip laying out the blocks scrolled out of view (CSS content-visibility).
BLOCK_CHARS = 2_000
# Chunk boundaries drawn at most, and only for chunks of this many characters on average
# (bars between single characters say nothing); otherwise only those near the last feed.
BOUNDARIES_DRAWN = 2_000
BOUNDARIES_MEAN_CHARS = 3
BOUNDARIES_NEAR_END = 20
# Tokens the Tokens view draws one by one at most (after the window's start); past them the
# map draws stretches as usual.
TOKENS_DRAWN = 5_000
# Why a spelled-out control token is no delimiter (the map's note and hover).
SPELLED_NOTE = (
    "spelled out with ordinary tokens: only the control token's id opens or closes a region, "
    "so this is text"
)
MATCHED_BY_TITLES = {
    "control token": "matched by a control token (generated as its id)",
    "text": "matched in text (ordinary tokens)",
}


def field_slots(field_names: Sequence[str]) -> dict[str, int]:
    """Colour slot (0..7, the `rt-fN` class) of each field: fixed for the common message keys,
    the other slots in template order."""
    free = [slot for slot in range(PALETTE_SIZE) if slot not in FIXED_SLOTS.values()]
    others = [name for name in field_names if name not in FIXED_SLOTS]
    slots = {name: free[i % len(free)] for i, name in enumerate(others)}
    return {name: FIXED_SLOTS.get(name, slots.get(name, 0)) for name in field_names}


def span_title(span: TraceSpan) -> str:
    """The short hover label of a span ("tool_calls · open"); clicking it explains it in full."""
    return f"{span.field or '(no field)'} · {span.kind}"


_KIND_CLASSES = {
    "discarded": "rt-discarded",
    "held": "rt-held",
    "unparsed": "rt-unparsed",
    "body": "rt-body",
    "open": "rt-delim rt-open",
    "close": "rt-delim rt-close",
}
_KIND_TITLES = {
    "held": "held back: may be the start of a delimiter",
    "unparsed": "not parsed: the parse stopped at an error",
    "discarded": "discarded: outside every region and the template has no implicit field",
}


@dataclass(frozen=True)
class MapOptions:
    """How to draw the map.

    Attributes:
        show_whitespace: draw spaces, tabs and newlines as ·, → and ↵.
        stale: the template is no longer valid; the map is the last good parse (the
            message says why).
        window_start: draw the stream from this offset only (a replay in progress on a
            huge input draws its end; the whole map comes back when it stops).
        show_boundaries: mark where fed chunks (tokens) end, by underlining every other one
            (drawn while streaming; after the run only on request).
        show_tokens: the Tokens view, for a parse of token ids (see the module docstring).
    """

    show_whitespace: bool = False
    stale: str | None = None
    window_start: int = 0
    show_boundaries: bool = True
    show_tokens: bool = False


def _error_marker_classes(error) -> str:
    """The marker's classes for an error: a lenient reading (no region failed, text out of
    place read as the template means it) in the warning colour, a failed region in the error's."""
    return "rt-marker rt-err rt-lenient" if error.lenient else "rt-marker rt-err"


def _boundaries(view: ParseView, window_start: int) -> list[int]:
    ends = [e for e in view.chunk_ends[:-1] if e > window_start]
    fed = view.chunk_ends[-1] - view.tail_length if view.chunk_ends else 0
    if len(ends) > BOUNDARIES_DRAWN or fed < BOUNDARIES_MEAN_CHARS * len(view.chunk_ends):
        ends = ends[-BOUNDARIES_NEAR_END:]
    return ends


def block_ends(stream: str, start: int) -> list[int]:
    """Offsets after which a block of the map ends: the first newline after every BLOCK_CHARS
    characters (or the BLOCK_CHARS * 4th character of a text without newlines)."""
    ends, at = [], start
    while at + BLOCK_CHARS < len(stream):
        newline = stream.find("\n", at + BLOCK_CHARS, at + 4 * BLOCK_CHARS)
        at = newline + 1 if newline != -1 else at + 4 * BLOCK_CHARS
        ends.append(at)
    return ends


def region_map(view: ParseView, options: MapOptions = MapOptions()) -> str:
    """The region map of `view`: legend, then every character of the stream.

    Delimiters are strong-coloured with the field's colour, bodies tinted, the prefix
    tail underlined, held text striped, discarded text struck through; each failed
    region is underlined with its error marked at the exact failing character; during
    a replay, chunk boundaries are thin bars and the last feed is outlined.
    """
    tokens_view = options.show_tokens and view.tokens is not None
    out = [legend(view.field_names, tokens=tokens_view)]
    if options.stale:
        out.append(
            '<div class="rt-stale-banner" id="stale-marker" role="status">'
            "STALE: the last good parse, shown until the inputs parse again. The error: "
            f"{escape(options.stale, quote=True)}</div>"
        )
    out.append(
        f'<div class="rt-map{" rt-stale" if options.stale else ""}" id="region-map-body" tabindex="0" '
        'aria-label="Region map: arrow keys move between stretches, Enter explains one"><div class="rt-block">'
    )
    writer = _MapWriter(view, options, out)
    writer.head()
    writer.body()
    out.append("</div></div>")
    return "".join(out)


class _MapWriter:
    """Writes the map's stream into `out`: each span cut where a marker, a chunk boundary, the
    fresh feed, the prefix/generation boundary or a block end falls, with its markers."""

    def __init__(self, view: ParseView, options: MapOptions, out: list[str]):
        self.view, self.out = view, out
        self.text_of = visible_whitespace if options.show_whitespace else (lambda t: escape(t))
        stream, tail_length = view.stream, view.tail_length
        self.start_at = start_at = max(0, min(options.window_start, len(stream)))
        self.errors_at: dict[int, list[int]] = {}
        for index, error in enumerate(view.errors):
            if error.at is not None:
                self.errors_at.setdefault(min(max(error.at, 0), len(stream)), []).append(index)
        # near misses and swallowed delimiters (engine.authoring.diagnosis), marked where they are
        self.misses_at: dict[int, list[int]] = {}
        for number, diagnosis in enumerate(diagnoses_of(view)):
            if (
                diagnosis.stream_start is not None
                and diagnosis.code != "anchor-not-in-prefix"
                and diagnosis.stream_start >= start_at
            ):
                at = min(diagnosis.stream_start, len(stream))
                self.misses_at.setdefault(at, []).append(number)
        self.boundaries = _boundaries(view, start_at) if options.show_boundaries else []
        # The Tokens view: token starts as the boundaries, spelled-out stretches and their notes.
        self.tokens = view.tokens if options.show_tokens else None
        self.spelled: list[tuple[int, int]] = []
        self.spelled_notes: dict[int, int] = {}
        if self.tokens is not None:
            # the generation's tokens (the prefix tail is the chat template's: hover names them)
            self.boundaries = token_starts(view, max(start_at, tail_length))
            self.spelled = [
                (start, end)
                for start, end in self.tokens.spelled_out()
                if end > start_at and start < len(stream)
            ]
            self.spelled_notes = {min(end, len(stream)): start for start, end in self.spelled}
        self.current = view.current_feed if not view.finished else None
        cuts = {tail_length, *self.errors_at, *self.misses_at, *self.boundaries}
        cuts |= {at for stretch in self.spelled for at in stretch if at < len(stream)}
        cuts |= set(self.current or ())
        cuts |= {p + 1 for p in self.errors_at if p < len(stream)}
        blocks = block_ends(stream, start_at)
        self.block_set = set(blocks)
        self.cuts = sorted(cuts | self.block_set)
        self.generation_marked = tail_length <= start_at and start_at > 0
        self.errors_marked: set[int] = set()

    def head(self) -> None:
        """What comes before the stream: the window's note, or the cut-away prefix and the anchor."""
        view, out = self.view, self.out
        if self.start_at:
            out.append(
                f'<span class="rt-note">… {self.start_at:,} earlier characters (the whole map shows when the replay stops) …\n</span>'
            )
        elif view.cut_away:
            shown = view.cut_away[-CUT_PREFIX_SHOWN:]
            hidden = len(view.cut_away) - len(shown)
            lead = (
                f'<span class="rt-note">… {hidden:,} earlier characters …</span>\n'
                if hidden
                else ""
            )
            out.append(
                f'<span class="rt-cutaway" data-i="cut" title="prefix before the start-anchor cut: never parsed">{lead}{self.text_of(shown)}</span>'
                '<span class="rt-marker" data-i="anchor" title="the prefix is cut after the last start-anchor match">✂ start anchor</span>'
            )
        elif view.tail_length:
            out.append(
                '<span class="rt-marker" data-i="anchor" title="no start-anchor match: the whole prefix is parsed">prefix</span>'
            )

    def body(self) -> None:
        """Every span (and any gap as unknown text), then the markers at the end and the errors
        with no place."""
        view, out = self.view, self.out
        slots = field_slots(view.field_names)
        stream = view.stream
        position = self.start_at
        for index, span in enumerate(view.spans):
            start, end = max(span.stream_start, position), span.stream_end
            if start > position:
                self.emit(position, start, "rt-unknown", "", "")
            if end <= start:
                continue
            classes = _KIND_CLASSES[span.kind]
            if span.field is not None and span.kind in ("body", "open", "close"):
                classes += f" rt-f{slots.get(span.field, 0)}"
            if span.error is not None:
                classes += (
                    " rt-error rt-lenient" if view.errors[span.error].lenient else " rt-error"
                )
            title = _KIND_TITLES.get(span.kind) or span_title(span)
            delimiter = self.tokens is not None and span.kind in ("open", "close")
            self.emit(start, end, classes, f' data-i="{index}"', title, delimiter)
            position = end
        if position < len(stream):
            self.emit(position, len(stream), "rt-unknown", "", "")
        self.markers(len(stream))
        for index, error in enumerate(view.errors):
            if index not in self.errors_marked:  # an error with no place (a required field missing)
                out.append(
                    f'<span class="{_error_marker_classes(error)}" data-e="{index}" title="{escape(error.message, quote=True)}">⚠ {escape(error.message, quote=True)}</span>'
                )

    def markers(self, at: int) -> None:
        """The markers at stream offset `at`: where the generation starts, near misses, errors."""
        view, out = self.view, self.out
        if not self.generation_marked and at >= view.tail_length:
            out.append('<span class="rt-marker rt-gen">▶ generation</span>')
            self.generation_marked = True
        if at in self.spelled_notes:
            start = self.spelled_notes.pop(at)
            spelled = escape(view.stream[start:at], quote=True)
            out.append(
                f'<span class="rt-marker rt-spelled-note" title="{escape(SPELLED_NOTE, quote=True)}">'
                f"✎ {spelled} spelled out: text, not a delimiter</span>"
            )
        for number in self.misses_at.pop(at, ()):
            diagnosis = view.diagnoses[number]
            label = (
                "≈ near miss"
                if diagnosis.code in ("near-miss", "pattern-context")
                else "⚑ swallowed"
            )
            out.append(
                f'<span class="rt-marker rt-miss" data-d="{number}" title="{escape(diagnosis.message, quote=True)}">{label}</span>'
            )
        for index in self.errors_at.get(at, ()):
            if index not in self.errors_marked:
                self.errors_marked.add(index)
                error = view.errors[index]
                words = "slip read leniently here" if error.lenient else "error here"
                out.append(
                    f'<span class="{_error_marker_classes(error)}" data-e="{index}" title="{escape(error.message, quote=True)}">⚠ {words}</span>'
                )

    def emit(
        self, start: int, end: int, classes: str, data: str, title: str, delimiter: bool = False
    ) -> None:
        """`stream[start:end]` as spans of `classes`, cut at every cut inside it. With
        `delimiter` (a delimiter read from token ids), each piece says whether its own
        characters came from a control token's id or from ordinary tokens: a close that
        takes the newline before `</tool_call>` has both."""
        cuts_sorted, out, stream = self.cuts, self.out, self.view.stream
        tail_length, boundaries, current = self.view.tail_length, self.boundaries, self.current
        inside = cuts_sorted[
            bisect.bisect_right(cuts_sorted, start) : bisect.bisect_left(cuts_sorted, end)
        ]
        cuts = [start, *inside, end]
        for a, b in zip(cuts, cuts[1:]):
            self.markers(a)
            extra = ""
            if b <= tail_length:
                extra += " rt-tail"
            if boundaries and bisect.bisect_right(boundaries, a) % 2:
                extra += " rt-tok-odd"  # every other chunk underlined: chunks show as stripes, never as characters
            if current and current[0] <= a < current[1]:
                extra += " rt-now"
            if a in self.errors_at and b == a + 1:
                lenient = all(self.view.errors[i].lenient for i in self.errors_at[a])
                extra += " rt-error-at rt-lenient-at" if lenient else " rt-error-at"
            piece_title = title
            if delimiter:
                matched_by = "control token" if self.tokens.held_by_control(a, b) else "text"
                extra += " rt-by-control" if matched_by == "control token" else " rt-by-text"
                piece_title += f" · {MATCHED_BY_TITLES[matched_by]}"
            if self.tokens is not None:
                spelled = next((s for s in self.spelled if s[0] <= a < s[1]), None)
                if spelled is not None:
                    extra += " rt-spelled"
                    piece_title += f" · {SPELLED_NOTE}"
                piece_title += token_title(self.tokens, a)
            hover = f' title="{escape(piece_title, quote=True)}"' if piece_title else ""
            out.append(
                f'<span class="{classes}{extra}"{data}{hover}>{self.text_of(stream[a:b])}</span>'
            )
            if b in self.block_set:
                out.append('</div><div class="rt-block">')


def token_starts(view: ParseView, after: int) -> list[int]:
    """Stream offsets where the tokens starting after offset `after` start (the first
    TOKENS_DRAWN of them; an empty token, the first byte of a character a later token
    completes, adds none)."""
    starts: list[int] = []
    end = len(view.stream)
    for token in view.tokens.boundaries():
        if token["start"] >= end:
            break
        if token["start"] > after and token["end"] > token["start"]:
            starts.append(token["start"])
            if len(starts) >= TOKENS_DRAWN:
                break
    return starts


def token_title(tokens, at: int) -> str:
    """The hover words of the token holding stream offset `at`: " · token N: id I, 'text'"
    ("control token" for a control token), or "" past the tokens read."""
    index = tokens.token_at(at)
    if index is None:
        return ""
    kind = "control token" if tokens.control[index] else "token"
    return f" · {kind} {index}: id {tokens.ids[index]}, {tokens.pieces[index]!r}"


def legend(field_names: Sequence[str], tokens: bool = False) -> str:
    """The colour key: one swatch per field, then the delimiter and special styles (with
    `tokens`, those of the Tokens view too)."""
    slots = field_slots(field_names)
    items = [
        f'<span class="rt-swatch rt-body rt-f{slot}">{escape(name, quote=True)}</span>'
        for name, slot in slots.items()
    ]
    first = slots[field_names[0]] if field_names else 0
    items += [
        f'<span class="rt-swatch rt-delim rt-open rt-f{first}">open</span>'
        f'<span class="rt-swatch rt-delim rt-close rt-f{first}">close</span> delimiters',
        '<span class="rt-swatch rt-tail">underlined</span> prefix tail',
        '<span class="rt-swatch rt-held">striped</span> held back',
        '<span class="rt-swatch rt-discarded">discarded</span>',
        '<span class="rt-swatch rt-unparsed">unparsed</span>',
        '<span class="rt-swatch rt-error">error</span>',
        '<span class="rt-swatch rt-error rt-lenient">slip read leniently</span>',
    ]
    if tokens:
        items += [
            '<span class="rt-swatch rt-tok-odd">tokens</span> every other token underlined',
            f'<span class="rt-swatch rt-delim rt-f{first} rt-by-control">delimiter</span> '
            "matched by a control token",
            f'<span class="rt-swatch rt-delim rt-f{first} rt-by-text">delimiter</span> '
            "matched in text",
            f'<span class="rt-swatch rt-spelled">spelled out</span> {escape(SPELLED_NOTE, quote=True)}',
        ]
    return (
        '<div class="rt-legend" id="region-legend">'
        + "".join(f"<span>{item}</span>" for item in items)
        + "</div>"
    )
