"""The errors the engine raises.

Every error is a `ValueError` subclass, so code written against the
reference (which raises plain `ValueError`) catches ours unchanged.
"""

from __future__ import annotations

import functools

# The longest JSON path a TemplateError's message shows (characters).
SHOWN_PATH_CHARS = 120


class TemplateError(ValueError):
    """A response template that cannot be loaded.

    Attributes:
        path: JSON path of the offending key, e.g. ``fields.tool_calls.content_args.tag_pattern``
            (``""`` for the template itself).
        detail: the message without the path.

    A `predicate` message continues the path as its subject ("is too large to compile..."):
    the whole message reads "fields.x.open_pattern is too large to compile...", no colon.
    """

    def __init__(self, path: str, message: str, *, predicate: bool = False):
        self.path = path
        self.detail = message
        self.predicate = predicate
        # A path quotes the template's keys, which a visitor may make as long as the template:
        # the message shows its first SHOWN_PATH_CHARS characters and says how long it is.
        shown = path
        if len(path) > SHOWN_PATH_CHARS:
            shown = f"{path[:SHOWN_PATH_CHARS]}… ({len(path):,} characters)"
        joined = f"{shown} {message}" if predicate else f"{shown}: {message}"
        super().__init__(joined if path else message)

    def __reduce__(self):
        # Pickled as what rebuilds it (an error sent back by a child process or a batch
        # worker), not as its joined message, which is not what __init__ takes.
        return (functools.partial(type(self), predicate=self.predicate), (self.path, self.detail))


class ResponseParseError(ValueError):
    """A generation that cannot be turned into a message with this template.

    Raised with ``on_error="raise"`` (the default); with ``on_error="keep"`` the parser
    collects these in `ResponseParser.errors` instead and keeps going.

    Attributes:
        field: the field whose region failed (None for message-level errors).
        key: JSON path of the template key whose work failed, such as
            ``fields.tool_calls.content`` (the content parser), ``fields.tool_calls.transform``,
            ``fields.tool_calls.join`` or ``fields.x.optional`` (a required field is missing);
            None when unknown.
        offset: stream offset of the region's body (the stream is the prefix after the start
            anchor, followed by the generation), or None.
        start, end: stream offsets of the whole failed region, delimiters included, or None.
        position: stream offset of the character where parsing failed (a JSON error's
            line and column turned into an offset), or None when the parser cannot say.
        text: the offending text: the region body when raised, the region's raw text
            (delimiters included) when kept; or None.
        region: index of the failed region (0-based, in order of opening), or None.
        lenient: True for the record of a lenient reading that kept no region as text: a close
            or control token out of place consumed, a misspelt or half-written delimiter read
            as the one meant, a repeated region read once (strict parsing would have left that
            text where it was, or read nothing there); False for a region whose value failed.
        events: the events the failing `feed` or `finalize` settled before the error, in order
            (its return value had it not raised), so that a caller loses none of the text
            decided before it; [] when raised elsewhere.
    """

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        offset: int | None = None,
        text: str | None = None,
        key: str | None = None,
        start: int | None = None,
        end: int | None = None,
        position: int | None = None,
        region: int | None = None,
        lenient: bool = False,
    ):
        self.field = field
        self.lenient = lenient
        self.key = key
        self.offset = offset
        self.start = start
        self.end = end
        self.position = position
        self.text = text
        self.region = region
        self.events: list[dict] = []
        super().__init__(message)

    @property
    def message(self) -> str:
        """The error text (what `str(error)` gives)."""
        return str(self)


class UndefinedPlaceholderError(ResponseParseError, KeyError):
    """A transform placeholder names something that is not in scope for this region.

    Also a `KeyError`, as the reference raises there, so code that catches either works.
    """

    __str__ = ValueError.__str__  # not KeyError's quoted form


class ContentError(ValueError):
    """A content parser's failure, with where in the body it happened.

    Attributes:
        position: offset in the parsed body of the character where parsing failed, or None.
    """

    def __init__(self, message: str, position: int | None = None):
        self.position = position
        super().__init__(message)


class PatternTimeoutError(ResponseParseError):
    """A template pattern took longer than the parser's regex time budget on this input."""


class ParseDeadlineError(PatternTimeoutError):
    """The parse ran past its `deadline`: the whole parse's wall-clock budget, where
    `regex_timeout` bounds each regex call. Like a delimiter timeout, it always stops the
    parse (also with ``on_error="keep"``)."""


class ParseLimitError(ResponseParseError):
    """The parse reached a limit its caller set (`ResponseParser` keywords) and stopped there:
    ``max_regions``, the most regions it may open (implicit stretches, and the stretches that
    keep a failed region's text, included), raised before the one too many opens; or
    ``max_value_chars``, the most characters its region values may hold together, raised when
    the region that goes past it closes. Like a deadline, it always stops the parse (also with
    ``on_error="keep"``); the text after `offset` is not parsed.

    Attributes:
        limit: the keyword reached, ``"max_regions"`` or ``"max_value_chars"``.
        allowed: its value (regions, or characters).
        offset: stream offset where the parse stopped.
    """

    def __init__(
        self, message: str, *, limit: str = "", allowed: int = 0, offset: int | None = None
    ):
        super().__init__(message, offset=offset)
        self.limit = limit
        self.allowed = allowed


def shorten(text: str, limit: int = 200) -> str:
    """Return `repr(text)`, cut in the middle to about `limit` characters for error messages."""
    if len(text) <= limit:
        return repr(text)
    half = limit // 2
    return f"{text[:half]!r} ... ({len(text) - 2 * half} characters) ... {text[-half:]!r}"
