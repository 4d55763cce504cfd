"""Weight: about the bytes an object keeps, for the caps on what a session holds.

`plain_weight(value)` walks plain data (strings, bytes, numbers, None, and lists,
tuples, sets, dicts and dataclasses of them) and adds up `sys.getsizeof` of every
object in it, each once. The parse objects (`ParseView`, `Replay`) count their
big parts by estimates of their own (a walk of a million spans would cost more
than the request) and their other fields with `plain_weight`, so a field added
to any of them is counted without anyone remembering to.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

# The most objects one walk visits; past it the rest is counted as this many bytes each
# (a walk stays O(WALK_OBJECTS), whatever a visitor managed to put in a session).
WALK_OBJECTS = 200_000
UNWALKED_BYTES = 64


def plain_weight(value: Any, skip: frozenset[str] = frozenset()) -> int:
    """About the bytes `value` keeps: `sys.getsizeof` of it and of everything it holds (list,
    tuple and set items, dict keys and values, dataclass fields except those named in `skip`,
    which the caller counts its own way), each object once.

    Args:
        value: plain data, or a dataclass instance.
        skip: field names of a dataclass `value` (at the top only) left out.

    Returns:
        bytes (an estimate: shared small objects such as short ints are counted each time they are
        held by another object, never less than what is kept).
    """
    seen: set[int] = set()
    total = 0
    stack: list[Any] = [value]
    top = True
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if len(seen) > WALK_OBJECTS:
            return total + UNWALKED_BYTES * (len(stack) + 1)
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            total += sys.getsizeof(item)
            stack += [
                getattr(item, one.name)
                for one in dataclasses.fields(item)
                if not (top and one.name in skip)
            ]
        elif isinstance(item, dict):
            total += sys.getsizeof(item)
            stack += item.keys()
            stack += item.values()
        elif isinstance(item, (list, tuple, set, frozenset)):
            total += sys.getsizeof(item)
            stack += item
        else:
            total += sys.getsizeof(item)
        top = False
    return total
