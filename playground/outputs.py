"""Named outputs: what a handler returns, by the names of the page's panels.

A handler returns a dict whose keys are output names ("status", "region_map",
...), a subset of the names it declares with `@produces`. The wiring binds each
name to the component of that name (`playground.wiring.Page`), so a new panel
is one name here, one component in its layout module (`playground/layout/`) and
one key in `render`; no positional indexes to keep in step. A value may be an `Update` to change a
component's properties (a slider's maximum, a dropdown's choices, the tab shown).

`render` fills the parse panels (`PARSE_VIEWS`) from a `ParseView`.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
from typing import Any

from engine.authoring.trace import TraceSpan

from .authoring.inference import inference_losses
from .authoring.share import MODEL_PARAMETERS
from .panels.event_log import LogQuery, event_log, log_fields
from .panels.explain import explain
from .panels.match_list import match_list_html
from .panels.message_view import chat_messages, message_json, message_language, openai_stream
from .panels.notes import stale_banner
from .panels.region_map import MapOptions, region_map
from .panels.status import error_html, figures, status_html
from .panels.value_changes import value_changes_html
from .parse.derived import DERIVED_VIEWS, stale_derived
from .parse.parse_view import ParseView
from .parse.session import Session

log = logging.getLogger("playground")

# The panels every parse fills, in page order.
PARSE_VIEWS = (
    "status",
    "region_map",
    "explain",
    "event_log",
    "log_page",
    "log_field",
    "initial_events",
    "message_json",
    "value_changes",
    "chat",
    "openai_stream",
    "matches",
    "figures",
)


class Update(dict):
    """New properties for a component (``Update(value=3, maximum=10)``), as a plain dict."""

    def __init__(self, **properties: Any):
        super().__init__(properties)


class Labelled(str):
    """A text value that also sets its component's label (the message panel says whether it
    shows the finished message or the regions closed so far) and its code editor's `language`
    (None: plain text). It is the text itself for tests."""

    def __new__(cls, text: str, label: str, language: str | None = "json"):
        made = super().__new__(cls, text)
        made.label = label
        made.language = language
        return made


MESSAGE_LABEL = "Message"
STREAMING_MESSAGE_LABEL = "Message so far (streaming: the regions closed so far)"


def _message_panel(view: ParseView) -> Labelled:
    """The message JSON panel: the finished message, or while streaming the regions closed so far."""
    text = message_json(view.message if view.finished else view.partial_message)
    return Labelled(
        text, MESSAGE_LABEL if view.finished else STREAMING_MESSAGE_LABEL, message_language(text)
    )


def render(
    view: ParseView,
    session,
    *,
    note: str = "",
    stale: str = "",
    progress: str = "",
    window_start: int = 0,
) -> dict:
    """The parse panels (`PARSE_VIEWS`) of `view`, drawn with the session's display options.

    `stale` (the input error) marks the map as the last good parse; `progress` is the
    replay or live position; `window_start` draws only the map's end (see `MapOptions`).
    """
    display = session.display
    boundaries = not view.finished or display.show_tokens
    query = LogQuery(
        display.log_page,
        display.log_search,
        display.log_field,
        display.hide_chunks,
        display.selected_event,
        display.group_by_token,
    )
    log_html, page, pages = event_log(
        view.events, query, view.current_phases if not view.finished else (), view.tokens
    )
    display.log_page = page
    fields = view.field_names or log_fields(view.events)
    return {
        "status": status_html(
            view,
            note,
            stale=stale,
            progress=progress,
            losses=inference_losses(view, session.inference) if view.finished else (),
        ),
        "region_map": region_map(
            view,
            MapOptions(
                display.show_whitespace,
                stale or None,
                window_start,
                boundaries,
                show_tokens=display.show_tokens,
            ),
        ),
        "explain": explain(view, display.selection, session.inference),
        "event_log": log_html,
        "log_page": Update(value=page, maximum=pages),
        "log_field": Update(
            choices=[("all fields", ""), *[(name, name) for name in fields]],
            value=display.log_field if display.log_field in fields else "",
        ),
        "initial_events": json.dumps(view.initial_events, ensure_ascii=False, indent=2),
        # While streaming without a partial message (a fast replay of a huge input), the message panels are left as they are.
        **(
            {}
            if not view.finished and view.partial_message is None
            else {
                "message_json": _message_panel(view),
                "chat": chat_messages(view.message if view.finished else view.partial_message),
            }
        ),
        "value_changes": value_changes_html(view) if view.finished else "",
        "figures": figures(view.figures),
        # The OpenAI view costs as much as the parse on a big input: drawn while its tab is shown.
        **(
            {"openai_stream": openai_stream(view) if view.finished else ""}
            if display.results_tab == "openai"
            else {}
        ),
        **({"matches": match_list_html(view)} if display.results_tab == "matches" else {}),
    }


def failed(message: str, session, generation: str = "") -> dict:
    """The parse panels for input that never reached the parser: the message, the
    generation shown unparsed in the region map, the rest cleared."""
    length = len(generation)
    spans = [TraceSpan(0, length, "generation", 0, length, "unparsed")] if generation else []
    outputs = render(ParseView(stream=generation, spans=spans, finished=True), session)
    outputs["status"] = error_html(message)
    return outputs


def produces(*names: str, status: str = "status"):
    """Declare the output names of a handler (a function or a generator of dicts).

    The decorated handler keeps its signature and returns (or yields) dicts with
    keys among `names`; an unknown key is a programming error (ValueError). An
    unexpected exception becomes a message in the `status` output instead of a
    traceback on the page (the traceback goes to the server log), and every other
    output is left as it was.
    """
    declared = frozenset(names)

    def checked(result: dict) -> dict:
        unknown = set(result) - declared
        if unknown:
            raise ValueError(f"outputs {sorted(unknown)} are not declared by @produces{names}")
        return result

    def decorate(handler):
        def report(error: BaseException) -> dict:
            log.exception("handler %s failed", handler.__name__)
            text = "Something went wrong on the server (its log has the details). The page still works; try again or change the input."
            return {status: error_html(text)}

        if inspect.isgeneratorfunction(handler):

            @functools.wraps(handler)
            def run_generator(*args, **kwargs):
                results = handler(*args, **kwargs)
                while True:
                    try:
                        result = next(results)
                    except StopIteration:
                        return
                    except Exception as error:  # noqa: BLE001 - shown to the user instead of a traceback
                        yield report(error)
                        return
                    yield checked(result)

            wrapped = run_generator
        else:

            @functools.wraps(handler)
            def run(*args, **kwargs):
                try:
                    result = handler(*args, **kwargs)
                except Exception as error:  # noqa: BLE001
                    return report(error)
                return checked(result)

            wrapped = run
        wrapped.outputs = names
        return wrapped

    return decorate


# The output-name groups handlers declare with `@produces` (besides PARSE_VIEWS).

# The inputs a sample fills.
SAMPLE_INPUTS = (
    "sample_id",
    "template_text",
    "prefix",
    "generation",
    "tools_text",
    "template_choice",
)

CHUNKING_INPUTS = ("chunking", "chunk_size", "chunk_seed", "split_points")

# What a replay's step draws.
REPLAY_OUTPUTS = (*PARSE_VIEWS, "stream_check", "scrubber")

# What a parse with a new editor text draws.
TEMPLATE_OUTPUTS = ("template_choice", "test_results", "scrubber", *DERIVED_VIEWS, *PARSE_VIEWS)

# The buttons under the editor every replacement of its text updates.
RESTORE_BUTTONS = ("restore_button", "restore_back_button")

BACK_LABEL = "↷ Back to the text Restore replaced"


def restore_buttons(session: Session) -> dict:
    """The Restore button (names what replaced the editor's text last; hidden when nothing did)
    and the button that undoes a Restore (shown after one): {output name: Update}."""
    if session.replaced:
        why, _ = session.replaced[-1]
        restore = Update(value=f"↶ Restore the template before {why}", visible=True)
    else:
        restore = Update(visible=False)
    back = Update(value=BACK_LABEL, visible=True) if session.restored else Update(visible=False)
    return {"restore_button": restore, "restore_back_button": back}


SAMPLE_OUTPUTS = (
    *SAMPLE_INPUTS,
    *RESTORE_BUTTONS,
    "test_cases_text",
    "test_results",
    "stream_check",
    "scrubber",
    "start_from",
    *DERIVED_VIEWS,
    *PARSE_VIEWS,
)

USE_TEMPLATE_OUTPUTS = (
    *RESTORE_BUTTONS,
    "template_text",
    "template_choice",
    "test_cases_text",
    "test_results",
    "start_from",
    *DERIVED_VIEWS,
    *PARSE_VIEWS,
)

INFER_OUTPUTS = (
    "inference",
    "conformance",
    "template_text",
    "diagnostics",
    *RESTORE_BUTTONS,
    "prefix",
    "generation",
    "tools_text",
    "test_cases_text",
    "start_from",
    *TEMPLATE_OUTPUTS,
)

OPEN_OUTPUTS = (*SAMPLE_OUTPUTS, *CHUNKING_INPUTS, *MODEL_PARAMETERS, "modes")


def editor_replaced(session: Session, old: str, new: str, why: str) -> dict:
    """The editor's text `old` is being replaced by `new` (by `why`): kept on the session's
    Restore stack (`Session.replacing`); both buttons under the editor ({output name: Update})."""
    session.replacing(old, new, why)
    return restore_buttons(session)


def derived_views(session: Session, workspace) -> dict[str, str]:
    """{name: HTML} of the derived views (the check, the reference, the fit ranking) that
    `workspace` (a `WorkspaceInputs`) makes stale, under a STALE banner, and of those back to
    the inputs they were made from, without it (`playground.parse.derived.stale_derived`)."""
    return {
        name: (stale_banner(name, why) if why else "") + shown
        for name, (shown, why) in stale_derived(session, workspace).items()
    }
