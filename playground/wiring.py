"""Binding handlers to the layout by name.

`Page` holds the page's components under the names handlers use: a handler's
parameters are the components it reads (by the same name), its `@produces`
names are the components it writes. `Page.listen` checks both at startup, so a
misspelt name fails when the app is built, not when a visitor clicks.

Every listener bound here is private (`api_visibility="private"`): the public
API is `playground.api`, published with `gr.api` under stable names.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

import gradio as gr

from .limits import queue_options

# Parameters Gradio fills itself, by annotation.
_SPECIAL = {"gr.Request", "Request", "gr.EventData", "EventData"}


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
        """The components a handler reads: one per parameter, by name (special parameters excluded)."""
        found = {}
        for name, parameter in inspect.signature(handler).parameters.items():
            if str(parameter.annotation) in _SPECIAL:
                continue
            if name not in self.components:
                raise ValueError(f"{handler.__name__} reads {name!r}, which is not a component of the page")
            found[name] = self.components[name]
        return found

    def outputs_of(self, handler: Callable) -> list:
        names = getattr(handler, "outputs", ())
        missing = [name for name in names if name not in self.components]
        if missing:
            raise ValueError(f"{handler.__name__} writes {missing}, which are not components of the page")
        return [self.components[name] for name in names]

    def bound(self, handler: Callable) -> Callable:
        """`handler` returning {component: value} instead of {name: value}, as Gradio takes it."""
        components = self.components

        def to_components(result: dict) -> dict:
            return {components[name]: _as_update(components[name], value) for name, value in result.items()}

        if inspect.isgeneratorfunction(handler):

            @functools.wraps(handler)
            def run_generator(*args, **kwargs):
                for result in handler(*args, **kwargs):
                    yield to_components(result)

            return run_generator

        @functools.wraps(handler)
        def run(*args, **kwargs):
            return to_components(handler(*args, **kwargs))

        return run

    def listen(self, trigger: Callable, handler: Callable, *, work: str = "parse", **options):
        """Bind `handler` to `trigger` (e.g. `page.parse_button.click`), as work of kind `work`.

        Returns Gradio's dependency (for `.then(...)` or `cancels=`).
        """
        queue = {} if options.get("queue") is False else queue_options(work)
        return trigger(
            self.bound(handler),
            inputs_kwargs=self.inputs_of(handler),
            outputs=self.outputs_of(handler),
            api_name=f"page_{handler.__name__}",  # never one of the public names
            api_visibility="private",
            **queue,
            **options,
        )


def query_params(request: gr.Request) -> dict:
    """The page URL's query parameters (`?sample=...`) as a dict, for the page-load handler."""
    return dict(request.query_params) if request is not None else {}


def _as_update(component, value):
    """Values a handler gives by meaning that Gradio takes as component updates (a tab id selects a tab)."""
    if isinstance(component, gr.Tabs) and isinstance(value, str):
        return gr.Tabs(selected=value)
    return value
