"""The text no field of a template explains, highlighted in each row or output that holds it
(the inference panel's unread outputs, a call sketch that does not hold)."""

from __future__ import annotations

from dataclasses import dataclass

from .fragments import draw

# Rows or outputs shown at most, and characters kept on each side of a highlighted stretch.
UNEXPLAINED_SHOWN = 4
AROUND_CHARS = 120


@dataclass(frozen=True)
class Piece:
    """A stretch of an output as shown: `why` is None for text around, else why it is marked."""

    text: str
    why: str | None = None


def excerpt(text: str, spans: list[dict]) -> list[Piece]:
    """`text` cut into pieces: each span (``{"start", "end", "why"}``, offsets into `text`)
    marked, the text far from every span cut (…)."""
    spans = sorted(spans, key=lambda span: (span["start"], span["end"]))
    pieces, at = [], 0
    for span in spans:
        start, end = max(span["start"], at), span["end"]
        if end <= start:
            continue
        before = text[at:start]
        if len(before) > 2 * AROUND_CHARS:
            before = (before[:AROUND_CHARS] if at else "") + "…" + before[-AROUND_CHARS:]
        pieces.append(Piece(before))
        pieces.append(Piece(text[start:end], span["why"]))
        at = end
    rest = text[at:]
    pieces.append(Piece(rest if len(rest) <= AROUND_CHARS else rest[:AROUND_CHARS] + "…"))
    return pieces


def unexplained_html(entries: list[dict], head: str, element_id: str) -> str:
    """Each row or output (``{"label", "text", "spans"}``) with the text no field explains
    highlighted, and why, under `head` (a sentence), in a block with id `element_id`; "" when
    there is none."""
    shown = [
        {
            "label": entry["label"],
            "pieces": excerpt(entry["text"], entry["spans"]),
            "whys": list(dict.fromkeys(span["why"] for span in entry["spans"])),
        }
        for entry in entries[:UNEXPLAINED_SHOWN]
    ]
    return draw(
        "unexplained",
        entries=shown,
        head=head,
        element_id=element_id,
        more=max(0, len(entries) - UNEXPLAINED_SHOWN),
    )
