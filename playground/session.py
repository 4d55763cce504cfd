"""Per-session state: everything the page remembers about one visitor, in one object.

`app.py` keeps one `Session` per browser session in a `gr.State`; handlers
receive it as `session` and update it in place (Gradio hands every listener of
a session the same object, so Stop, running with no queue, reaches a running
replay or generation through it). Whatever a session holds is reachable from
here, so bounding or freeing it is done in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .parse_view import ParseView
from .replay import Replay


@dataclass
class Display:
    """How the parse panels are drawn, as the visitor set them.

    Attributes:
        hide_chunks: leave `region_chunk` events out of the event log.
        show_whitespace: draw spaces, tabs and newlines in the region map.
        log_search, log_field, log_page: the event log's search text, field filter and page.
        selected_event: the event-log row highlighted (from #explain), or None.
        selection: what #explain explains (a span index, "anchor", "cut", "e0"...), or None.
        results_tab: the results tab shown (the OpenAI stream is only computed while it is).
    """

    hide_chunks: bool = False
    show_whitespace: bool = False
    log_search: str = ""
    log_field: str = ""
    log_page: int = 1
    selected_event: int | None = None
    selection: str | None = None
    results_tab: str = "message"


@dataclass
class Session:
    """One visitor's state.

    Attributes:
        view: the parse on screen, or None.
        last_good: the last parse of a valid template and input (shown, marked stale,
            while the input is invalid).
        replay: the replay transport (chunks, position, the parse so far), or None.
        display: the panel options.
        reset_text: the template text Reset puts back.
        template_origin: the template dropdown's last choice other than "edited".
        sample_id: the sample loaded last ("" when none).
        test_cases_text: the per-template test cases (JSON text).
        tab: the input tab shown ("samples", "paste", "live", "template").
        best_template: the templates/ file "Which template fits?" ranked first ("" before it ran).
        stop_requested: Stop was pressed; the running replay or generation ends at its next chunk.
        check_rows: the rows of the last chat-template check (``ConformanceReport.to_dict()``'s
            situations), which a click loads into Paste & parse.
        check_template: the template text that check ran with.
    """

    view: ParseView | None = None
    last_good: ParseView | None = None
    replay: Replay | None = None
    display: Display = field(default_factory=Display)
    reset_text: str = ""
    template_origin: str = ""
    sample_id: str = ""
    test_cases_text: str = ""
    tab: str = "samples"
    best_template: str = ""
    stop_requested: bool = False
    check_rows: list[dict] = field(default_factory=list)
    check_template: str = ""

