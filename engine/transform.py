"""Transforms: reshape a region's parsed value with a dict/list template.

A string that is exactly `"{name}"` or `"{name.key.key}"` is replaced by that
value, type kept; every other value is copied as written. Names in scope are
`content` and the named captures of the delimiters (docs/template-language.md,
"transform").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import regex


class PlaceholderNotDefined(ValueError):
    """A placeholder's first name is not in scope (the parser raises it as `UndefinedPlaceholderError`)."""


PLACEHOLDER = regex.compile(r"\{(\w+(?:\.\w+)*)\}")


def placeholder_paths(transform: Any) -> list[str]:
    """All placeholder paths (`"content.args"`) used in a transform, in order of appearance."""
    if isinstance(transform, dict):
        return [path for value in transform.values() for path in placeholder_paths(value)]
    if isinstance(transform, list):
        return [path for value in transform for path in placeholder_paths(value)]
    if isinstance(transform, str):
        whole = PLACEHOLDER.fullmatch(transform)
        return [whole[1]] if whole else []
    return []


def find_mixed_placeholder(transform: Any, path: str) -> tuple[str, str] | None:
    """Return `(json_path, string)` of the first string mixing a placeholder with other text, or None."""
    if isinstance(transform, dict):
        items = transform.items()
    elif isinstance(transform, list):
        items = enumerate(transform)
    else:
        if (
            isinstance(transform, str)
            and PLACEHOLDER.search(transform)
            and not PLACEHOLDER.fullmatch(transform)
        ):
            return path, transform
        return None
    for key, value in items:
        found = find_mixed_placeholder(value, f"{path}.{key}")
        if found:
            return found
    return None


def _placeholder_path(text: str) -> tuple[str, ...] | None:
    """The names of the placeholder that `text` is exactly (``("content", "args")``), or None."""
    whole = PLACEHOLDER.fullmatch(text)
    return None if whole is None else tuple(whole[1].split("."))


def apply_transform(transform: Any, scope: dict[str, Any]) -> Any:
    """Build the value described by `transform`, looking placeholders up in `scope`.

    Raises:
        ValueError: a placeholder names something not in scope, or its dotted path
            does not resolve (missing key, or indexing into a non-dict).
    """
    return compile_transform(transform)(scope)


def compile_transform(transform: Any) -> Callable[[dict[str, Any]], Any]:
    """`transform` compiled into a function of the scope that builds its value (a fresh
    dict or list each call), so a template's transform is read once, not at every region.

    The function raises as `apply_transform` does.
    """
    if isinstance(transform, dict):
        items = [(key, compile_transform(value)) for key, value in transform.items()]
        return lambda scope: {key: build(scope) for key, build in items}
    if isinstance(transform, list):
        builds = [compile_transform(value) for value in transform]
        return lambda scope: [build(scope) for build in builds]
    path = _placeholder_path(transform) if isinstance(transform, str) else None
    if path is None:
        return lambda scope: transform
    root, *keys = path
    if not keys:

        def lookup_name(scope: dict[str, Any]) -> Any:
            if root in scope:
                return scope[root]
            raise PlaceholderNotDefined(
                f"transform placeholder {transform!r}: {root!r} is not defined; in scope: {sorted(scope)}"
            )

        return lookup_name

    def lookup_path(scope: dict[str, Any]) -> Any:
        if root not in scope:
            raise PlaceholderNotDefined(
                f"transform placeholder {transform!r}: {root!r} is not defined; in scope: {sorted(scope)}"
            )
        value = scope[root]
        walked = root
        for key in keys:
            if not isinstance(value, dict):
                raise ValueError(
                    f"transform placeholder {transform!r} cannot index into {type(value).__name__} at {key!r}: "
                    f"{walked!r} is a {type(value).__name__}, not a dict"
                )
            if key not in value:
                raise ValueError(
                    f"transform placeholder {transform!r}: {walked!r} is missing key {key!r}; keys: {sorted(value)}"
                )
            value = value[key]
            walked = f"{walked}.{key}"
        return value

    return lookup_path
