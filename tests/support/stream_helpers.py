"""Small streaming helpers shared by several test modules."""

import random
from typing import NamedTuple

from engine import ResponseParser


def random_cuts(text: str, seed: int) -> list[str]:
    """Split `text` at a seeded random number of random points (chunks of very different sizes)."""
    if len(text) < 2:
        return [text] if text else []
    rng = random.Random(seed)
    cuts = sorted(
        rng.sample(
            range(1, len(text)), k=min(len(text) - 1, rng.randint(1, max(1, len(text) // 3)))
        )
    )
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


class Streamed(NamedTuple):
    """What one streamed parse gave: the parser, the message, and its events in two parts."""

    parser: ResponseParser
    message: dict
    fed: list[dict]  # the initial events, then those of every feed
    final: list[dict]  # those of finalize

    @property
    def events(self) -> list[dict]:
        return self.fed + self.final


def stream(template, chunks, prefix="", *, parser_class=ResponseParser, **options) -> Streamed:
    """Feed `chunks` (a string feeds one character at a time) to a new parser, then finalize it."""
    parser = parser_class(template, prefix=prefix, **options)
    events = list(parser.initial_events)
    for chunk in chunks:
        events += parser.feed(chunk)
    message, final = parser.finalize()
    return Streamed(parser, message, events, final)


def stream_events(template, chunks, prefix="", *, parser_class=ResponseParser, **options):
    """Feed `chunks` (a string feeds one character at a time); return (message, initial + fed + final events)."""
    streamed = stream(template, chunks, prefix, parser_class=parser_class, **options)
    return streamed.message, streamed.events


def region_texts(events) -> list[tuple[str, str]]:
    """Per region, in order: (field, concatenated chunk text)."""
    regions, current = [], None
    for event in events:
        if event["type"] == "region_open":
            current = [event["field"], ""]
            regions.append(current)
        elif event["type"] == "region_chunk":
            current[1] += event["text"]
    return [tuple(r) for r in regions]
