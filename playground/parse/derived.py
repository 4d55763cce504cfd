"""Views derived from the input on demand, and marked stale when the input changes.

The comparison with transformers, the "Which template fits?" ranking and the
chat-template check are made when their button is pressed (each costs seconds,
too much to redo on every keystroke). Each is kept with the inputs it was made
from (`remember_derived`); a handler that changes the input asks
`stale_derived` for the views that no longer match it, and shows them under a
STALE banner that says which button makes them again.
"""

from __future__ import annotations

import hashlib

from .session import Session
from .workspace import WorkspaceInputs

DERIVED_VIEWS = ("reference", "fits", "conformance")

_STALE_WHAT = {
    "reference": "the input changed since this comparison: press Compare again",
    "fits": "the prefix, generation or tools changed since this ranking: press “Which template fits?” again",
    "conformance": "the template changed since this check: press Check again",
}


def _inputs(name: str, template_text, prefix, generation, tools_text) -> tuple:
    """What a derived view depends on, as a digest of those inputs (a view is kept with the
    digest, not the texts: they would be a second copy of a megabyte paste in the session)."""
    if name == "reference":
        texts = (template_text or "", prefix or "", generation or "", tools_text or "")
    elif name == "fits":
        texts = (prefix or "", generation or "", tools_text or "")
    else:
        texts = (template_text or "",)
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


def stale_derived(session: Session, workspace: WorkspaceInputs) -> dict:
    """{name: HTML} of the derived views whose inputs differ from `workspace`, under a STALE
    banner (each view once, until it is made again)."""
    marked = {}
    for name, (inputs, shown, stale) in list(session.derived.items()):
        if stale or inputs == _inputs(name, *workspace):
            continue
        banner = f'<div class="rt-stale-banner rt-derived-stale" id="{name}-stale" role="status">STALE: {_STALE_WHAT[name]}.</div>'
        session.derived[name] = (inputs, shown, True)
        marked[name] = banner + shown
    return marked
