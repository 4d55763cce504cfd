"""The region map's handlers: the display options, and a stretch of the map explained."""

from __future__ import annotations

from ..catalog import (
    DEFAULT_SAMPLE,
)
from ..outputs import (
    PARSE_VIEWS,
    produces,
    render,
)
from ..panels.explain import explain
from ..parse.session import Session
from .event_data import known_selection
from .front_door import sample_outputs


@produces(*PARSE_VIEWS)
def set_display(
    hide_chunks: bool,
    show_whitespace: bool,
    log_search: str,
    log_field: str,
    log_page: float,
    session: Session,
    show_tokens: bool = False,
    group_by_token: bool = False,
) -> dict:
    """A display option changed (event-log filter or page, whitespace, the Tokens view, the
    log's grouping by token): re-draw the parse on screen."""
    display = session.display
    display.show_tokens = bool(show_tokens)
    display.group_by_token = bool(group_by_token)
    changed = (display.log_search, display.log_field, display.hide_chunks) != (
        log_search or "",
        log_field or "",
        bool(hide_chunks),
    )
    display.hide_chunks, display.show_whitespace = bool(hide_chunks), bool(show_whitespace)
    display.log_search, display.log_field = log_search or "", log_field or ""
    display.log_page = 1 if changed else int(log_page or 1)
    display.selected_event = None
    if session.view is None:
        return {}
    return render(session.view, session)


@produces("explain")
def explain_span(event: dict, session: Session) -> dict:
    """A stretch of the region map was clicked (or chosen from the keyboard): explain it.

    A click that comes before the page-load handler gave the session its parse (a busy
    server: the page shows the first sample until then) parses that sample first, as the
    page-load handler would, so the click is never answered with nothing.
    """
    selection = known_selection(event.get("selected"))
    if selection is None:
        return {}
    session.display.selection = selection
    if session.view is None and not session.sample_id:
        selection = session.display.selection
        sample_outputs(DEFAULT_SAMPLE, session)
        session.display.selection = selection
    return {"explain": explain(session.view, session.display.selection, session.inference)}
