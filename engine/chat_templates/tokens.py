"""Template inference, the tokenizer: its added and special tokens as evidence of markers.

A model's markers are usually tokens of their own. When a tokenizer is given (`--model`, the
app's hub id, `infer_template(tokenizer=...)`), its added and special tokens are read, and
those whose names pair (``<x>`` and ``</x>``, ``<|x_start|>`` and ``<|x_end|>``: see
`engine.chat_templates.markup.closes`) are paired as an open and a close. A pair proposes
what no render shows: reasoning markers (kept only when the chat template confirms them, by
dropping an earlier turn's text up to the close), and otherwise it is said, with the pairs
no render writes, so that an author knows which markers example outputs would settle.
"""

from __future__ import annotations

from typing import Any

from .markup import MARKUP_TOKEN, closes
from .parts import Parts
from .probes import Render
from .reasoning import propose_reasoning
from .render import load_tokenizer as _load_tokenizer


def load_tokenizer(model: str) -> Any:
    """The tokenizer of `model` (a folder or hub id; tokenizer files only).

    Raises:
        ModelLoadError: it cannot be loaded (see `engine.chat_templates.render.load_tokenizer`).
        ImportError: transformers is not installed.
    """
    return _load_tokenizer(model)[0]


def marker_tokens(tokenizer: Any) -> list[str]:
    """The tokenizer's added and special tokens that read as markup, in vocabulary order."""
    found: list[str] = []
    added = getattr(tokenizer, "get_added_vocab", None)
    if callable(added):
        vocabulary = added()
        found += sorted(vocabulary, key=lambda token: vocabulary[token])
    found += list(getattr(tokenizer, "all_special_tokens", None) or [])
    return [
        token
        for token in dict.fromkeys(found)
        if isinstance(token, str) and MARKUP_TOKEN.fullmatch(token)
    ]


def token_pairs(tokens: list[str]) -> list[tuple[str, str]]:
    """(open, close) for every two tokens whose names pair: the closing form is the close
    (``</x>``); where either reads as the other's close (``<|x_start|>``, ``<|x_end|>``), the one
    the vocabulary holds first is the open."""
    found = []
    for i, first in enumerate(tokens):
        for second in tokens[i + 1 :]:
            if closes(first, second):
                found.append((first, second))
            elif closes(second, first):
                found.append((second, first))
    return found


def propose_from_tokens(parts: Parts, tokenizer: Any) -> None:
    """Reasoning markers from the tokenizer's paired tokens where no render shows reasoning, kept
    when the chat template confirms them."""
    tokens = marker_tokens(tokenizer)
    evidence = (Render("the tokenizer's added and special tokens", "\n".join(tokens)),)
    for opener, closer in token_pairs(tokens):
        if propose_reasoning(
            parts,
            opener,
            "the tokenizer pairs it with its closer, and the chat template drops an earlier "
            "turn's text up to the closer",
            evidence,
            closer=closer,
            source="the tokenizer pairs it with the opener",
        ):
            return


def note_tokens(parts: Parts, tokenizer: Any, rendered: str) -> None:
    """Say the tokenizer's paired tokens that no render writes and no field uses."""
    known = [marker for marker in (*parts.closes, *_field_markers(parts)) if marker]
    unused = [
        (opener, closer)
        for opener, closer in token_pairs(marker_tokens(tokenizer))
        if opener not in rendered
        and closer not in rendered
        and not any(opener in each or closer in each for each in known)
    ]
    if unused:
        shown = ", ".join(f"{opener} … {closer}" for opener, closer in unused[:6])
        parts.book.notes.append(
            f"the tokenizer pairs {shown}, which no render writes: if the model writes them "
            "(calls, reasoning), example outputs that show them let inference learn them"
        )


def _field_markers(parts: Parts) -> list[str]:
    found = []
    if parts.reasoning is not None:
        found += [parts.reasoning.open, parts.reasoning.close]
    if parts.calls is not None:
        found += [str(value) for value in parts.calls.field.values() if isinstance(value, str)]
    return found
