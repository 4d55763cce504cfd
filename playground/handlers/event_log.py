"""The event log's handlers: an event (or an editor key) clicked, explained and shown in the log."""

from __future__ import annotations

from ..authoring.editor_paths import string_at
from ..outputs import (
    Update,
    produces,
    render,
)
from ..panels.explain import explain, explain_editor_key, span_of_event
from ..parse.session import Session
from .event_data import event_number, known_selection
from .workspace import (
    editor_template,
)


@produces("explain", "event_log", "log_page", "results_tabs")
def show_event(event: dict, template_text: str, session: Session) -> dict:
    """An event link in #explain, or a row of the event log, was clicked: page the log to that
    event, highlight it, and explain the stretch it came from. A click in the template editor
    (`editor_at`: the character index of the cursor) on a pattern explains that pattern, and on
    a delimiter the last inference found shows the renders that found it."""
    view = session.view
    if "editor_at" in event:
        found = string_at(template_text or "", event_number(event, "editor_at"))
        panel = (
            explain_editor_key(view, *found, session.inference, editor_template(template_text))
            if found
            else None
        )
        return {"explain": panel} if panel else {}
    if view is None:
        return {}
    if "selected" in event:
        selection = known_selection(event["selected"])
        if selection is None:
            return {}
        session.display.selection = selection
        return {"explain": explain(view, selection, session.inference)}
    number = event_number(event, "event", 0)
    session.display.selected_event = number
    session.display.log_search = session.display.log_field = ""
    index = span_of_event(view, number)
    if index is not None:
        session.display.selection = str(index)
    drawn = render(view, session)
    session.display.results_tab = "log"
    return {
        "explain": drawn["explain"],
        "event_log": drawn["event_log"],
        "log_page": drawn["log_page"],
        "results_tabs": Update(selected="log"),
    }
