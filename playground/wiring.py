"""Binding handlers to the layout by name.

`Page` holds the page's components under the names handlers use: a handler's
parameters are the components it reads (by the same name), its `@produces`
names are the components it writes. `Page.listen` checks both at startup, so a
misspelt name fails when the app is built, not when a visitor clicks. A
parameter named `event` receives the event's data as a dict (what a custom
HTML panel sent with `trigger`, or a tab's id).

Inputs that travel together (the template, prefix, generation and tools a parse
reads; those and the chunking settings a replay is cut from) are one parameter:
annotate it with a `NamedTuple` class whose fields are named like the components
(`workspace: WorkspaceInputs`, `inputs: ReplayInputs`, the class
imported under that bare name in the handler's module). `Page.listen` reads one
component per field, Gradio sees one parameter per field in the group's place (so
the page's listeners and their inputs are the same as with the fields spelled
out), and the handler receives the fields packed into the tuple. A field named
like another parameter of the handler is refused at startup.

Every listener bound here is private (`api_visibility="private"`): the public
API is `playground.api`, published with `gr.api` under stable names.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from contextlib import nullcontext

import gradio as gr

from .outputs import Labelled, Update
from .panels.status import error_html
from .parse.session import OpenSessions, heavy_job
from .server import limits
from .server.admission import client_address
from .server.input_readers import InputError, box_problem, check_unicode
from .server.queues import HEAVY_WORK, queue_options
from .server.uploads import remove_uploads

# Parameters Gradio fills itself, by annotation, and the event data's parameter name.
_SPECIAL = {"gr.Request", "Request", "gr.EventData", "EventData"}
EVENT = "event"
# The parameter Gradio fills with the request (its session id) on every bound handler.
REQUEST = "gradio_request"
# Where a refusal at the door is shown: the first of these a handler draws.
REFUSAL_PANELS = (
    "status",
    "diagnostics",
    "test_results",
    "explain",
    "inference",
    "conformance",
    "reference",
    "fits",
    "export_note",
    "share_warning",
    "model_note",
)
# Where `Page.bound` keeps the session id of a call between its start and its end.
_SESSION_ID = "_session_id"


class Page:
    """The page's components by name (set as attributes: `page.status = gr.HTML(...)`)."""

    def __init__(self) -> None:
        object.__setattr__(self, "components", {})

    def __setattr__(self, name: str, component) -> None:
        self.components[name] = component

    def __getattr__(self, name: str):
        try:
            return self.components[name]
        except KeyError:
            raise AttributeError(f"the page has no component {name!r}") from None

    def inputs_of(self, handler: Callable) -> dict:
        """The components a handler reads: one per parameter, by name (special parameters
        excluded), and one per field of a parameter annotated with a group of inputs
        (`input_groups`). Raises ValueError naming a name that is no component of the page."""
        groups = input_groups(handler)
        found = {}
        for name, parameter in inspect.signature(handler).parameters.items():
            if str(parameter.annotation) in _SPECIAL or name == EVENT:
                continue
            for field in groups[name]._fields if name in groups else (name,):
                if field not in self.components:
                    where = f" (a field of its {name!r})" if name in groups else ""
                    raise ValueError(
                        f"{handler.__name__} reads {field!r}{where}, which is not a component"
                        " of the page"
                    )
                found[field] = self.components[field]
        return found

    def outputs_of(self, handler: Callable) -> list:
        names = getattr(handler, "outputs", ())
        missing = [name for name in names if name not in self.components]
        if missing:
            raise ValueError(
                f"{handler.__name__} writes {missing}, which are not components of the page"
            )
        return [self.components[name] for name in names]

    def bound(self, handler: Callable, *, heavy: bool = False, work: str = "") -> Callable:
        """`handler` as Gradio calls it: returning {component: value} instead of {name: value},
        and taking the event data (`gr.EventData`) for its `event` parameter.

        A handler reading `session` has it noted as the one of its Gradio session (`OPEN_SESSIONS`).
        `heavy`: each run counts against its session's `session_jobs` (PLAYGROUND_LIMITS); past
        it the status says so, naming the jobs running by their kind of `work`, and nothing
        else changes."""
        components = self.components
        wants_event = EVENT in inspect.signature(handler).parameters
        groups = input_groups(handler)
        names = getattr(handler, "outputs", ())
        # Gradio reads an empty dict as one value, not as "nothing changes"; and a handler with
        # one output gets its value as it is, so a tuple of one skip would be that value.
        skip_all = gr.skip() if len(names) == 1 else tuple(gr.skip() for _ in names)

        def to_components(result: dict):
            if not result:
                return skip_all
            return {
                components[name]: _as_update(components[name], value)
                for name, value in result.items()
            }

        shown_at = next((name for name in REFUSAL_PANELS if name in names), None)

        def busy(refusal: str) -> dict:
            """A heavy job refused while others run (`heavy_job`'s message, "already running"):
            shown where the handler draws (the status line, or the panel it writes, as Check's
            matrix), never on a component it does not write."""
            return {shown_at: error_html(refusal)} if shown_at else {}

        def unreadable(named: dict) -> dict | None:
            """The refusal of text longer than its box takes (`box_problem`) or not valid Unicode
            (a lone surrogate), shown on the status line (or the panel the handler draws), or
            None."""
            for name, value in named.items():
                if isinstance(value, str):
                    try:
                        if (problem := box_problem(name, value)) is not None:
                            raise InputError(problem)
                        check_unicode(value, f"The {name.replace('_', ' ')}")
                    except InputError as error:
                        return {shown_at: error_html(str(error))} if shown_at else {}
            return None

        if inspect.isgeneratorfunction(handler):

            def run(*args, **kwargs):
                named = _arguments(run.__signature__, args, kwargs, wants_event)
                session_id = named.pop(_SESSION_ID, None)
                if (refusal := unreadable(named)) is not None:
                    yield to_components(refusal)
                    return
                named = _packed(named, groups)
                try:
                    with _job(named, heavy, work) as refused:
                        if refused:
                            yield to_components(busy(refused))
                            return
                        for result in handler(**named):
                            yield to_components(result)
                finally:
                    _charged(named, session_id)

        else:

            def run(*args, **kwargs):
                named = _arguments(run.__signature__, args, kwargs, wants_event)
                session_id = named.pop(_SESSION_ID, None)
                if (refusal := unreadable(named)) is not None:
                    return to_components(refusal)
                named = _packed(named, groups)
                try:
                    with _job(named, heavy, work) as refused:
                        return to_components(busy(refused) if refused else handler(**named))
                finally:
                    _charged(named, session_id)

        run.__signature__ = _gradio_signature(handler, wants_event, groups)
        run.__annotations__ = (
            {"evt": gr.EventData, REQUEST: gr.Request} if wants_event else {REQUEST: gr.Request}
        )
        run.__name__ = run.__qualname__ = handler.__name__
        run.__doc__ = handler.__doc__
        return run

    def listen(self, trigger: Callable, handler: Callable, *, work: str = "parse", **options):
        """Bind `handler` to `trigger` (e.g. `page.parse_button.click`), as work of kind `work`.

        Returns Gradio's dependency (for `.then(...)` or `cancels=`).
        """
        queue = {} if options.get("queue") is False else queue_options(work)
        inputs, outputs = self.inputs_of(handler), self.outputs_of(handler)
        if "status" in getattr(handler, "outputs", ()) and "show_progress" not in options:
            # One progress indicator, on the status line: an animated overlay on every panel
            # costs the browser more than drawing a big parse.
            options["show_progress_on"] = [self.components["status"]]
        return trigger(
            self.bound(handler, heavy=work in HEAVY_WORK, work=work),
            inputs_kwargs=inputs,
            outputs=outputs,
            api_name=f"page_{handler.__name__}",  # never one of the public names
            api_visibility="private",
            **queue,
            **options,
        )


OPEN_SESSIONS = OpenSessions()


def input_groups(handler: Callable) -> dict[str, type]:
    """The handler's parameters that are groups of inputs: {parameter name: its NamedTuple class}.

    A group is a parameter annotated with a `NamedTuple` class, as the class itself or (under
    `from __future__ import annotations`) as its bare name in the handler's module.
    Raises ValueError when a field is named like another parameter of the handler (Gradio
    would see two parameters of that name).
    """
    parameters = inspect.signature(handler).parameters
    scope = getattr(inspect.unwrap(handler), "__globals__", {})
    groups = {}
    for name, parameter in parameters.items():
        annotation = parameter.annotation
        if isinstance(annotation, str):
            annotation = scope.get(annotation)
        if isinstance(annotation, type) and issubclass(annotation, tuple):
            if hasattr(annotation, "_fields"):
                groups[name] = annotation
    fields = [field for group in groups.values() for field in group._fields]
    clashes = sorted({field for field in fields if fields.count(field) > 1 or field in parameters})
    if clashes:
        raise ValueError(
            f"{handler.__name__}: {', '.join(map(repr, clashes))} would be read twice"
            " (a field of a group of inputs named like another parameter or field)"
        )
    return groups


def _packed(named: dict, groups: dict[str, type]) -> dict:
    """The handler's keyword arguments with each group's fields packed into its tuple."""
    for name, group in groups.items():
        named[name] = group(*(named.pop(field) for field in group._fields))
    return named


def _arguments(signature: inspect.Signature, args, kwargs, wants_event: bool) -> dict:
    """A bound handler's call as the handler's keyword arguments: the session noted as its Gradio
    session's (and its id kept under `_SESSION_ID` for `_charged`), the event data as a dict."""
    named = signature.bind(*args, **kwargs).arguments
    request = named.pop(REQUEST, None)
    if "session" in named and request is not None and request.session_hash:
        OPEN_SESSIONS.seen(request.session_hash, named["session"], limits.current().sessions)
        named[_SESSION_ID] = request.session_hash
    if wants_event:
        named[EVENT] = dict(getattr(named.pop("evt", None), "_data", None) or {})
    return named


def _job(named: dict, heavy: bool, work: str = ""):
    """A heavy job's slot in its session (`heavy_job`, named by its kind of `work`), or nothing
    for other work."""
    session = named.get("session") if heavy else None
    if session is None:
        return nullcontext()
    return heavy_job(session, limits.current().session_jobs, work)


def _charged(named: dict, session_id: str | None) -> None:
    """The request is over: count what its session keeps (`OpenSessions.charge`)."""
    if session_id is not None:
        caps = limits.current()
        OPEN_SESSIONS.charge(
            session_id, named["session"], caps.session_mb * 1_000_000, caps.sessions_mb * 1_000_000
        )


def _gradio_signature(
    handler: Callable, wants_event: bool, groups: dict[str, type]
) -> inspect.Signature:
    """The handler's signature as Gradio must see it: a group of inputs replaced by one parameter
    per field, `event` replaced by a positional parameter annotated `gr.EventData` (which Gradio
    fills), and the request (`REQUEST`) added."""
    signature = inspect.signature(handler)
    parameters = []
    for name, parameter in signature.parameters.items():
        if name in groups:
            parameters += [
                inspect.Parameter(field, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                for field in groups[name]._fields
            ]
        elif name != EVENT:
            parameters.append(parameter)
    if wants_event:
        parameters.append(
            inspect.Parameter(
                "evt", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=gr.EventData
            )
        )
    parameters.append(
        inspect.Parameter(
            REQUEST, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None, annotation=gr.Request
        )
    )
    return signature.replace(parameters=parameters)


def session_closed(request: gr.Request) -> None:
    """The page was closed (`demo.unload`): release its session now (`OpenSessions.closed`), and
    delete the files its client uploaded (`uploads.remove_uploads`).

    Our registry of open sessions is keyed by the public session hash, so this needs nothing of
    Gradio's own session store: Gradio keeps the page's last input values (and the released,
    now small `Session`) until its own least-recently-used cap, `state_session_capacity` (set
    to PLAYGROUND_LIMITS `sessions`), drops them.
    """
    if request is None or not request.session_hash:
        return
    OPEN_SESSIONS.closed(request.session_hash)
    remove_uploads(client_address(request))


def query_params(request: gr.Request) -> dict:
    """The page URL's query parameters (`?sample=...`) as a dict, for the page-load handler."""
    return dict(request.query_params) if request is not None else {}


def _as_update(component, value):
    """An `Update` (new properties) as the component update Gradio takes; other values as they are."""
    if isinstance(value, Update):
        return type(component)(**value)
    if isinstance(value, Labelled):
        return type(component)(value=str(value), label=value.label, language=value.language)
    return value
