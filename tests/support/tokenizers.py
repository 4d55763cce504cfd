"""Tokenizers for the tests and benchmarks, built from the demo model's (nothing downloaded).

`demo_tokenizer_with_placeholders(count)` adds `count` numbered special tokens
(``<SPECIAL_0>`` ... ``<SPECIAL_{count-1}>``), as real vocabularies reserve thousands: names
that differ only in a number, which must never pair as an open and a close.
"""

from __future__ import annotations

from typing import Any

from tests.support.paths import ROOT

DEMO_MODEL = ROOT / "samples" / "demo-model"


def placeholder_tokens(count: int) -> list[str]:
    """``<SPECIAL_0>`` ... ``<SPECIAL_{count-1}>``, in that order."""
    return [f"<SPECIAL_{number}>" for number in range(count)]


def demo_tokenizer_with_placeholders(count: int) -> Any:
    """The demo model's tokenizer with `placeholder_tokens(count)` added as special tokens
    (after its own). Raises ImportError when transformers is not installed."""
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(DEMO_MODEL))
    tokenizer.add_tokens(placeholder_tokens(count), special_tokens=True)
    return tokenizer
