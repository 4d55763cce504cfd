"""Views derived from the input on demand, and marked stale when the input changes.

The comparison with transformers, the "Which template fits?" ranking and the
chat-template check are made when their button is pressed (each costs seconds,
too much to redo on every keystroke). Each is kept with the inputs it was made
from (`remember_derived`); a handler that changes the input asks
`stale_derived` for the views that no longer match it, and `playground.outputs` shows them under a
STALE banner that says which button makes them again.
"""

from __future__ import annotations

import hashlib
import json

from .session import Session
from .workspace import WorkspaceInputs

DERIVED_VIEWS = ("reference", "fits", "conformance")

STALE_WHAT = {
    "reference": "the input changed since this comparison: press Compare again",
    "fits": "the prefix, generation or tools changed since this ranking: press “Which template fits?” again",
    "conformance": "the template changed since this check: press Check again",
}


def _json_or_text(text) -> str:
    """`text` as what it means: JSON in one canonical form when it is JSON (key order kept,
    layout ignored), else the text with line ends unified and trailing blanks cut, so text pasted
    back unchanged, or re-indented, is the same input."""
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n")
    try:
        return json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
    except ValueError:
        return "\n".join(line.rstrip() for line in text.strip().split("\n"))


def _text(text) -> str:
    """`text` with line ends unified (a paste may bring CR LF where the box had LF)."""
    return (text or "").replace("\r\n", "\n").replace("\r", "\n")


def _inputs(name: str, template_text, prefix, generation, tools_text) -> tuple:
    """What a derived view depends on: a digest of those inputs, normalised so that the same
    meaning gives the same digest (text pasted back unchanged or re-indented is the same input).
    A view is kept with the digest, not the texts: they would be a second copy of a megabyte
    paste in the session."""
    if name == "reference":
        texts = (
            _json_or_text(template_text),
            _text(prefix),
            _text(generation),
            _json_or_text(tools_text),
        )
    elif name == "fits":
        texts = (_text(prefix), _text(generation), _json_or_text(tools_text))
    else:
        texts = (_json_or_text(template_text),)
    digest = hashlib.sha256()
    for text in texts:
        encoded = text.encode("utf-8", "surrogatepass")
        digest.update(len(encoded).to_bytes(8, "big") + encoded)
    return (digest.hexdigest(),)


def remember_derived(
    session: Session,
    name: str,
    shown: str,
    template_text="",
    prefix="",
    generation="",
    tools_text="",
) -> str:
    """Keep derived view `name` (one of DERIVED_VIEWS) with the inputs it was made from; return `shown`."""
    session.derived[name] = (
        _inputs(name, template_text, prefix, generation, tools_text),
        shown,
        False,
    )
    return shown


def stale_derived(session: Session, workspace: WorkspaceInputs) -> dict[str, tuple[str, str]]:
    """{name: (HTML, why it is stale)} of the derived views whose inputs differ from `workspace`
    (each view once, until it is made again; `playground.outputs.derived_views` draws the STALE
    banner above it), and of the views marked stale whose inputs are back to what they were
    made from (the same text pasted back), with "" for why."""
    marked = {}
    for name, (inputs, shown, stale) in list(session.derived.items()):
        same = inputs == _inputs(name, *workspace)
        if same and stale:
            session.derived[name] = (inputs, shown, False)
            marked[name] = (shown, "")
            continue
        if stale or same:
            continue
        session.derived[name] = (inputs, shown, True)
        marked[name] = (shown, STALE_WHAT[name])
    return marked
