"""Hugging Face tokenizer integration: templates stored on tokenizers, token ids in, messages out.

A response template lives on a tokenizer as the attribute `response_template`
and is saved inside `tokenizer_config.json` by `save_pretrained` (transformers
5.24 reads and writes that key). Token ids are always decoded with special
tokens kept, since delimiters such as `<tool_call>` are often special tokens.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from .inputs import prefix_text
from .parser import ResponseParser
from .template import ResponseTemplate, load_template

REPLACEMENT_CHARACTER = "\ufffd"


def attach_response_template(tokenizer: Any, template: dict | str) -> Any:
    """Validate `template` and store it as `tokenizer.response_template`; return the tokenizer.

    `tokenizer.save_pretrained(path)` then writes it into `tokenizer_config.json`, and
    `AutoTokenizer.from_pretrained(path).response_template` gives it back.

    Raises:
        TemplateError: the template is invalid (nothing is attached).
    """
    loaded = load_template(template)
    tokenizer.response_template = copy.deepcopy(loaded.source)
    return tokenizer


def template_of(
    tokenizer: Any, template: dict | str | ResponseTemplate | None = None
) -> dict | str | ResponseTemplate:
    """`template` if given, else the tokenizer's `response_template`.

    Raises:
        ValueError: neither is set; says how to attach one.
    """
    if template is not None:
        return template
    found = getattr(tokenizer, "response_template", None)
    if found is None:
        name = getattr(tokenizer, "name_or_path", "") or type(tokenizer).__name__
        raise ValueError(
            f"tokenizer {name!r} has no response_template; pass a template, or attach one with "
            "engine.attach_response_template(tokenizer, template) (templates/ has ready ones)"
        )
    return found


class IncrementalDecoder:
    """Turn a stream of token ids into text pieces without splitting a character.

    Byte-level tokenizers can split one character over several tokens; decoding such a
    token alone gives U+FFFD. The decoder keeps those ids pending until the character
    completes (at most `max_pending` tokens, after which the text is released as is, so
    genuinely invalid bytes still come through as U+FFFD). A few earlier ids are kept as
    context because some tokenizers decode a token differently at the start of a text;
    `context` seeds them (for a generation, the prompt's last ids).
    """

    def __init__(
        self,
        tokenizer: Any,
        *,
        context: Iterable[int] = (),
        context_tokens: int = 4,
        max_pending: int = 8,
    ):
        self.tokenizer = tokenizer
        self._context: list[int] = (
            [int(i) for i in context][-context_tokens:] if context_tokens else []
        )
        self._pending: list[int] = []
        self._context_tokens = context_tokens
        self._max_pending = max_pending

    def _decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=False) if ids else ""

    def push(self, ids: Iterable[int]) -> str:
        """Add token ids; return the text they complete ("" while a character is incomplete)."""
        self._pending.extend(int(i) for i in ids)
        if not self._pending:
            return ""
        before = self._decode(self._context)
        after = self._decode(self._context + self._pending)
        if after.endswith(REPLACEMENT_CHARACTER) and len(self._pending) < self._max_pending:
            return ""
        piece = after[len(before) :] if after.startswith(before) else self._decode(self._pending)
        self._context = (self._context + self._pending)[-self._context_tokens :]
        self._pending = []
        return piece

    def flush(self) -> str:
        """Release whatever is pending (U+FFFD for bytes that never completed a character)."""
        piece = self._decode(self._pending)
        self._pending = []
        return piece


class TokenResponseParser(ResponseParser):
    """A `ResponseParser` that also takes token ids, decoded with the tokenizer.

    `feed(text)` works as in `ResponseParser`; `feed_ids(ids)` decodes ids incrementally
    (see `IncrementalDecoder`) and feeds the text. `finalize()` flushes pending ids first.
    """

    def __init__(self, tokenizer: Any, template: Any, prefix: str, **options: Any):
        super().__init__(template, prefix, **options)
        self.decoder = IncrementalDecoder(tokenizer)

    def feed_ids(self, ids: Iterable[int]) -> list[dict]:
        """Feed generated token ids; return the events they settle."""
        return self.feed(self.decoder.push(ids))

    def finalize(self) -> tuple[dict, list[dict]]:
        """Flush pending ids, then end the stream as `ResponseParser.finalize` does."""
        events = self.feed(self.decoder.flush()) if not self._finalized else []
        message, final_events = super().finalize()
        return message, events + final_events


def get_response_parser(
    tokenizer: Any,
    response_template: dict | str | ResponseTemplate | None = None,
    *,
    prefix: Any = None,
    tools: list[dict | Callable] | None = None,
    regex_timeout: float | None = None,
    on_error: str = "raise",
    token_ids: bool = False,
) -> TokenResponseParser | ResponseParser:
    """A streaming parser for one generation of the model behind `tokenizer`.

    Args:
        tokenizer: a Hugging Face tokenizer.
        response_template: the template; None takes `tokenizer.response_template`.
        prefix: REQUIRED. The prompt, as text or as token ids (one sequence); ``""``/``[]`` opt out.
        tools, regex_timeout, on_error: as for `ResponseParser`.
        token_ids: False (the default): a `TokenResponseParser`, which takes text (`feed`) or ids
            (`feed_ids`) and reads every `<tool_call>` the same however it was written. True:
            a `ResponseParser` given the tokenizer, as transformers 5.25's: it reads ids only
            (`feed(ids)`), and a control token is a delimiter only when generated as its id
            (see `engine.token_ids`).

    Raises:
        ValueError: no template on the tokenizer; no prefix; a batch given as prefix.
        TemplateError: the template is invalid.
    """
    template = load_template(template_of(tokenizer, response_template))
    if token_ids:
        return ResponseParser(
            template,
            prefix,
            tools=tools,
            regex_timeout=regex_timeout,
            on_error=on_error,
            tokenizer=tokenizer,
        )
    text = prefix_text(prefix, tokenizer)
    return TokenResponseParser(
        tokenizer, template, text, tools=tools, regex_timeout=regex_timeout, on_error=on_error
    )
