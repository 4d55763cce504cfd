"""Template inference, the tokenizer: its added and special tokens as evidence of markers.

A model's markers are usually tokens of their own. When a tokenizer is given (`--model`, the
app's hub id, `infer_template(tokenizer=...)`), its added and special tokens are read, and
those whose names pair (``<x>`` and ``</x>``, ``<|x_start|>`` and ``<|x_end|>``: see
`engine.chat_templates.markup.closes`; numbered tokens never pair) are paired as an open and a
close, in one pass over the vocabulary's markup tokens. A pair proposes
what no render shows: reasoning markers (kept only when the chat template confirms them, by
dropping an earlier turn's text up to the close), and otherwise it is said, with the pairs
no render writes, so that an author knows which markers example outputs would settle.
"""

from __future__ import annotations

from typing import Any

from .markup import MARKUP_TOKEN, marker_pairs
from .parts import Parts
from .probes import Render
from .reasoning import propose_from_pairs
from .render import load_tokenizer as _load_tokenizer

_READING = "reading the tokenizer's tokens"


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
    """(open, close) for the tokens whose names pair (`engine.chat_templates.markup.closes`:
    ``<x>`` and ``</x>``, ``<|x_start|>`` and ``<|x_end|>``), in vocabulary order of the open.
    Numbered tokens (``<|token_3|>``, ``<SPECIAL_7>``) never pair, and the cost
    is linear in the number of tokens (`marker_pairs`)."""
    return marker_pairs(tokens)


def propose_from_tokens(parts: Parts, tokenizer: Any) -> None:
    """Reasoning markers from the tokenizer's paired tokens where no render shows reasoning, kept
    when the chat template confirms them.

    Raises:
        InferenceTimeout: past the deadline.
    """
    parts.check_deadline(_READING)
    tokens = marker_tokens(tokenizer)
    evidence = (Render("the tokenizer's added and special tokens", "\n".join(tokens)),)
    propose_from_pairs(
        parts,
        token_pairs(tokens),
        evidence,
        "the tokenizer pairs it with its closer, and the chat template drops an earlier "
        "turn's text up to the closer",
        "the tokenizer pairs it with the opener",
    )


def note_tokens(parts: Parts, tokenizer: Any, written: set[str]) -> None:
    """Say the tokenizer's paired tokens that no render writes (`written`: the markup tokens of
    every render) and no field uses.

    Raises:
        InferenceTimeout: past the deadline.
    """
    parts.check_deadline(_READING)
    unused = parts.unwritten(token_pairs(marker_tokens(tokenizer)), written)
    if unused:
        shown = ", ".join(f"{opener} … {closer}" for opener, closer in unused[:6])
        parts.book.notes.append(
            f"the tokenizer pairs {shown}, which no render writes: if the model writes them "
            "(calls, reasoning), example outputs that show them let inference learn them"
        )
