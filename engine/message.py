"""The message a parse builds: each closed region's body parsed into a value and written in.

A region's value is its body parsed by the field's content parser, then put
through its transform and tool-argument typing (`MessageBuilder.value`), and `MessageBuilder`
writes the values into the message as the format says (docs/template-language.md):
the last value of a plain field, a list for `repeats`, the values joined with
`join`, and for a non-repeating implicit field every stretch of unclaimed text
joined as written, so no text is lost; a whitespace-only stretch is not a value.
The implicit field's closes stay linear in the text: each carries what its own
stretch adds (`engine.events` gives the rule a consumer follows).
"""

from __future__ import annotations

import copy
from typing import Any

from .content import parse_content
from .errors import (
    ContentError,
    PatternTimeoutError,
    ResponseParseError,
    UndefinedPlaceholderError,
    shorten,
)
from .events import is_empty
from .template import FieldSpec, ResponseTemplate
from .tool_typing import RawArguments, type_tool_calls
from .transform import PlaceholderNotDefined

# Content parsers whose values a `value_parser` may read (`strings_as_written` may want the text).
_TAGGED = ("xml-inline", "kv-lines")
# Content parsers whose syntax tells strings from other values: a parameter whose schema admits
# `string` keeps what they gave.
TYPED_CONTENT = ("json", "python-call-list")


def _texts_as_written(content: str, body: str, args: dict) -> dict:
    """The values of a tagged body as written: the content parser run again without its value parser."""
    return parse_content(content, body, {k: v for k, v in args.items() if k != "value_parser"})


class _Blank:
    """The value of a whitespace-only stretch of a repeating implicit field: none (see `MessageBuilder.store`)."""

    def __repr__(self) -> str:
        return "BLANK"


BLANK = _Blank()


def value_chars(value: Any, limit: int) -> int:
    """About the characters `value` takes as JSON (each string, key and number as often as it is
    referred to: a list holding one string 500 times counts it 500 times), counted no further
    than just past `limit`, so the walk is cheap however large the value would be written out."""
    total, stack = 0, [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, dict):
            total += 2 + sum(len(str(key)) + 4 for key in item)
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            total += 2 + len(item)
            stack.extend(item)
        else:
            total += 8
    return total


class MessageBuilder:
    """The message of one parse, built region by region.

    Args:
        template: the loaded template (its `defaults` start the message).
        tool_schemas: tool name -> JSON schema of its parameters, to type tool-call arguments.
        timeout: seconds allowed for each regex call of a content parser, or None (an attribute:
            a parser with a deadline lowers it to the time left before each region's value).
        strings_as_written: a tagged value a `value_parser` read keeps its text for a parameter
            whose schema says `string` (see `engine.tool_typing`); False: the reference's rule.
    """

    def __init__(
        self,
        template: ResponseTemplate,
        tool_schemas: dict,
        timeout: float | None,
        strings_as_written: bool = False,
    ):
        self.template = template
        self.message: dict[str, Any] = copy.deepcopy(template.defaults)
        self._tool_schemas = tool_schemas
        self._strings_as_written = strings_as_written
        self.timeout = timeout
        self._implicit_stretches: list[
            str
        ] = []  # every stretch of a non-repeating implicit field, as written
        self._implicit_values: list[
            str
        ] = []  # the close values of a field that concatenates its stretches
        self._held_whitespace = (
            ""  # whitespace after its last value, which only a later value includes
        )

    def store(self, field: FieldSpec, body: str, captures: dict, offset: int) -> Any:
        """Compute a closed region's value and write it into the message; return the value.

        `captures` are the region's delimiter captures and `offset` the stream offset of its
        body. Returns `BLANK` for a whitespace-only stretch of a repeating implicit field: it
        is not a value of its own, so it is neither appended nor joined.

        Raises:
            ResponseParseError: the value cannot be computed (see `value`), or a `join`
                field's value is not a string.
        """
        if field.implicit:
            if not field.repeats:
                return self._store_implicit_stretch(field, body, captures, offset)
            if not body.strip():
                return BLANK
        value = self.value(field, body, captures, offset)
        name = field.name
        if field.join is not None:
            if not isinstance(value, str):
                raise ResponseParseError(
                    f"{field.path}: 'join' needs every region to parse to a string, got {type(value).__name__} "
                    f"from the region at offset {offset}: {shorten(body)}",
                    field=name,
                    key=f"{field.path}.join",
                    offset=offset,
                    text=body,
                )
            previous = self.message.get(name)
            self.message[name] = value if previous is None else previous + field.join + value
        elif field.repeats:
            self.message.setdefault(name, []).append(value)
        else:
            self.message[name] = value
        return value

    def take_back(self, field: FieldSpec) -> None:
        """Remove the last value `store` appended to repeating `field` (lenient parsing reads a
        repeated draft once)."""
        values = self.message.get(field.name)
        if field.repeats and field.join is None and isinstance(values, list) and values:
            values.pop()

    def _store_implicit_stretch(
        self, field: FieldSpec, body: str, captures: dict, offset: int
    ) -> Any:
        """One stretch of a non-repeating implicit field; every stretch of unclaimed text belongs
        to the message, joined as written.

        A `text` field without a transform (`FieldSpec.concatenates_stretches`) returns only what
        this stretch adds to the joined value, so the closes cost the length of the text and
        concatenate to the value: the whitespace held back from earlier stretches (none before
        the first value, when `strip` is on), then this stretch, whose trailing whitespace is
        held back in turn (the value's own end is stripped). A whitespace-only stretch returns
        "" (it adds nothing, and its close carries "" as the reference's does); its text is held
        back too.

        Any other field parses the joined whole, so each close carries the whole value so far
        (the length of the text so far: quadratic in a stream with many stretches); a
        whitespace-only stretch returns the value so far unchanged ("" before there is one).
        """
        if field.concatenates_stretches:
            strip = field.content_args.get("strip", True)
            if not body.strip():
                self._held_whitespace += body
                return ""
            value = self._held_whitespace + body
            if strip:
                kept = value.rstrip()
                self._held_whitespace = value[len(kept) :]
                value = kept if self._implicit_values else kept.lstrip()
            else:
                self._held_whitespace = ""
            self._implicit_values.append(value)
            return value
        stretches = self._implicit_stretches
        stretches.append(body)
        name = field.name
        if not body.strip():
            return self.message.get(name, "")
        whole = body if len(stretches) == 1 else "".join(stretches)
        # A transform sees the captures of the close that ends the latest stretch.
        value = self.value(field, whole, captures, offset, contiguous=whole is body)
        self.message[name] = value
        return value

    def value(
        self,
        field: FieldSpec,
        body: str,
        captures: dict,
        offset: int | None,
        contiguous: bool = True,
    ) -> Any:
        """A region's value: `body` parsed with the field's content parser, then its transform and tool typing.

        `offset` is the stream offset of the region body; `contiguous` says whether `body` lies
        there as one piece (a joined implicit value does not), so that a content parser's
        failure position becomes a stream offset.

        Raises:
            ResponseParseError: naming the field, the failing key and, when known, the position
                (`PatternTimeoutError` when a content pattern ran over the time budget).
        """
        timeout, tool_schemas = self.timeout, self._tool_schemas
        args = (
            field.content_args if timeout is None else {**field.content_args, "_timeout": timeout}
        )
        key = "content"
        raw = None
        try:
            value = parse_content(field.content, body, args)
            if (
                self._strings_as_written
                and tool_schemas
                and field.content in _TAGGED
                and args.get("value_parser")
            ):
                raw = RawArguments(value, _texts_as_written(field.content, body, args))
            build = field.build
            if build is not None:
                key = "transform"
                if field.transform_each:
                    if not isinstance(value, list) or not all(
                        isinstance(item, dict) for item in value
                    ):
                        raise ValueError(
                            f"transform_each needs the content to parse to a list of objects, got {shorten(repr(value), 120)}"
                        )
                    value = [build({**captures, **item}) for item in value]
                else:
                    value = build({**captures, "content": value})
        except TimeoutError:
            where = f" (region at offset {offset})" if offset is not None else ""
            raise PatternTimeoutError(
                f"{field.path}.content_args.tag_pattern: pattern too slow on this input (over the "
                f"{timeout} s budget){where}",
                field=field.name,
                key=f"{field.path}.content_args.tag_pattern",
                offset=offset,
                text=body,
            ) from None
        except ValueError as error:
            where = f" (region at offset {offset})" if offset is not None else ""
            key = f"{field.path}.{key}"
            detail = str(error)
            if shorten(body) not in detail:
                detail = f"{detail}; region body: {shorten(body)}"
            position = getattr(error, "position", None) if isinstance(error, ContentError) else None
            if position is not None:
                position = offset + position if contiguous and offset is not None else None
            kind = (
                UndefinedPlaceholderError
                if isinstance(error, PlaceholderNotDefined)
                else ResponseParseError
            )
            raise kind(
                f"{field.path}: {detail}{where}",
                field=field.name,
                key=key,
                offset=offset,
                text=body,
                position=position,
            ) from None
        # Values read by `value_parser_by` are read as the model's own output says: final.
        if tool_schemas and "value_parser_by" not in field.content_args:
            type_tool_calls(value, tool_schemas, raw, typed=field.content in TYPED_CONTENT)
        return value

    def missing_fields(self) -> list[str]:
        """The required fields (``"optional": false``) with no value yet."""
        self._write_implicit_values()
        return [
            spec.name
            for spec in self.template.fields.values()
            if not spec.optional and spec.name not in self.message
        ]

    def finished(self) -> dict:
        """The message: `defaults`, then each field's value; keys not in `defaults` whose value is
        empty (None, "", [], {}) are dropped."""
        self._write_implicit_values()
        defaults = self.template.defaults
        return {
            key: value
            for key, value in self.message.items()
            if key in defaults or not is_empty(value)
        }

    def _write_implicit_values(self) -> None:
        """Write the concatenated close values of the implicit field into the message (joined
        once here rather than at every close, which would copy the value so far each time)."""
        if self._implicit_values:
            self.message[self.template.implicit_field.name] = "".join(self._implicit_values)
