"""Per-session state: everything the page remembers about one visitor, in one object.

`app.py` keeps one `Session` per browser session in a `gr.State`; handlers
receive it as `session` and update it in place (Gradio hands every listener of
a session the same object, so Stop, running with no queue, reaches a running
replay or generation through it).
"""

from __future__ import annotations

from dataclasses import dataclass

from .parse_view import ParseView
from .replay import Replay


@dataclass
class Session:
    """One visitor's state.

    Attributes:
        view: the parse on screen (redrawn when a view option changes), or None.
        replay: the replay transport (chunks and position), or None before the first Step.
        reset_text: the template text Reset puts back.
        template_origin: the template dropdown's last choice other than "edited".
        stop_requested: Stop was pressed; the running replay or generation ends at its next chunk.
    """

    view: ParseView | None = None
    replay: Replay | None = None
    reset_text: str = ""
    template_origin: str = ""
    stop_requested: bool = False


def new_session() -> Session:
    """A fresh `Session` (Gradio calls this once per browser session: `gr.State(new_session)`)."""
    return Session()
