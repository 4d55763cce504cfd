"""One generation parsed by this engine and by transformers' reference, and how they may differ.

Both parse in raise mode (the reference has no other). They must give the same message, with
the engine's documented differences (docs/template-language.md, "Deliberate differences")
allowed for the implicit field only: the reference keeps its last stretch of unclaimed text
(or lets trailing whitespace empty it), the engine every stretch, so the engine's value ends
with the reference's. Where the reference raises, the engine must raise too.
"""

from __future__ import annotations

from collections.abc import Callable

from transformers.utils.chat_parsing import parse_response as reference_parse_response

from engine import load_template, parse_response


def implicit_field(template: dict) -> str | None:
    """The name of the template's implicit field, or None."""
    found = load_template(template).implicit_field
    return found.name if found is not None else None


def differs_from(ours: dict, theirs: dict, implicit: str | None) -> str:
    """How `ours` differs from the reference's `theirs` beyond the documented differences ("" if not)."""
    keys = set(ours) | set(theirs)
    for key in sorted(keys):
        if ours.get(key) == theirs.get(key):
            continue
        mine, reference = ours.get(key), theirs.get(key)
        if (
            key == implicit
            and isinstance(mine, str)
            and isinstance(reference, (str, type(None)))
            and mine.endswith(reference or "")
        ):
            continue  # the reference kept only the last stretch of unclaimed text
        return f"{key}: engine {mine!r}, reference {reference!r}"
    return ""


def compare(
    template: dict,
    output,
    prefix,
    tools=None,
    engine_parse: Callable | None = None,
    **reference_options,
) -> str:
    """ "" when the engine reads `output` as the reference does (bar the documented differences),
    else why not. `engine_parse(output, template, prefix=, tools=)` replaces `parse_response`
    (to feed ids in chunks, say); `reference_options` go to the reference (``tokenizer=``)."""
    engine_parse = engine_parse or parse_response
    try:
        theirs = reference_parse_response(
            output, template, prefix=prefix, tools=tools, **reference_options
        )
    except Exception as reference_error:  # the reference raised: the engine must raise too
        try:
            ours = engine_parse(output, template, prefix=prefix, tools=tools)
        except Exception:
            return ""
        return f"the reference raised {reference_error!r}, the engine gave {ours!r}"
    try:
        ours = engine_parse(output, template, prefix=prefix, tools=tools)
    except Exception as error:
        return f"the engine raised {error!r}, the reference gave {theirs!r}"
    return differs_from(ours, theirs, implicit_field(template))
