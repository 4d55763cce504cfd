"""Generations fed as token ids, to this engine and to transformers 5.25's reference, compared.

The tokenizer is the demo model's (real, from samples/demo-model), widened with the delimiters
of other families' templates as added special tokens, so that their outputs encode to control
tokens as a real tokenizer of that family encodes them. Each generation is fed in three
chunkings (all at once, random id chunks, one id at a time), and also with a control token
spelled out with ordinary tokens. The reference's one-shot parse is the one to match (its own
streaming raises on a few cases where its one-shot does not).
"""

from __future__ import annotations

import functools
import random
import re
from pathlib import Path

from transformers import AutoTokenizer
from transformers.utils.chat_parsing import ResponseParser as ReferenceParser

from engine import ResponseParser, load_template
from tests.support.reference_parity import differs_from

DEMO_MODEL = Path(__file__).resolve().parents[2] / "samples" / "demo-model"
CHUNKINGS = ("one-shot", "random-id-chunks", "per-id")
# A piece of a literal delimiter that a real tokenizer of its family has as one token.
TOKEN_LIKE = re.compile(
    r"<[|｜][^\s<>'\"\\]*?[|｜]>|<\|[a-z_]+>|<[a-z_]+\|>|</?[A-Za-z_][\w:.-]*>|\[/?[A-Z_]+\]"
)


@functools.lru_cache(maxsize=1)
def demo_tokenizer():
    """The demo model's tokenizer (no added tokens beyond its own)."""
    return AutoTokenizer.from_pretrained(DEMO_MODEL)


def delimiter_tokens(templates: list[dict]) -> list[str]:
    """The token-like pieces of the literal delimiters of `templates`, sorted."""
    found = set()
    for template in templates:
        for field in template.get("fields", {}).values():
            for key in ("open", "close"):
                literal = field.get(key)
                for text in [literal] if isinstance(literal, str) else literal or []:
                    found.update(TOKEN_LIKE.findall(text))
    return sorted(found)


@functools.lru_cache(maxsize=4)
def _wide(tokens: tuple[str, ...]):
    tokenizer = AutoTokenizer.from_pretrained(DEMO_MODEL)
    tokenizer.add_tokens(list(tokens), special_tokens=True)
    return tokenizer


def wide_tokenizer(templates: list[dict]):
    """A fresh demo tokenizer with the delimiter tokens of `templates` added as special tokens."""
    return _wide(tuple(delimiter_tokens(templates)))


@functools.lru_cache(maxsize=32)
def family_tokenizer(chat_template: str):
    """A fresh demo tokenizer serving `chat_template`: the token-like pieces of its text added as
    ordinary (not special) added tokens, so that which of them are control tokens is decided as
    for a real model: by the chat template's literal text."""
    tokenizer = AutoTokenizer.from_pretrained(DEMO_MODEL)
    tokenizer.add_tokens(sorted(set(TOKEN_LIKE.findall(chat_template))))
    tokenizer.chat_template = chat_template
    return tokenizer


def encode(tokenizer, text: str) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False)


def spelled_out(tokenizer, ids: list[int], which: int = 0) -> list[int] | None:
    """`ids` with control token occurrence `which` (counting from 0) written with ordinary
    tokens instead of its id, or None when there are not that many control tokens."""
    special = {token_id for token_id, token in tokenizer.added_tokens_decoder.items()}
    positions = [at for at, token_id in enumerate(ids) if token_id in special]
    if which >= len(positions):
        return None
    at = positions[which]
    spelling = tokenizer.decode([ids[at]], skip_special_tokens=False)
    ordinary = tokenizer.encode(spelling, add_special_tokens=False, split_special_tokens=True)
    return ids[:at] + ordinary + ids[at + 1 :]


def chunked(ids: list[int], chunking: str, seed: int = 0) -> list[list[int]]:
    if chunking == "one-shot":
        return [ids]
    if chunking == "per-id":
        return [[token_id] for token_id in ids]
    rng, chunks, at = random.Random(seed), [], 0
    while at < len(ids):
        size = rng.randint(1, 6)
        chunks.append(ids[at : at + size])
        at += size
    return chunks


def stream_ids(template, chunks, prefix, tools, tokenizer) -> tuple[dict, list[dict]]:
    """Our parser fed `chunks` of ids: (message, every event)."""
    parser = ResponseParser(template, prefix, tools=tools, tokenizer=tokenizer)
    events = list(parser.initial_events)
    for chunk in chunks:
        events += parser.feed(chunk)
    message, final = parser.finalize()
    return message, events + final


def reference_parse(template, ids, prefix, tools, tokenizer) -> tuple[dict, list[dict]] | None:
    """The reference's one-shot (message, events), or None when it raises."""
    try:
        parser = ReferenceParser(template, prefix, tools=tools, tokenizer=tokenizer)
        events = list(parser.initial_events) + parser.feed(ids)
        message, final = parser.finalize()
        return message, events + final
    except Exception:
        return None


def regions(events: list[dict], implicit: str | None) -> list[tuple]:
    """Per region, in order: (field, its chunks' text, its close value); the implicit field's
    close values are left out (the engine's documented difference: it keeps every stretch)."""
    found, current = [], None
    for event in events:
        if event["type"] == "region_open":
            current = [event["field"], "", None]
            found.append(current)
        elif event["type"] == "region_chunk":
            current[1] += event["text"]
        elif event["type"] == "region_close" and event["field"] != implicit:
            current[2] = event.get("value")
    return [tuple(region) for region in found]


def id_differences(
    template, ids, prefix, tools, tokenizer, seed: int = 0, chunkings=CHUNKINGS
) -> dict[str, str]:
    """{chunking: why} where feeding `ids` in that chunking gives another message, or other
    regions and values in its events, than the reference's one-shot parse (bar the documented
    differences of `reference_parity`); {} when all agree. Where the reference raises, the
    engine must raise too."""
    implicit = load_template(template).implicit_field
    implicit = implicit.name if implicit is not None else None
    theirs = reference_parse(template, ids, prefix, tools, tokenizer)
    found = {}
    for chunking in chunkings:
        try:
            ours = stream_ids(template, chunked(ids, chunking, seed), prefix, tools, tokenizer)
        except Exception as error:
            if theirs is not None:
                found[chunking] = f"the engine raised {error!r}, the reference gave {theirs[0]!r}"
            continue
        if theirs is None:
            found[chunking] = f"the reference raised, the engine gave {ours[0]!r}"
            continue
        why = differs_from(ours[0], theirs[0], implicit)
        if not why and regions(ours[1], implicit) != regions(theirs[1], implicit):
            why = f"events: engine {regions(ours[1], implicit)!r}, reference {regions(theirs[1], implicit)!r}"
        if why:
            found[chunking] = why
    return found
