"""Lint against a tokenizer: delimiters that are not the control tokens a model generates.

Parsing token ids, a control token is a delimiter only when the model generated it as its
id (`engine.token_ids`). A template whose delimiter is token-shaped text that is not one of
the tokenizer's control tokens (`</tool_call >` where the tokenizer has `</tool_call>`) then
never matches what the model writes: the model writes the control token, whose text differs,
and the delimiter matches only the same text spelled with ordinary tokens. And a control
token that the chat template writes but no delimiter names lands, when the model generates
it, in whatever region is open.

`lint_tokenizer` returns `engine.authoring.lint.Diagnostic`s for both.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from ..template import ResponseTemplate, load_template
from ..token_ids import chat_template_literals, control_tokens
from .lint import Diagnostic

# Delimiter text shaped like a markup token: `<name>`, `</name >`, `<|name|>`, `[NAME]`.
TOKEN_SHAPED = re.compile(r"<[^<>\s][^<>\n]{0,40}>|\[[A-Z_][A-Z_ ]{1,40}\]")
# A named group's opening in a pattern (`(?P<name>`, `(?<name>`), which is no delimiter text.
_GROUP_NAME = re.compile(r"\(\?P?<(?![=!])[^>]*>")
# How alike a token-shaped delimiter and a control token must be to name it as the one meant.
NEAR_RATIO = 0.8


def _delimiter_texts(template: ResponseTemplate) -> list[tuple[str, str, bool]]:
    """``(path, text, literal)`` of every delimiter: each literal whole, and each pattern's
    source with its escapes and group names removed (searched for token-shaped pieces)."""
    found = []
    delimiters = [("start_anchor", template.start_anchor)]
    for spec in template.fields.values():
        for key in ("open", "close"):
            delimiters.append((f"{spec.path}.{key}", getattr(spec, key)))
    for path, delimiter in delimiters:
        if delimiter is None:
            continue
        if delimiter.literals is not None:
            found += [(path, literal, True) for literal in delimiter.literals]
        else:
            source = _GROUP_NAME.sub("(", delimiter.source).replace("\\", "")
            found.append((path, source, False))
    return found


def _spelled_with(tokenizer: Any, text: str) -> str:
    """How `text` tokenizes with ordinary tokens: ``N tokens: 'a' 'b' ...``."""
    ids = tokenizer.encode(text, add_special_tokens=False, split_special_tokens=True)
    pieces = " ".join(repr(tokenizer.decode([token_id])) for token_id in ids[:8])
    more = " …" if len(ids) > 8 else ""
    return f"{len(ids)} ordinary token{'s' if len(ids) != 1 else ''}: {pieces}{more}"


def lint_tokenizer(template: dict | str | ResponseTemplate, tokenizer: Any) -> list[Diagnostic]:
    """Check a template's delimiters against a tokenizer's control tokens (see the module).

    Args:
        template: the response template (dict, JSON text or loaded).
        tokenizer: a Hugging Face tokenizer (its added tokens and chat template are read).

    Returns:
        ``"warning"`` diagnostics, in template order: code ``delimiter-not-control-token``
        for a token-shaped delimiter text that is no control token but close to one (the
        suggestion names it); ``delimiter-split-across-tokens`` for one close to none, which
        the model can only write as several ordinary tokens; ``control-token-not-in-template``
        for a control token the chat template writes that no delimiter names.

    Raises:
        TemplateError: the template does not load (`lint` reports that one as a diagnostic).
    """
    loaded = load_template(template)
    spellings = sorted(set(control_tokens(tokenizer).values()), key=len, reverse=True)
    texts = _delimiter_texts(loaded)
    found: list[Diagnostic] = []
    seen: set[tuple[str, str]] = set()
    for path, text, literal in texts:
        for piece in TOKEN_SHAPED.findall(text):
            if piece in spellings or any(spelling in piece for spelling in spellings):
                continue
            if (path, piece) in seen:
                continue
            seen.add((path, piece))
            near = difflib.get_close_matches(piece, spellings, n=1, cutoff=NEAR_RATIO)
            squeezed = re.sub(r"\s+", "", piece)
            if squeezed in spellings:
                near = [squeezed]
            spelled = _spelled_with(tokenizer, piece)
            if near:
                found.append(
                    Diagnostic(
                        "warning",
                        "delimiter-not-control-token",
                        path,
                        f"`{piece}` is not a control token of this tokenizer ({spelled}); the "
                        f"model writes `{near[0]}` as one id, which this delimiter never "
                        f"matches, and `{piece}` only matches text written with ordinary tokens",
                        f"write `{near[0]}`" if literal else f"write `{near[0]}` in the pattern",
                    )
                )
            elif spellings:
                found.append(
                    Diagnostic(
                        "warning",
                        "delimiter-split-across-tokens",
                        path,
                        f"`{piece}` is no single token of this tokenizer ({spelled}): it is "
                        "matched in text, so a model that quotes it in prose or repeats it from "
                        "a tool result opens or closes a region there too",
                        "if the model has a control token for this delimiter, write that; a "
                        "delimiter that is plain text in this model's output is fine as it is",
                    )
                )
    chat_template = getattr(tokenizer, "chat_template", None)
    written = "\0".join(
        chat_template_literals(source)
        for source in (
            chat_template.values() if isinstance(chat_template, dict) else [chat_template or ""]
        )
        if source
    )
    named = "\0".join(text for _, text, _ in texts)
    for spelling in spellings:
        if spelling.isspace() or spelling not in written or spelling in named:
            continue
        found.append(
            Diagnostic(
                "warning",
                "control-token-not-in-template",
                "",
                f"the chat template writes the control token `{spelling}`, which no delimiter "
                "of this template names: when the model generates it, its text goes to "
                "whatever region is open",
                f"give `{spelling}` a delimiter (a field's open or close); leave it when only "
                "the prompt carries it (a tool result's wrapper, a system turn)",
            )
        )
    return found
