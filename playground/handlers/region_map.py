"""The region map's handlers: the display options and the reading (one listener for all), and a
stretch of the map explained."""

from __future__ import annotations

from ..catalog import (
    DEFAULT_SAMPLE,
)
from ..outputs import (
    PARSE_VIEWS,
    TEMPLATE_OUTPUTS,
    produces,
    render,
)
from ..panels.explain import explain
from ..parse.session import Session
from ..parse.workspace import WorkspaceInputs
from .event_data import known_selection
from .front_door import sample_outputs
from .workspace import set_reading


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
    log's grouping by token): re-draw the parse on screen ({} before the page has a parse)."""
    remember_display(
        session, hide_chunks, show_whitespace, log_search, log_field, log_page, show_tokens
    )
    session.display.group_by_token = bool(group_by_token)
    if session.view is None:
        return {}
    return render(session.view, session)


@produces("diagnostics", *TEMPLATE_OUTPUTS)
def set_view(
    read_as: str,
    spelled_out: str,
    workspace: WorkspaceInputs,
    test_cases_text: str,
    hide_chunks: bool,
    show_whitespace: bool,
    log_search: str,
    log_field: str,
    log_page: float,
    session: Session,
    show_tokens: bool = False,
    group_by_token: bool = False,
) -> dict:
    """Any option of how the parse is read or shown changed: "Read as" or "Spelled out" (the
    workspace parses again when they differ from the reading on screen), or a display option
    (whitespace, the Tokens view, the event log's filters, page and grouping: re-drawn).

    The page has one listener for all of these, answered one change at a time (a change made
    while one is running is sent once it is answered, with every option as it then stands).
    Two handlers, one per option, could land in either order, and the one landing last drew
    only what it had seen: ticking the Tokens view while a reading as token ids ran could leave
    the map read as text, or the Tokens view off.
    """
    remember_display(
        session, hide_chunks, show_whitespace, log_search, log_field, log_page, show_tokens
    )
    session.display.group_by_token = bool(group_by_token)
    if (read_as or "text", spelled_out or "") != (session.read_as, session.spelled_text):
        return set_reading(read_as, spelled_out, workspace, test_cases_text, session)
    if session.view is None:
        return {}
    return render(session.view, session)


def remember_display(
    session: Session,
    hide_chunks: bool,
    show_whitespace: bool,
    log_search: str,
    log_field: str,
    log_page: float,
    show_tokens: bool,
) -> None:
    """Keep the display options in `session.display`; the log goes back to its first page when a
    filter changed (else to `log_page`), and no event stays selected."""
    display = session.display
    display.show_tokens = bool(show_tokens)
    changed = (display.log_search, display.log_field, display.hide_chunks) != (
        log_search or "",
        log_field or "",
        bool(hide_chunks),
    )
    display.hide_chunks, display.show_whitespace = bool(hide_chunks), bool(show_whitespace)
    display.log_search, display.log_field = log_search or "", log_field or ""
    display.log_page = 1 if changed else int(log_page or 1)
    display.selected_event = None


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
