"""Events add up to the message: the rule a consumer of the event stream can rely on.

A consumer that keeps only `region_close` events rebuilds exactly the message
`ResponseParser.finalize()` returns, for every chunking and in both error modes:

* start from the template's `defaults`;
* a close with a `value` writes it: the last one wins for a plain field, a
  `repeats` field collects them in a list, a `join` field joins them with its
  separator;
* a close without `value` adds nothing: a failed region (it carries `error`)
  or a whitespace-only stretch of a repeating implicit field (`blank`);
* keys not in `defaults` whose value is empty (None, "", [], {}) are dropped.

A non-repeating implicit field gathers every stretch of unclaimed text, so each
of its closes carries the field's whole value so far, and a whitespace-only
stretch's close repeats it unchanged. `docs/template-language.md` describes
the events in full.
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
    for event in events:
        if event.get("type") != "region_close" or "value" not in event:
            continue
        spec = loaded.fields[event["field"]]
        value = event["value"]
        if spec.join is not None:
            previous = message.get(spec.name)
            message[spec.name] = value if previous is None else previous + spec.join + value
        elif spec.repeats:
            message.setdefault(spec.name, []).append(value)
        else:
            message[spec.name] = value
    return {key: value for key, value in message.items() if key in loaded.defaults or not is_empty(value)}
