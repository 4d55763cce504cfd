"""What a custom panel's event sent (a click on the map, the log, the editor), read safely:
an index or a selection #explain knows, or nothing.
"""

from __future__ import annotations

import re

# What #explain may be asked to explain: a span's index, the anchor, the cut, an error ("e3")
# or a diagnosis ("d0").
_SELECTION = re.compile(r"anchor|cut|[ed]?[0-9]{1,9}")


# The most digits a number sent in an event may have (more is no index of anything on the page).
EVENT_DIGITS = 9


def known_selection(selected) -> str | None:
    """What a click asks #explain to explain (see `_SELECTION`) as a string, or None when it is
    nothing #explain knows (a page of this server never sends one: it is not kept)."""
    if isinstance(selected, int) and not isinstance(selected, bool):
        selected = str(selected)
    if isinstance(selected, str) and _SELECTION.fullmatch(selected):
        return selected
    return None


def event_number(event: dict, key: str, default: int = -1) -> int:
    """The whole number an event sent under `key` (a JSON number, or a string of at most
    EVENT_DIGITS digits), or `default` when there is none or it is anything else."""
    value = event.get(key, default)
    if isinstance(value, bool):
        return default
    if isinstance(value, float) and value.is_integer() and abs(value) < 10**EVENT_DIGITS:
        return int(value)
    if isinstance(value, int):
        return value if abs(value) < 10**EVENT_DIGITS else default
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]{1,%d}" % EVENT_DIGITS, value):
        return int(value)
    return default
