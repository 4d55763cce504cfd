"""Events add up to the message: the rule a consumer of the event stream can rely on.

A consumer that keeps only `region_close` events rebuilds exactly the message
`ResponseParser.finalize()` returns, for every chunking and in both error modes:

* start from the template's `defaults`;
* a close with a `value` writes it: the last one wins for a plain field, a
  `repeats` field collects them in a list, a `join` field joins them with its
  separator, and a non-repeating implicit `text` field (with no transform)
  concatenates them;
* a close without `value` adds nothing: a failed region (it carries `error`)
  or a whitespace-only stretch of a repeating implicit field (`blank`);
* keys not in `defaults` whose value is empty (None, "", [], {}) are dropped.

A non-repeating implicit field gathers every stretch of unclaimed text. When it
is plain text, each of its closes carries only what its own stretch adds: the
stretch, preceded by the whitespace that ended the stretches before it (held
back until a later stretch says something; the whitespace at the value's two
ends is stripped as `text` strips it). So the closes' values, concatenated, are
the field's value (a whitespace-only stretch closes with "", adding nothing),
and each close costs its own stretch, as a close costs its
region in transformers' reference: a consumer written for the reference that
shows or appends every content close sees no text twice. An implicit field with
another content parser or a transform parses the joined whole, so each of its
closes carries the whole value so far (the last one wins) and a whitespace-only
stretch's close repeats it. `docs/template-language.md` describes the events in
full.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from .template import ResponseTemplate, load_template


def is_empty(value: Any) -> bool:
    """Whether `value` is one the message leaves out (None, "", [], {}) unless `defaults` has its key."""
    return value is None or (isinstance(value, (str, list, dict)) and not value)


def message_from_events(events: Iterable[dict], template: dict | str | ResponseTemplate) -> dict:
    """The message the `region_close` events of one parse add up to.

    Args:
        events: every event of the parse, in order (`initial_events`, then each `feed`'s,
            then `finalize`'s); events other than `region_close` are ignored.
        template: the response template of the parse.

    Returns:
        The message dict, equal to what `ResponseParser.finalize()` returned.

    Raises:
        TemplateError: the template is invalid.
        KeyError: an event names a field the template does not have.
    """
    loaded = load_template(template)
    message = copy.deepcopy(loaded.defaults)
    stretch_values: list[str] = []  # the close values of an implicit field that concatenates them
    for event in events:
        if event.get("type") != "region_close" or "value" not in event:
            continue
        spec = loaded.fields[event["field"]]
        value = event["value"]
        if spec.concatenates_stretches:
            if value:
                stretch_values.append(value)
        elif spec.join is not None:
            previous = message.get(spec.name)
            message[spec.name] = value if previous is None else previous + spec.join + value
        elif spec.repeats:
            message.setdefault(spec.name, []).append(value)
        else:
            message[spec.name] = value
    if stretch_values:
        message[loaded.implicit_field.name] = "".join(stretch_values)
    return {
        key: value
        for key, value in message.items()
        if key in loaded.defaults or not is_empty(value)
    }
