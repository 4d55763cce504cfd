"""Share links: the page's state in a URL, and reading it back.

A link names what it can (`?sample=family/case`, `?template=name`,
`?chunking=...`) and carries edited text compressed in `?state=` (URL-safe
base64 of zlib-compressed JSON).
"""

from __future__ import annotations

import base64
import json
import zlib
from urllib.parse import urlencode

from .catalog import samples_by_id, shipped_template_text, template_names, template_text_of
from .chunking import chunking_param
from .limits import InputError

# Longest `state` parameter a link may carry (characters).
MAX_STATE_PARAM = 8_000


def encode_state(state: dict) -> str:
    """URL-safe compressed JSON of the page inputs."""
    packed = zlib.compress(json.dumps(state, ensure_ascii=False).encode("utf-8"), 9)
    return base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")


def decode_state(text: str, limit: int = 1_000_000) -> dict:
    """Inverse of encode_state; refuses oversized or malformed input with InputError."""
    if len(text) > MAX_STATE_PARAM:
        raise InputError("The shared state in the link is too long.")
    try:
        packed = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, limit)
        if inflater.unconsumed_tail:
            raise InputError("The shared state in the link is too large.")
        state = json.loads(raw.decode("utf-8"))
    except (ValueError, zlib.error) as error:
        raise InputError(f"The shared state in the link cannot be read ({error}).") from None
    if not isinstance(state, dict):
        raise InputError("The shared state in the link cannot be read.")
    return state


def share_query(sample_id, template_choice, how, size, seed, points, template_text, prefix, generation, tools_text) -> str:
    """The query string of a link to the current state.

    A sample left as loaded is named (`?sample=...`); edited text travels compressed in `state`.
    """
    params: dict[str, str] = {}
    sample = samples_by_id().get(sample_id or "")
    same_as_sample = sample is not None and (
        template_text_of(sample.template) == template_text and sample.prefix == prefix and sample.generation == generation
    )
    if sample is not None:
        params["sample"] = sample.id
    if not same_as_sample:
        if template_choice in template_names() and template_text == shipped_template_text(template_choice):
            params["template"] = template_choice
            state = {"prefix": prefix, "generation": generation, "tools": tools_text}
        else:
            state = {"template": template_text, "prefix": prefix, "generation": generation, "tools": tools_text}
        encoded = encode_state(state)
        if len(encoded) <= MAX_STATE_PARAM:
            params["state"] = encoded
    params["chunking"] = chunking_param(how, size, seed, points)
    return "?" + urlencode(params)
