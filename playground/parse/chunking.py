"""Chunking: how a replay cuts the generation into stream chunks.

The cutting itself is the engine's (`engine.authoring.stream_checks.split_at` and
`random_chunks`), so a replay, the stream check and the tests cut text the
same way. This module adds the page's settings (how, N, seed, split points),
the demo tokenizer's token boundaries, and the `?chunking=` deep-link form.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

from engine.authoring.stream_checks import random_chunks, split_at

from ..server.input_readers import InputError

CHUNKINGS = {
    "tokens": "tokenizer tokens",
    "chars": "every N characters",
    "random": "seeded random",
    "points": "split points (typed)",
}
DEMO_MODEL_PATH = Path(__file__).resolve().parents[2] / "samples" / "demo-model"
_WORDISH = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)
_tokenizer_lock = threading.Lock()
_tokenizer_cache: dict[str, Any] = {}


def _demo_tokenizer():
    """The demo model's tokenizer, or None when it is not built."""
    if not (DEMO_MODEL_PATH / "tokenizer_config.json").is_file():
        return None
    with _tokenizer_lock:
        if "demo" not in _tokenizer_cache:
            from transformers import AutoTokenizer

            _tokenizer_cache["demo"] = AutoTokenizer.from_pretrained(str(DEMO_MODEL_PATH))
        return _tokenizer_cache["demo"]


def token_pieces(text: str) -> tuple[list[str], str]:
    """Split `text` at the demo tokenizer's token boundaries; (pieces, what was used)."""
    tokenizer = _demo_tokenizer()
    if tokenizer is not None:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        pieces = [
            tokenizer.decode([i], skip_special_tokens=False, clean_up_tokenization_spaces=False)
            for i in ids
        ]
        if "".join(pieces) == text:
            return pieces, "the demo model's tokenizer"
    return [
        m.group() for m in _WORDISH.finditer(text)
    ], "word and punctuation boundaries (no tokenizer that round-trips this text)"


def split_points(points: str) -> list[int]:
    """Typed split points ("5, 12, 40") -> sorted offsets. Raises InputError for anything else."""
    try:
        return sorted({int(p) for p in re.split(r"[,\s]+", (points or "").strip()) if p})
    except ValueError:
        raise InputError(
            "Split points are character offsets separated by commas, e.g. 5, 12, 40."
        ) from None


def make_chunks(
    generation: str, how: str, size: int = 1, seed: int = 0, points: str = ""
) -> list[str]:
    """Cut `generation` into stream chunks.

    how: "tokens", "chars" (every `size` characters), "random" (seeded sizes 1..8) or
    "points" (comma-separated character offsets). Raises InputError for bad settings.
    """
    if not generation:
        return []
    if how == "tokens":
        return token_pieces(generation)[0]
    if how == "chars":
        size = int(size or 1)
        if size < 1:
            raise InputError("N must be at least 1.")
        return split_at(generation, range(size, len(generation), size))
    if how == "random":
        return random_chunks(generation, int(seed or 0))
    if how == "points":
        return split_at(generation, split_points(points))
    raise InputError(f"Unknown chunking {how!r}; use one of {', '.join(CHUNKINGS)}.")


def chunking_param(how: str, size: Any, seed: Any, points: str) -> str:
    """The `?chunking=` value of these settings: `chars:3`, `random:7`, `points:5,9` or `tokens`."""
    if how == "chars":
        return f"chars:{int(size or 1)}"
    if how == "random":
        return f"random:{int(seed or 0)}"
    if how == "points":
        return "points:" + re.sub(r"\s+", "", points or "")
    return how


def parse_chunking_param(text: str) -> dict:
    """`chars:3` / `random:7` / `points:5,9` / `tokens` -> {how, size, seed, points}.

    A value that is not one of these gives the default ("chars", N=1) with a "problem"
    entry saying what was wrong.
    """
    how, _, arg = (text or "").partition(":")
    usage = "use chars:N, random:SEED, points:5,9 or tokens"
    if how not in CHUNKINGS:
        return {"how": "chars", "problem": f"?chunking={text} is not a chunking ({usage})"}
    settings: dict[str, Any] = {"how": how}
    try:
        if how == "chars" and arg:
            settings["size"] = int(arg)
            if settings["size"] < 1:
                raise ValueError
        elif how == "random" and arg:
            settings["seed"] = int(arg)
        elif how == "points":
            split_points(arg)
            settings["points"] = arg.replace(",", ", ")
    except (ValueError, InputError):
        return {
            "how": "chars",
            "problem": f"?chunking={text}: {arg!r} is not a valid {CHUNKINGS[how]} setting ({usage})",
        }
    return settings
