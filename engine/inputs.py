"""What a parse is given, as text: the prefix, the generation, token ids and batches.

Every entry point (`ResponseParser`, `parse_response`, the tokenizer helpers,
`trace`) turns its inputs into text here, so they accept the same things and
fail with the same messages: text; token ids (a list of ints, or a 1-D numpy
array or torch tensor), decoded with a tokenizer with special tokens kept,
since delimiters are often special tokens; or, for `parse_response`, a batch
(a list of texts or of id lists, or a 2-D array). It also says where the
prefix is cut: after the last match of the start anchor.
"""

from __future__ import annotations

from typing import Any

from .template import ResponseTemplate

MISSING_PREFIX_MESSAGE = (
    "prefix is required: pass the prompt text (or token ids) that was sent to the model before this "
    "generation. Chat templates often pre-write part of the assistant message (an opening <think>, a "
    "channel header), and without it the parser cannot know which region the generation starts in. "
    'If the generation holds the whole message, pass prefix="" to opt out.'
)


def prefix_text(prefix: Any, tokenizer: Any = None) -> str:
    """The prefix of one generation as text: text as is, ``[]`` as ``""``, token ids decoded
    with `tokenizer` (without one, only text is accepted).

    Raises:
        ValueError: the prefix is None (says why it is required); not text and no tokenizer;
            a batch; anything else that is neither text nor token ids.
    """
    if prefix is None:
        raise ValueError(MISSING_PREFIX_MESSAGE)
    if isinstance(prefix, str):
        return prefix
    if tokenizer is None:
        if isinstance(prefix, (list, tuple)) and not prefix:
            return ""
        raise ValueError(
            f"prefix must be text here, got {type(prefix).__name__}; token ids need a tokenizer "
            "(engine.get_response_parser(tokenizer, prefix=ids))"
        )
    texts, batched = split_batch(prefix, "prefix", tokenizer)
    if batched:
        raise ValueError("prefix must be one sequence (text or a list of token ids), not a batch")
    return texts[0]


def batch_prefixes(prefix: Any, count: int, tokenizer: Any = None) -> list[str]:
    """One prefix text for each of `count` generations: `prefix` for all, or one per generation.

    Raises:
        ValueError: as `prefix_text`, or a batch of prefixes whose size is not `count`.
    """
    if prefix is None:
        raise ValueError(MISSING_PREFIX_MESSAGE)
    prefixes, batched = split_batch(prefix, "prefix", tokenizer)
    if not batched:
        return prefixes * count
    if len(prefixes) != count:
        raise ValueError(
            f"got {count} generation(s) but {len(prefixes)} prefixes; give one prefix, or one per generation"
        )
    return prefixes


def split_batch(value: Any, what: str, tokenizer: Any) -> tuple[list[str], bool]:
    """`value` (text, token ids, or a batch of them) as a list of texts, and whether it was a batch.

    `what` names the argument in error messages (``"text"``, ``"prefix"``). An empty list
    is an empty batch of generations, or the empty prefix.

    Raises:
        ValueError: token ids without a tokenizer; an array that is not 1-D or 2-D; a value
            that is neither text, token ids nor a batch of them.
    """
    if isinstance(value, str):
        return [value], False
    if hasattr(value, "ndim"):  # numpy array or torch tensor
        if value.ndim not in (1, 2):
            raise ValueError(
                f"{what}: arrays must be 1-D (one sequence) or 2-D (a batch), got {value.ndim}-D"
            )
        value = value.tolist()
        if not value or isinstance(value[0], int):
            return [_decode(value, what, tokenizer)], False
        return [_decode(ids, what, tokenizer) for ids in value], True
    if isinstance(value, (list, tuple)):
        if not value:
            return ([""], False) if what == "prefix" else ([], True)
        if all(isinstance(item, str) for item in value):
            return list(value), True
        if all(isinstance(item, int) for item in value):
            return [_decode(list(value), what, tokenizer)], False
        return [
            item if isinstance(item, str) else _decode(item, what, tokenizer) for item in value
        ], True
    raise ValueError(
        f"{what}: expected text, token ids or a batch of them, got {type(value).__name__}"
    )


def _decode(ids: Any, what: str, tokenizer: Any) -> str:
    if tokenizer is None:
        raise ValueError(f"{what}: got token ids but no tokenizer; pass tokenizer= to decode them")
    if hasattr(ids, "tolist"):
        ids = ids.tolist()
    return tokenizer.decode(list(ids), skip_special_tokens=False)


def prefix_cut(template: ResponseTemplate, prefix: str, timeout: float | None = None) -> int | None:
    """Where the stream starts in `prefix`: the end of the start anchor's last match, or None
    when the anchor does not occur (or the prefix is empty), and the whole prefix is replayed.

    Raises:
        PatternTimeoutError: the anchor pattern ran over `timeout`.
    """
    return template.start_anchor.last_match_end(prefix, timeout) if prefix else None
