"""What a visitor may read of a server-side message: no absolute server path, no Python exception
type, and never more than `SHOWN_CHARS` characters, built in linear time.

Messages come from many places (the engine, transformers, the model loader, the
worker processes). The server log keeps them whole; `redact` is applied where
a message is shown (the status line, the API's `error`, the panels), so a path
or a type name that slipped through the code that wrote it never reaches a
visitor. Not even the engine's own errors keep their names: where the page
knows an error's type, it says what failed in words instead (`in_words`:
"The output does not parse: ..." for a `ResponseParseError`).

A message can quote what a visitor sent (an unknown key of 60,000 characters), so
`redact` reads only its first `SHOWN_CHARS` characters and finds type names with
one left-to-right pass over dotted words (`_type_spans`): its cost is linear in a
bounded prefix, whatever the text. `clip` shortens a visitor's text quoted inside a
message the same way for every message that quotes one.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What failed, in words, for each of the engine's documented errors: the headline a message of
# one starts with on the page, where the engine's own messages name the type.
FAILURE_HEADLINES = {
    "ResponseParseError": "The output does not parse",
    "UndefinedPlaceholderError": "The transform fails",
    "PatternTimeoutError": "A pattern took too long",
    "ParseDeadlineError": "The parse took too long",
    "ParseLimitError": "The output is too large to parse",
    "TemplateError": "The template is not valid",
}
# The longest message shown (characters); the rest is named by its length.
SHOWN_CHARS = 2_000
# The longest piece of a visitor's input a message quotes (characters).
QUOTED_CHARS = 80
# An absolute path on a POSIX server: a top-level folder of the usual ones, and what follows it.
# Linear: it can only start at "~" or "/", and a match consumes what it read.
_PATH = re.compile(
    r"(?<![\w<>/.~-])(?:~|/(?:root|home|tmp|work|usr|etc|var|opt|data|mnt|srv|proc|sys|dev|app|Users|private|snap|run|lib|bin))"
    r"(?:/[^\s'\"`<>,;)\]]*)?"
)
# A dotted word ("jinja2.exceptions.TemplateSyntaxError"): found once each, left to right.
_DOTTED = re.compile(r"\w+(?:\.\w+)*")
_TYPE_NAME = re.compile(r"[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning)")
_MODULE_NAME = re.compile(r"[a-z_]\w*")


def clip(text: object, limit: int = QUOTED_CHARS, quoted: bool = True) -> str:
    """`text` (a visitor's input quoted in a message), as `repr` shows it when `quoted`, cut to
    `limit` characters with how many there were: ``'a.a.a.'… (64,000 characters)``."""
    text = str(text)
    shown = text if len(text) <= limit else text[:limit]
    shown = repr(shown) if quoted else shown
    return shown if len(text) <= limit else f"{shown}… ({len(text):,} characters)"


def near_miss(word: str, choices, cutoff: float = 0.6) -> str | None:
    """The choice `word` was most likely meant to be (difflib's ratio at least `cutoff`), or None.
    A word over twice as long as the longest choice is near none of them (the ratio cannot reach
    0.6) and is not compared, so the search costs the choices' length, not the word's."""
    choices = list(choices)
    longest = max((len(choice) for choice in choices), default=0)
    if not choices or len(word) > 2 * longest + 2:
        return None
    found = difflib.get_close_matches(word, choices, n=1, cutoff=cutoff)
    return found[0] if found else None


def in_words(type_name: str, message: object) -> str:
    """`message`, of an error whose type is named `type_name`, as the page shows it: after what
    failed in words (`FAILURE_HEADLINES`: "The output does not parse: <message>") for one of the
    engine's errors; `message` alone for any other (its type means nothing to a visitor)."""
    headline = FAILURE_HEADLINES.get(type_name)
    return f"{headline}: {message}" if headline else str(message)


def _type_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each Python type name in `text` with its module path before it and the
    ": " after it. One pass over the dotted words."""
    spans = []
    for word in _DOTTED.finditer(text):
        parts = word.group(0).split(".")
        starts, at = [], word.start()
        for part in parts:
            starts.append(at)
            at += len(part) + 1
        first_module = None  # index of the first of the module names running up to here
        for index, part in enumerate(parts):
            if _TYPE_NAME.fullmatch(part):
                start = starts[first_module if first_module is not None else index]
                end = starts[index] + len(part)
                if index == len(parts) - 1 and text.startswith(":", end):
                    end += 1
                    while end < len(text) and text[end].isspace():
                        end += 1
                spans.append((start, end))
                first_module = None
            elif _MODULE_NAME.fullmatch(part):
                first_module = index if first_module is None else first_module
            else:
                first_module = None
    return spans


def _without_types(text: str) -> str:
    pieces, at = [], 0
    for start, end in _type_spans(text):
        pieces.append(text[at:start])
        at = end
    return "".join(pieces) + text[at:]


def redact(message: object) -> str:
    """`message` with the repository's own paths made relative, any other absolute path
    replaced by "(a server path)", and Python exception type names removed; a message longer
    than SHOWN_CHARS is cut there and says how long it was. Linear in SHOWN_CHARS."""
    whole = str(message)
    read = whole[: SHOWN_CHARS + len(str(ROOT)) + 1]
    text = read.replace(str(ROOT) + "/", "").replace(str(ROOT), ".")
    cut = len(text) > SHOWN_CHARS or len(whole) > len(read)
    text = text[:SHOWN_CHARS]
    text = _PATH.sub("(a server path)", text)
    text = _without_types(text)
    if cut:
        text += f"… (cut: the message has {len(whole):,} characters)"
    return text[:1].upper() + text[1:] if text[:1].islower() and whole[:1].isupper() else text
