"""Freed memory goes back to the operating system (glibc's malloc), so a host sees it drop.

A long replay allocates many large strings (region maps, event pages, stream-check runs)
in the server's worker threads. With glibc's defaults the threshold above which a block
gets its own mapping grows with every large block freed, so later large blocks come
from the heap, fragment it, and the process keeps its peak for good: the first 200 KB
replay used to leave a server 240 MB larger. Fixed thresholds of 128 KB keep large
blocks in their own mappings (unmapped when freed) and trim the heap's free top, and
the threads share two heaps instead of one each.
"""

from __future__ import annotations

import ctypes
import ctypes.util

# mallopt parameters (malloc.h) and the threshold used for both, in bytes.
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
THRESHOLD_BYTES = 128 * 1024
# Heaps the worker threads share; glibc's default (8 per core) lets each thread fragment its own.
ARENAS = 2


def return_freed_memory() -> bool:
    """Set glibc's arena count and its trim and mmap thresholds (see the module docstring); call it
    before the server starts its threads. Returns False where there is no glibc."""
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl, macOS)
        return False
    settings = (
        (M_ARENA_MAX, ARENAS),
        (M_TRIM_THRESHOLD, THRESHOLD_BYTES),
        (M_MMAP_THRESHOLD, THRESHOLD_BYTES),
    )
    return all([bool(mallopt(parameter, value)) for parameter, value in settings])
