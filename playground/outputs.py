"""Named outputs: what a handler returns, by the names of the page's panels.

A handler returns a dict whose keys are output names ("status", "region_map",
...), a subset of the names it declares with `@produces`. `app.py` binds each
name to the component of that name (`playground.wiring.Page`), so a new panel
is one name here, one component in the layout and one key in `render`; no
positional indexes to keep in step.

`render` fills the parse panels (`PARSE_VIEWS`) from a `ParseView`.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging

from .event_log import event_log
from .message_view import chat_messages, message_json, openai_stream
from .parse_view import MapSpan, ParseView
from .region_map import region_map
from .status import error_html, figures, status_html

log = logging.getLogger("playground")

# The panels every parse fills, in page order.
PARSE_VIEWS = (
    "status", "region_map", "event_log", "initial_events", "message_json", "chat", "openai_stream", "figures",
)


def render(view: ParseView, hide_chunks: bool = False, note: str = "") -> dict:
    """The parse panels (`PARSE_VIEWS`) of `view`."""
    return {
        "status": status_html(view, note),
        "region_map": region_map(
            cut_away=view.cut_away,
            stream=view.stream,
            tail_length=view.tail_length,
            spans=view.spans,
            events=view.events,
            field_names=view.field_names,
            error_offset=view.error_offset,
            error_text=view.error,
        ),
        "event_log": event_log(view.events, hide_chunks=hide_chunks),
        "initial_events": json.dumps(view.initial_events, ensure_ascii=False, indent=2),
        "message_json": message_json(view.message),
        "chat": chat_messages(view.message),
        "openai_stream": openai_stream(view) if view.finished else "",
        "figures": figures(view.figures),
    }


def failed(message: str, generation: str = "") -> dict:
    """The parse panels for input that never reached the parser: the message, the
    generation shown unparsed in the region map, the rest cleared."""
    spans = [MapSpan(0, len(generation), "unparsed")] if generation else []
    outputs = render(ParseView(stream=generation, spans=spans, finished=True))
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
            text = f"Something went wrong ({type(error).__name__}: {error}). The page still works; try again or change the input."
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
