"""The results tabs' handlers: a tab chosen, the OpenAI stream or match list drawn only while shown."""

from __future__ import annotations

from ..authoring.share import (
    TABS,
)
from ..outputs import (
    produces,
)
from ..panels.match_list import match_list_html
from ..panels.message_view import openai_stream
from ..parse.session import Session

# The results tabs by id (what `select_results_tab` may remember).
RESULTS_TABS = (
    "message",
    "log",
    "matches",
    "initial",
    "openai",
    "checks",
    "tests",
    "reference",
)


@produces()
def select_tab(event: dict, session: Session) -> dict:
    """An input tab was chosen: remember it (share links and state files reopen it)."""
    if event.get("id") in TABS:
        session.tab = event["id"]
    return {}


@produces("openai_stream", "matches")
def select_results_tab(event: dict, session: Session) -> dict:
    """A results tab was chosen: remember it, and draw the OpenAI stream or the match list when
    it is that one (each costs as much as the parse on a big input, so only while shown)."""
    chosen = event.get("id")
    session.display.results_tab = chosen if chosen in RESULTS_TABS else "message"
    view = session.view
    if view is None:
        return {}
    if session.display.results_tab == "openai":
        return {"openai_stream": openai_stream(view) if view.finished else ""}
    if session.display.results_tab == "matches":
        return {"matches": match_list_html(view)}
    return {}
