"""The errors the engine raises.

Every error is a `ValueError` subclass, so code written against the
reference (which raises plain `ValueError`) catches ours unchanged.
"""

from __future__ import annotations


class TemplateError(ValueError):
    """A response template that cannot be loaded.

    Attributes:
        path: JSON path of the offending key, e.g. ``fields.tool_calls.content_args.tag_pattern``
            (``""`` for the template itself).
        detail: the message without the path.
    """

    def __init__(self, path: str, message: str):
        self.path = path
        self.detail = message
        super().__init__(f"{path}: {message}" if path else message)


class ResponseParseError(ValueError):
    """A generation that cannot be turned into a message with this template.

    Attributes:
        field: the field whose region failed (None for message-level errors).
        offset: character offset of the region's body in the parsed stream
            (prefix tail after the start anchor, followed by the generation), or None.
        text: the offending text (the region body), or None.
    """

    def __init__(self, message: str, *, field: str | None = None, offset: int | None = None, text: str | None = None):
        self.field = field
        self.offset = offset
        self.text = text
        super().__init__(message)


class PatternTimeoutError(ResponseParseError):
    """A template pattern took longer than the parser's regex time budget on this input."""


def shorten(text: str, limit: int = 200) -> str:
    """Return `repr(text)`, cut in the middle to about `limit` characters for error messages."""
    if len(text) <= limit:
        return repr(text)
    half = limit // 2
    return f"{text[:half]!r} ... ({len(text) - 2 * half} characters) ... {text[-half:]!r}"
