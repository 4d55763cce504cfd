"""Template inference from example outputs: arguments written as key and value pairs.

Some models write a call's arguments in a syntax of their own: ``{key:value,key:value}`` with
unquoted strings, ``key=value`` lines, ``(a=1, b="x")``, tags around each value. Each is a run
of pairs: text before each key, the key, text between key and value, the value, text after it.
`read_pairs` finds the pairs of an expected arguments object (or of a tool's parameters) in an
output, and `pair_pattern` writes the `xml-inline` tag pattern that reads such pairs back: the
values are text the tool's schema casts, or JSON where the example wrote them as JSON strings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import regex

from ..pattern_shapes import pattern_literal

# How far (characters) a value may stand from its key, and a key from the value before it:
# room for markup around each argument (`<|close|>argument<|sep|><|open|>argument key="` is 44).
_NEAR = 64


def written_forms(value: Any) -> list[str]:
    """The ways an argument value may be written in an output, most specific first: JSON (with
    and without blanks, with and without escaped non-ASCII), Python's repr, and bare."""
    forms = [
        json.dumps(value, ensure_ascii=False),
        json.dumps(value),
        json.dumps(value, ensure_ascii=False, separators=(",", ":")),
        repr(value),
    ]
    if isinstance(value, str):
        forms.append(value)
    elif isinstance(value, bool):
        forms += ["true" if value else "false", "True" if value else "False"]
    return list(dict.fromkeys(form for form in forms if form))


@dataclass(frozen=True)
class Pair:
    """One argument as written: the text before its key (from the previous value's end, or the
    pairs' start), the key, the text between key and value, the value as written, and whether
    it was written as a quoted string."""

    before: str
    key: str
    between: str
    value: str
    quoted: bool
    # The value is a string in the message (else a number, a boolean, an object...).
    text: bool = True
    # The value is an object written as pairs of the same syntax inside this pair.
    nested: bool = False


@dataclass(frozen=True)
class Pairs:
    """The arguments of one call read as pairs: `pairs` in order, `end`, the offset after the
    last value, and `after`, the few characters that follow it."""

    pairs: tuple[Pair, ...]
    end: int
    after: str = ""


def read_pairs(
    text: str, start: int, arguments: dict | None, parameters: dict | None = None
) -> Pairs | None:
    """The pairs of `arguments` (keys in the order the text writes them, each value in one of
    its `written_forms`) in `text` from `start`, each key within a few characters of the text
    before it; or, with
    `arguments` None, the `parameters`' names as keys and the value up to the next blank,
    comma or closing bracket. None when a key or a value is not there."""
    if arguments is None:
        return _read_parameters(text, start, parameters or {})
    at, pairs = start, []
    for key, value in _in_written_order(text, start, arguments):
        found = _key(key).search(text, at, min(len(text), at + _NEAR))
        if found is None:
            return None
        inner = _nested(text, found.end(), value)
        if inner is not None:
            between, written, end = inner
            pairs.append(Pair(text[at : found.start()], key, between, written, False, False, True))
            at = end
            continue
        best = _value_at(text, found.end(), value)
        if best is None:
            return None
        where, form = best
        between = text[found.end() : where]
        quoted = form[:1] in "\"'" and isinstance(value, str)
        pairs.append(
            Pair(text[at : found.start()], key, between, form, quoted, isinstance(value, str))
        )
        at = where + len(form)
    return Pairs(tuple(pairs), at, text[at : at + _NEAR]) if pairs else None


def _value_at(text: str, at: int, value: Any) -> tuple[int, str] | None:
    """(where, as written) of the first place near `at` where `value` is written in one of its
    `written_forms` with only markers between `at` and it (a form inside a tag's attribute,
    ``string="false"``, is not the value), or None."""
    places = []
    for form in written_forms(value):
        where = text.find(form, at, at + _NEAR + len(form))
        while where >= 0:
            places.append((where, form))
            where = text.find(form, where + 1, at + _NEAR + len(form))
    for where, form in sorted(places, key=lambda place: place[0]):
        if not regex.search(r"\w", _BRACKETED.sub("", text[at:where])):
            return where, form
    return None


def _nested(text: str, at: int, value: Any) -> tuple[str, str, int] | None:
    """An object value written as tags inside its key's tag (``<p=a><p=b>1</p></p>``): (the
    text between the key and the inner tags, the value as written, where it ends, its inner
    tags' last closer included), or None."""
    if not isinstance(value, dict) or not value:
        return None
    return _inner_tags(text, at, at, read_pairs(text, at, value))


def _inner_tags(
    text: str, key_end: int, start: int, inner: Pairs | None
) -> tuple[str, str, int] | None:
    """The pairs `inner` read from `start` as an object's tags inside its key's tag, the key
    ending at `key_end`: (the text between the key and the first inner tag, the inner tags as
    written, where they end, the last inner closer included), or None when no tag opens the
    first inner pair or no closer follows the last."""
    if inner is None:
        return None
    first = inner.pairs[0].before
    opening = max(first.rfind("<"), first.rfind("["))
    closer = _CLOSER.match(text, inner.end)
    if opening < 0 or closer is None:
        return None
    start += opening
    return text[key_end:start], text[start : closer.end()], closer.end()


# A closing tag, after a value.
_CLOSER = regex.compile(r"\s*(?:</[^<>\s]*>|\[/[^\[\]\s]*\])")
# A marker between a key and its value (``</k><v>``), and attributes in a tag
# (``" string="true">``): words inside brackets or attribute values are not prose.
_BRACKETED = regex.compile(r"<[^<>\s]*>|\[[^\[\]\s]*\]|[\w\-]+=\"[^\"<>]*\"")


def _key(key: str) -> regex.Pattern:
    return regex.compile(rf"(?<![\w\-]){regex.escape(key)}(?![\w\-])")


def _in_written_order(text: str, start: int, arguments: dict) -> list[tuple[str, Any]]:
    """The arguments in the order their keys first stand in `text` after `start` (a model may
    write them in another order than the message lists them)."""

    def where(item: tuple[str, Any]) -> int:
        found = _key(item[0]).search(text, start)
        return found.start() if found else len(text)

    return sorted(arguments.items(), key=where)


def _read_parameters(text: str, start: int, parameters: dict) -> Pairs | None:
    at, pairs = start, []
    names = "|".join(regex.escape(name) for name in sorted(parameters, key=len, reverse=True))
    if not names:
        return None
    # Between a key and its value: markers, a little punctuation, and attributes of a tag
    # (``" string="true">``).
    key_pattern = regex.compile(
        rf"(?<![\w\-])({names})(?![\w\-])"
        rf"((?:<[^<>\s]*>|\[[^\[\]\s]*\]|[\"']?[^\w\s\"'<\[]|[\"'](?=\s)"
        rf"|\s+[\w\-]+=\"[\w\-]*\"){{1,4}}\s*)"
    )
    # A bare value runs to a comma, a closing bracket or a tag; a parenthesis it opens it also
    # closes (``print('hi')``), so the value's own closing parenthesis does not end it.
    group = r"\([^()<\n]*\)|\((?![^()<\n]*\))"
    value_pattern = regex.compile(
        r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'"
        rf"|(?:{group}|[^\s,;}}\])<(])(?:(?:{group}|[^,;}}\])<(\n])*(?:{group}|[^\s,;}}\])<(]))?"
    )
    while True:
        found = key_pattern.search(text, at, min(len(text), at + _NEAR))
        if found is not None and pairs and _closes(text, found, pairs[-1].key):
            # The previous value's closer names its key (``</city><days>``): the next key
            # follows it.
            found = key_pattern.search(text, found.end(1), min(len(text), at + _NEAR))
        if found is None or found.group(1) in {pair.key for pair in pairs}:
            break
        schema = parameters.get(found.group(1))
        inner = _nested_parameters(text, found, schema)
        if inner is not None:
            between, written, end = inner
            before = text[at : found.start()]
            pairs.append(Pair(before, found.group(1), between, written, False, False, True))
            at = end
            continue
        value = value_pattern.match(text, found.end())
        if value is None:
            break
        pairs.append(
            Pair(
                text[at : found.start()],
                found.group(1),
                found.group(2),
                value.group(),
                value.group()[:1] in "\"'",
                # Whether the tool's schema makes it a string (a tag's attribute may say so).
                not isinstance(schema, dict) or schema.get("type", "string") == "string",
            )
        )
        at = value.end()
    return Pairs(tuple(pairs), at, text[at : at + _NEAR]) if pairs else None


def _closes(text: str, key: regex.Match, previous: str) -> bool:
    """Whether the key `key` matched is `previous` written in a closer (``</city>``, ``[/city]``)."""
    return key.group(1) == previous and text[key.start() - 2 : key.start()] in ("</", "[/")


# Tags ahead: an object's inner tags may start here.
_TAG_AHEAD = regex.compile(r"\s*[<\[]")
_TAG_INSIDE = regex.compile(r"(?<=.)[<\[]", regex.DOTALL)


def _nested_parameters(text: str, key: regex.Match, schema: Any) -> tuple[str, str, int] | None:
    """An object parameter (`schema` with properties) written as tags inside its key's tag
    (``<p=stay><p=nights>2</p></p>``), its key matched by `key`: (the text between the key and
    the inner tags, the value as written, where it ends, the inner tags' last closer included),
    or None."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return None
    # The inner tags start inside what the key's match took after it (``=stay><arg=nights>``:
    # a tag with no blank looks like a marker between key and value), or right after it.
    inside = _TAG_INSIDE.search(key.group(2))
    if inside is not None:
        start = key.start(2) + inside.start()
    elif _TAG_AHEAD.match(text, key.end()):
        start = key.end()
    else:
        return None
    return _inner_tags(text, key.end(1), start, _read_parameters(text, start, schema["properties"]))


def common_prefix(texts: list[str]) -> str:
    """What every text starts with, less a marker it only starts (an opening bracket with no
    closing one after it: ``<|`` of ``<|a|>`` and ``<|b|>``)."""
    first = min(texts, key=len) if texts else ""
    size = 0
    while size < len(first) and all(text[size] == first[size] for text in texts):
        size += 1
    found = first[:size]
    cut = regex.search(r"[<\[][^>\]]*$", found)
    return found[: cut.start()] if cut else found


def common_suffix(texts: list[str]) -> str:
    """What every text ends with, less a marker it only ends (a closing bracket with no opening
    one before it: ``m|>`` of ``<|nqm|>`` and ``<|ctm|>``)."""
    first = min(texts, key=len) if texts else ""
    size = 0
    while size < len(first) and all(text[-1 - size] == first[-1 - size] for text in texts):
        size += 1
    found = first[len(first) - size :]
    cut = regex.match(r"^[^<\[]*[>\]]", found)
    if cut is None or not any(_left_open(text[: len(text) - size]) for text in texts):
        return found  # no marker opens before it: ``>>>`` is a marker of its own
    return found[cut.end() :]


def _left_open(text: str) -> bool:
    """Whether `text` ends inside a bracket it opened (``<|nq`` of ``<|nqm|>``)."""
    return max(text.rfind("<"), text.rfind("[")) > max(text.rfind(">"), text.rfind("]"))


def loose(text: str, tags_apart: bool = False) -> str:
    """`text` as a pattern whose blanks may be any blanks (or none); with `tags_apart`, blanks
    may also stand between two tags written side by side (``</k><v>``: a model puts a line
    break there that the chat template does not)."""
    pieces = regex.split(r"(\s+|(?<=[>\]])(?=[<\[]))" if tags_apart else r"(\s+)", text)
    # The split alternates text (even places) and the blanks or joints between (odd places).
    return "".join(
        r"\s*" if at % 2 else pattern_literal(piece)
        for at, piece in enumerate(pieces)
        if piece or at % 2
    )


# Stands for the value's own key in `PairSyntax.value_after` (``</KEY>``): never in an output.
KEY_MARK = "\x00"


@dataclass(frozen=True)
class PairSyntax:
    """How one format writes its pairs: text before each key, between key and value, after each
    value, between pairs; and whether string values are quoted (JSON strings)."""

    key_before: str
    between: str
    value_after: str
    separator: str
    quoted: bool
    # A pattern of `between` where it differs from pair to pair in one word (an attribute's
    # value, group ``kind``), and {that word: whether the values it goes with are strings}.
    between_pattern: str = ""
    kinds: tuple[tuple[str, bool], ...] = ()
    # Some value is an object written as pairs inside its pair.
    nested: bool = False
    # The text before and after the word of `kinds` in `between`, and the words written where
    # the value is an object.
    kind_frame: tuple[str, str] = ("", "")
    nested_kinds: tuple[str, ...] = ()
    # Every value sits in its tags with at most one line break on each side: that line break
    # is the markup's, any other blank the value's (values are written exactly as shown).
    edged: bool = False
    # Some string value is written between single quotes (Python style, `city='Paris'`): the
    # quotes are the syntax's, not the value's.
    single_quoted: bool = False

    def after_pattern(self, key: str | None = None) -> str:
        """A pattern for the text after each value (stripped): where it writes the value's own
        key (``</city>``, `KEY_MARK`), that `key` when given, else a back-reference to the
        tag pattern's ``key`` group."""
        own = pattern_literal(key) if key is not None else "(?P=key)"
        return own.join(loose(piece) for piece in self.value_after.strip().split(KEY_MARK))

    def content(self) -> dict:
        """The `xml-inline` content keys that read the pairs back (`content`, `content_args`)."""
        if (
            self.nested
            and self.key_before.strip()
            and self.value_after.strip()
            and KEY_MARK not in self.value_after
        ):
            return {"content": "xml-inline", "content_args": self._nested_args(_NESTING)}
        key = r"(?P<key>[A-Za-z_][\w.\-]*)"
        if self.value_after.strip():
            end = f"(?=\\s*{self.after_pattern()})"
        elif self.separator.strip():
            end = f"(?=\\s*(?:{loose(self.separator.strip())}|$))"
        elif self.separator:
            end = r"(?=\s*\n|\s*$)"
        else:  # no call shows two pairs: a comma, a semicolon or a new line may part them
            end = r"(?=\s*(?:[,;\n]|$))"
        value = (
            r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|" + bracketed(_BRACKET_DEPTH) + "|.*?"
            if self.quoted
            else r".*?"
        )
        between = self.between_pattern or loose(self.between, tags_apart=True)
        if self.value_after.strip():
            end = r"\s*" + self.after_pattern()
            if self.edged and self.between.strip():
                between = (
                    self.between_pattern.removesuffix(r"\s*")
                    if self.between_pattern
                    else loose(self.between.rstrip(), tags_apart=True)
                ) + r"\n?"
                end = r"\n?" + self.after_pattern()
        pattern = loose(self.key_before) + key + between + f"(?P<value>{value}){end}"
        args: dict = {"tag_pattern": pattern}
        if self.quoted:
            quotes = {"string_delims": [["'", "'"]]} if self.single_quoted else {}
            args["value_parser"] = {"name": "json", "args": {"allow_non_json": True, **quotes}}
        if self.kinds:
            # The tag says how to read its value: a word that goes with strings keeps the
            # text; one that goes with other values, or that no example shows, reads JSON.
            args["value_parser_by"] = {
                "group": "kind",
                "parsers": {word: None if text else dict(_JSON_VALUE) for word, text in self.kinds},
            }
            args["value_parser"] = dict(_JSON_VALUE)
        return {"content": "xml-inline", "content_args": args}

    def _nested_args(self, depth: int) -> dict:
        """`xml-inline` arguments for pairs whose values may be objects written as pairs of the
        same syntax: the tag pattern matches a tag with its inner tags balanced (a recursive
        pattern); a value that starts with a tag (group ``nested``) is read by the same
        arguments again, `depth` levels deep; other values are read as JSON where they are
        JSON (the field's values are final, so the tool's schema does not cast them)."""
        opening, closing = loose(self.key_before.strip()), loose(self.value_after.strip())
        name = r"[A-Za-z_][\w.\-]*"
        between = self.between_pattern or loose(self.between)
        body = rf"(?:(?!{opening}|{closing}).|(?&inner))"
        # Inside the recursion no group captures: an inner tag's word would be the outer's.
        plain = between.replace("(?P<kind>", "(?:")
        pattern = (
            rf"{opening}(?P<key>{name}){between}"
            rf"(?P<value>(?P<nested>(?=\s*{opening}))?{body}*?)\s*{closing}"
            rf"(?(DEFINE)(?P<inner>{opening}{name}{plain}{body}*{closing}))"
        )
        args: dict = {"tag_pattern": pattern, "value_parser": dict(_JSON_VALUE)}
        inner = {"name": "xml-inline", "args": self._nested_args(depth - 1)} if depth > 0 else None
        if self.kinds:
            # One group says both: the kind's word, and, with the frame's next character
            # taken too, that tags follow (the value is an object).
            head, tail = (loose(part) for part in self.kind_frame)
            first, rest = loose(self.kind_frame[1][:1]), loose(self.kind_frame[1][1:])
            word = r"[\w\-]+"
            kind = (
                rf"{head}(?:(?P<kind>{word}{first}){rest}(?=\s*{opening})|(?P<kind>{word}){tail})"
            )
            args["tag_pattern"] = pattern.replace(between, kind, 1)
            parsers = {word: None if text else dict(_JSON_VALUE) for word, text in self.kinds}
            if inner is not None:
                words = {word for word, _ in self.kinds} | set(self.nested_kinds)
                parsers |= {word + self.kind_frame[1][:1]: inner for word in sorted(words)}
            args["value_parser_by"] = {"group": "kind", "parsers": parsers}
        elif inner is not None:
            args["value_parser_by"] = {"group": "nested", "parsers": {"": inner}}
        return args


# How deep objects written as pairs inside pairs are read (the template spells each level).
_NESTING = 3
# How deep the brackets of a list or an object written as a value may nest (`bracketed`).
_BRACKET_DEPTH = 6


def bracketed(depth: int) -> str:
    """A pattern for a list or an object written as a value (JSON or Python style), whose
    brackets nest up to `depth` levels deep; a bracket inside a quoted string is text.

    The template language's patterns are Python regular expressions without recursion, so the
    nesting is written out, one level inside the other (the pattern grows linearly with
    `depth`). An opening bracket of either kind closes with either: a value the model wrote
    with mismatched brackets is still read up to where its nesting ends. Each alternative
    starts with its own characters (a quote, a bracket, anything else), so matching never
    backtracks between them."""
    strings = r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'"
    group = rf"[\[{{](?:{strings}|[^\[\]{{}}\"'])*[\]}}]"  # the innermost: no bracket inside
    for _ in range(depth - 1):
        group = rf"[\[{{](?:{strings}|[^\[\]{{}}\"']|{group})*[\]}}]"
    return group


# A value read as JSON where it is JSON, else kept as text.
_JSON_VALUE = {"name": "json", "args": {"allow_non_json": True}}


def _tag_around(firsts: list[str], afters: list[str]) -> tuple[str, str]:
    """With one pair a call, where a tag wraps each pair: (the tag's start before the key, its
    closer after the value), when every value is followed by the same closing tag (``</p>``,
    ``[/p]``) whose opening (``<p``) stands before every key; else ("", "")."""
    closers = {regex.match(r"\s*(</([^<>\s/]+)>|\[/([^\[\]\s/]+)\])", after) for after in afters}
    if None in closers or len({found.group(1) for found in closers}) != 1:
        return "", ""
    found = closers.pop()
    opening = ("<" + found.group(2)) if found.group(2) else ("[" + found.group(3))
    starts = [first.rfind(opening) for first in firsts]
    if min(starts) < 0:
        return "", ""
    befores = {first[at:] for first, at in zip(firsts, starts)}
    return (befores.pop(), found.group(1)) if len(befores) == 1 else ("", "")


def pair_syntax(readings: list[Pairs]) -> tuple[PairSyntax, list[str]]:
    """The pair syntax common to `readings` (every call's pairs, over every example), and the
    text each call writes before its first key (what opens its arguments: ``{``, ``(``)."""
    firsts = [reading.pairs[0].before for reading in readings]
    rests = [pair.before for reading in readings for pair in reading.pairs[1:]]
    key_before = common_suffix(firsts + rests) if rests else ""
    if rests and not key_before.strip():
        key_before = ""
    value_after, separator = "", ""
    if rests:
        middle = (
            _closer_naming_its_key(readings, key_before)
            or rests[0][: len(rests[0]) - len(key_before)]
        )
        stripped = middle.strip()
        if len(stripped) >= 2 and regex.search(r"[</\w]", stripped):
            value_after, separator = stripped, middle[len(middle.rstrip()) :] or "\n"
        else:
            separator = middle
    if not rests:
        key_before, value_after = _tag_around(firsts, [reading.after for reading in readings])
    every = [pair for reading in readings for pair in reading.pairs]
    between = readings[0].pairs[0].between
    between_pattern, kinds, kind_frame = _kinds(every)
    quoted = any(pair.quoted for pair in every) or any(
        pair.value[:1] in "[{" and not pair.nested for pair in every
    )
    nested = any(pair.nested for pair in every)
    if not rests and nested:
        # One pair a call, an object: its tags' opening and closer are its inner tags'.
        inner = next(pair for pair in every if pair.nested)
        found = _TAG_START.match(inner.value)
        closer = regex.search(r"(?:</[^<>\s]*>|\[/[^\[\]\s]*\])$", inner.value)
        if found and closer:
            key_before, value_after = found.group(), closer.group()
    opens = [first[: len(first) - len(key_before)] for first in firsts]
    syntax = PairSyntax(
        key_before,
        between,
        value_after,
        separator,
        quoted,
        between_pattern,
        kinds,
        nested,
        kind_frame,
        tuple(
            dict.fromkeys(
                found.group(1)
                for pair in every
                if pair.nested
                for found in [_ATTRIBUTE.search(pair.between)]
                if found
            )
        ),
        _edged(readings),
        any(pair.quoted and pair.value.startswith("'") for pair in every),
    )
    return syntax, opens


def _closer_naming_its_key(readings: list[Pairs], key_before: str) -> str:
    """The text between a value and the next key's `key_before` when it writes the value's own
    key (``</city>`` after ``<city>Paris``), the same after every value but for that key: with
    `KEY_MARK` for the key; else ""."""
    found = set()
    for reading in readings:
        for pair, following in zip(reading.pairs, reading.pairs[1:]):
            middle = following.before[: len(following.before) - len(key_before)]
            if not regex.search(rf"(?<![\w.\-]){regex.escape(pair.key)}(?![\w.\-])", middle):
                return ""
            found.add(middle.replace(pair.key, KEY_MARK, 1))
    return found.pop() if len(found) == 1 else ""


def _edged(readings: list[Pairs]) -> bool:
    """Whether every value of `readings` has at most one line break, and no other blank, between
    it and the text before it and between it and the text after it."""
    gaps = []
    for reading in readings:
        for pair, following in zip(reading.pairs, [*reading.pairs[1:], None]):
            if pair.nested:
                continue
            after = following.before if following is not None else reading.after
            gaps.append(pair.between[len(pair.between.rstrip()) :])
            gaps.append(after[: len(after) - len(after.lstrip())])
    return bool(gaps) and all(gap in ("", "\n") for gap in gaps)


# The start of a tag up to where its key stands (``<arg=``, ``<arg name="``).
_TAG_START = regex.compile(r"[<\[][^<>\[\]\s=\"]*(?:=|\s+[\w\-]+=\")")


def _kinds(
    pairs: list[Pair],
) -> tuple[str, tuple[tuple[str, bool], ...], tuple[str, str]]:
    """(a pattern of the text between key and value, with group ``kind`` for the value of the
    one attribute it writes (``string="true"``), any word; {each word seen: whether its values
    are strings}; the text before and after the word) when every pair writes that attribute
    there, else ("", (), ("", ""))."""
    words: dict[str, set[bool]] = {}
    frames = set()
    for pair in pairs:
        if pair.nested:
            continue
        found = list(_ATTRIBUTE.finditer(pair.between))
        if len(found) != 1:
            return "", (), ("", "")
        at = found[0].span(1)
        frames.add((pair.between[: at[0]], pair.between[at[1] :]))
        words.setdefault(found[0].group(1), set()).add(pair.text)
    if len(frames) != 1 or any(len(kinds) > 1 for kinds in words.values()):
        return "", (), ("", "")
    head, tail = frames.pop()
    pattern = loose(head) + r"(?P<kind>[\w\-]+)" + loose(tail)
    kinds = tuple((word, kinds.pop()) for word, kinds in sorted(words.items()))
    return pattern, kinds, (head, tail)


# An attribute whose value is a word (``string="true"``), after the key.
_ATTRIBUTE = regex.compile(r"[\w\-]+=\"([\w\-]+)\"")
