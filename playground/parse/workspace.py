"""The workspace: the four page inputs a parse is made from, as one value."""

from __future__ import annotations

from typing import NamedTuple


class WorkspaceInputs(NamedTuple):
    """The inputs every parse of the page reads, as their components hold them (each field is
    named like the component it comes from: a handler parameter annotated `WorkspaceInputs`
    reads all four, see `playground.wiring`).

    Attributes:
        template_text: the response template, as JSON text.
        prefix: the prompt's end the generation continues ("" or None for none).
        generation: the model's raw output ("" or None for none).
        tools_text: the tools, as a JSON list ("" or None for none).
    """

    template_text: str
    prefix: str
    generation: str
    tools_text: str

    def with_template(self, template_text: str) -> WorkspaceInputs:
        """The same input under another template (a fix, a reset, a loaded file)."""
        return self._replace(template_text=template_text)
