"""Share links and state files: the page's state in a URL or a file, and reading it back.

A link names what it can (`?sample=family/case`, `?template=name`,
`?chunking=...`, `?tab=...`, `?chunk=N`) and carries edited text compressed in
`?state=` (URL-safe base64 of zlib-compressed JSON). A state too big for a
link is never dropped silently: `share_link` says so, and the same state can
be downloaded as a file (`state_file_text`) and uploaded again
(`read_state_file`). docs/app.md lists every parameter.
"""

from __future__ import annotations

import base64
import json
import zlib
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from ..catalog import samples_by_id, shipped_template_text, template_names, template_text_of
from ..parse.chunking import parse_chunking_param
from ..server.input_readers import InputError, check_json_shape, check_unicode
from ..server.redact import clip, near_miss
from .test_cases import cases_for_template, cases_text

# Longest `state` parameter a link may carry (characters).
MAX_STATE_PARAM = 8_000
# Largest state file accepted (bytes).
MAX_STATE_FILE = 4_000_000
STATE_FORMAT = "response-template-playground-state"
TABS = ("samples", "model", "paste", "live", "template")
PARAMETERS = (
    "sample",
    "template",
    "state",
    "chunking",
    "tab",
    "chunk",
    "chat_template_model",
    "bos_token",
    "eos_token",
)
# The link parameters that start from a model: the Start from a model tab's boxes.
MODEL_PARAMETERS = ("chat_template_model", "bos_token", "eos_token")
# The longest value of a MODEL_PARAMETERS link parameter (characters).
MODEL_PARAMETER_CHARS = 300
# Digits a ?chunk= number may have (more is no chunk of a generation the page accepts).
CHUNK_DIGITS = 9
# What a state holds, as {state key: page component}.
STATE_KEYS = {
    "template": "template_text",
    "prefix": "prefix",
    "generation": "generation",
    "tools": "tools_text",
    "test_cases": "test_cases_text",
}


@dataclass
class PageState:
    """The page's shareable state.

    Attributes:
        sample_id: the sample loaded last ("" for none); template_choice: the template dropdown.
        texts: {state key: text} for the `STATE_KEYS` that differ from the sample or file.
        chunking: the `?chunking=` form; tab: the input tab ("" to leave it); chunk: the replay position.
    """

    sample_id: str = ""
    template_choice: str = ""
    texts: dict[str, str] = field(default_factory=dict)
    chunking: str = "chars:1"
    tab: str = "paste"
    chunk: int = 0


def encode_state(state: dict) -> str:
    """URL-safe compressed JSON of the page inputs."""
    packed = zlib.compress(json.dumps(state, ensure_ascii=False).encode("utf-8"), 9)
    return base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")


def _shallow_json(text: str, what: str, unreadable: str) -> Any:
    """`text` read as JSON, refused when nested deeper than the limits allow.

    Args:
        what: the thing read, as the messages name it ("The state file").
        unreadable: what the messages say of it when it is not JSON ("is not JSON").

    Raises:
        InputError: over PLAYGROUND_LIMITS `json_depth` or `json_nodes` (`check_json_shape`), or
            ``"{what} {unreadable} (the JSON error)."``.
        ValueError: a number too long to read (the caller words it).
    """
    check_json_shape(text, what)  # its depth and size, before the tree is built
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{what} {unreadable} ({error}).") from None
    except RecursionError:
        raise InputError(f"{what} is nested too deeply.") from None


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
        state = _shallow_json(raw.decode("utf-8"), "The shared state in the link", "cannot be read")
    except InputError:
        raise
    except (ValueError, zlib.error):  # not base64, not zlib, not UTF-8, a number too long to read
        raise InputError("The shared state in the link cannot be read.") from None
    if not isinstance(state, dict):
        raise InputError("The shared state in the link cannot be read.")
    check_unicode(state, "The shared state in the link")
    return state


def edited_texts(sample_id: str, template_choice: str, texts: dict[str, str]) -> dict[str, str]:
    """The texts a link must carry: those that differ from the sample (and the named template file)."""
    sample = samples_by_id().get(sample_id or "")
    baseline = {}
    if sample is not None:
        baseline = {
            "template": template_text_of(sample.template),
            "prefix": sample.prefix,
            "generation": sample.generation,
            "tools": template_text_of(sample.tools) if sample.tools else "",
        }
    if template_choice in template_names():
        baseline["template"] = shipped_template_text(template_choice)
    baseline["test_cases"] = cases_text(
        cases_for_template(
            template_choice if template_choice in template_names() else None,
            getattr(sample, "template", None),
        )
    )
    return {key: text for key, text in texts.items() if text != baseline.get(key, "")}


def share_link(state: PageState) -> tuple[str, str]:
    """(query string, warning): the link to `state`, and "" or why it does not carry everything."""
    params: dict[str, str] = {}
    if state.sample_id in samples_by_id():
        params["sample"] = state.sample_id
    texts = edited_texts(state.sample_id, state.template_choice, state.texts)
    if state.template_choice in template_names() and "template" not in texts:
        if state.template_choice != getattr(
            samples_by_id().get(state.sample_id), "template_name", None
        ):
            params["template"] = state.template_choice
    warning = ""
    if texts:
        encoded = encode_state(texts)
        if len(encoded) <= MAX_STATE_PARAM:
            params["state"] = encoded
        else:
            names = ", ".join(
                STATE_KEYS[key].replace("_text", "").replace("_", " ") for key in texts
            )
            warning = (
                f"This state is too big for a link ({len(encoded):,} characters compressed, limit {MAX_STATE_PARAM:,}): "
                f"the link does not carry your edits ({names}). Download the state file and upload it to restore everything."
            )
    params["chunking"] = state.chunking
    if state.tab in TABS:
        params["tab"] = state.tab
    if state.chunk:
        params["chunk"] = str(state.chunk)
    return "?" + urlencode(params), warning


def state_file_text(state: PageState) -> str:
    """The whole state as a JSON file (no size limit, every text included)."""
    return (
        json.dumps(
            {
                "format": STATE_FORMAT,
                "version": 1,
                "sample": state.sample_id,
                "template_choice": state.template_choice,
                **state.texts,
                "chunking": state.chunking,
                "tab": state.tab,
                "chunk": state.chunk,
            },
            ensure_ascii=False,
            indent=2,
        )
        + "\n"
    )


def read_state_file(raw: bytes) -> PageState:
    """A `PageState` from state-file bytes. Raises InputError saying what is wrong."""
    if len(raw) > MAX_STATE_FILE:
        raise InputError(
            f"The state file is too large: {len(raw):,} bytes (limit {MAX_STATE_FILE:,})."
        )
    try:
        data = _shallow_json(raw.decode("utf-8"), "The state file", "is not JSON")
    except InputError:
        raise
    except ValueError:  # not UTF-8, or a number too long to read
        raise InputError("The state file is not JSON (UTF-8 text) that can be read.") from None
    check_unicode(data, "The state file")
    if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
        raise InputError(
            f'This is not a playground state file (its "format" must be {STATE_FORMAT!r}).'
        )
    chunk = data.get("chunk", 0)
    return PageState(
        sample_id=str(data.get("sample") or ""),
        template_choice=str(data.get("template_choice") or ""),
        texts={key: data[key] for key in STATE_KEYS if isinstance(data.get(key), str)},
        chunking=str(data.get("chunking") or "chars:1"),
        tab=data.get("tab") if data.get("tab") in TABS else "paste",
        chunk=chunk if isinstance(chunk, int) and chunk >= 0 else 0,
    )


def link_problems(params: dict[str, str]) -> list[str]:
    """What is wrong with a link's parameters, one sentence each ([] when nothing is)."""
    problems = []
    for name in params:
        if name not in PARAMETERS and not name.startswith("__"):
            guess = near_miss(name, PARAMETERS)
            problems.append(
                f"unknown parameter ?{clip(name, quoted=False)}="
                + (f" (did you mean ?{guess}=?)" if guess else f" (known: {', '.join(PARAMETERS)})")
            )
    if "sample" in params and params["sample"] not in samples_by_id():
        guess = near_miss(params["sample"], samples_by_id())
        problems.append(
            f"no sample {clip(params['sample'])}"
            + (f" (did you mean {guess!r}?)" if guess else "")
            + "; the first sample is shown"
        )
    if "template" in params and params["template"] not in template_names():
        guess = near_miss(params["template"], template_names())
        problems.append(
            f"no template {clip(params['template'])} in templates/"
            + (f" (did you mean {guess!r}?)" if guess else "")
            + "; the sample's template is used"
        )
    if "chunking" in params:
        problem = parse_chunking_param(params["chunking"]).get("problem")
        if problem:
            problems.append(problem)
    if "tab" in params and params["tab"] not in TABS:
        problems.append(f"no tab {clip(params['tab'])} (use one of {', '.join(TABS)})")
    for name in MODEL_PARAMETERS:
        if len(params.get(name, "")) > MODEL_PARAMETER_CHARS:
            problems.append(
                f"?{name}= is longer than {MODEL_PARAMETER_CHARS} characters; it is left out"
            )
    if "chunk" in params and not (
        params["chunk"].isdecimal() and len(params["chunk"]) <= CHUNK_DIGITS
    ):
        shown = params["chunk"] if len(params["chunk"]) <= 20 else params["chunk"][:20] + "…"
        problems.append(f"?chunk={shown} is not a chunk number (0, 1, 2, ...)")
    return problems
