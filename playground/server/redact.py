"""What a visitor may read of a server-side message: no absolute server path, no Python exception type.

Messages come from many places (the engine, transformers, the model loader, the
worker processes). The server log keeps them whole; `redact` is applied where
a message is shown (the status line, the API's `error`, the panels), so a path
or a type name that slipped through the code that wrote it never reaches a
visitor. The engine's own errors (`ResponseParseError`, `PatternTimeoutError`,
`TemplateError`...) keep their names: they are part of the format a template
author reads about.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The engine's documented errors, whose names stay.
ENGINE_ERRORS = (
    "ResponseParseError",
    "PatternTimeoutError",
    "ParseDeadlineError",
    "ParseLimitError",
    "UndefinedPlaceholderError",
    "TemplateError",
)
# An absolute path on a POSIX server: a top-level folder of the usual ones, and what follows it.
_PATH = re.compile(
    r"(?<![\w<>/.~-])(?:~|/(?:root|home|tmp|work|usr|etc|var|opt|data|mnt|srv|proc|sys|dev|app|Users|private|snap|run|lib|bin))"
    r"(?:/[^\s'\"`<>,;)\]]*)?"
)
# "TypeError: " and the like at the start of a message or of a clause.
_TYPE = re.compile(
    r"\b(?:[a-z_]\w*\.)*([A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning))(?::\s*|\b)"
)


def _type_name(found: re.Match) -> str:
    return found.group(0) if found.group(1) in ENGINE_ERRORS else ""


def redact(message: str) -> str:
    """`message` with the repository's own paths made relative, any other absolute path
    replaced by "(a server path)", and Python exception type names removed."""
    text = str(message).replace(str(ROOT) + "/", "").replace(str(ROOT), ".")
    text = _PATH.sub("(a server path)", text)
    text = _TYPE.sub(_type_name, text)
    return text[:1].upper() + text[1:] if text[:1].islower() and message[:1].isupper() else text
