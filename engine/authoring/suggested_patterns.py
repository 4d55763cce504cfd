"""Delimiter patterns the authoring tools suggest, written once for lint and a trace's warnings.

Every literal in them is written by `engine.pattern_shapes.pattern_literal`, so the same fix
reads the same wherever it is suggested (``<tool-call>``, never ``<tool\\-call>``).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..delimiters import Delimiter
from ..pattern_shapes import pattern_literal


def delimiter_pattern(delimiter: Delimiter) -> str:
    """`delimiter` as one pattern: its literals as alternatives (``</a>|</b>``), or its pattern
    as written."""
    if delimiter.literals is not None:
        return "|".join(pattern_literal(literal) for literal in delimiter.literals)
    return delimiter.source


def close_or_lookahead(close: Delimiter | None, opens: Delimiter | Iterable[str]) -> str:
    """A close pattern that ends a region at its own close or just before a tool call's open.

    Args:
        close: the region's close delimiter; None when the region has none (then only the
            lookahead is suggested).
        opens: the tool call's open delimiter, or the texts the open starts with (each a
            literal; duplicates are written once).

    Returns:
        ``<own close>|(?=<open>)``, for example ``</think>|(?=<tool_call>)``: the region closes
        before the call without consuming its open, so the call is still parsed.
    """
    if isinstance(opens, Delimiter):
        ahead = delimiter_pattern(opens)
    else:
        ahead = "|".join(pattern_literal(text) for text in dict.fromkeys(opens))
    if close is None:
        return f"(?={ahead})"
    return f"{delimiter_pattern(close)}|(?={ahead})"


def json_safe_close(literal: str) -> str:
    """A close pattern that only fires after a closing brace or bracket:
    ``(?<=[}\\]])\\s*<literal>``, so the same text inside a JSON string does not end the
    region."""
    return r"(?<=[}\]])\s*" + pattern_literal(literal)


__all__ = ["close_or_lookahead", "delimiter_pattern", "json_safe_close"]
