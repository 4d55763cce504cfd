"""Template inference, the start anchor: where the new turn starts in a prompt.

The generation prompt (what `add_generation_prompt` adds) writes the new turn's header, and
maybe pre-writes part of the message: an opener, an empty block, a recipient marker. The
header is what every thinking mode's generation prompt and the history's own assistant
turns share; a pre-written opener or block is not part of it (it is the start of the
message, which the parser must see). A prompt that writes no new header (after a tool
result, many do) contributes what it ends with, its last marker; a prompt that writes only
what the first turn pre-writes after its header contributes the last marker before that.
"""

from __future__ import annotations

from .markup import MARKUP_TOKEN, prompt_end, shared_start, split_block
from .parts import InferenceError, Parts
from .probes import (
    ANSWER,
    NEEDLE,
    QUESTION,
    SECOND_QUESTION,
    TOOL_RESULT_TEXT,
    Probe,
    Render,
    assistant,
)
from .turns import back_to_boundary, common_length

# The situations whose prompts give start anchors, with the needle their history ends with.
SITUATIONS = (
    ("first-turn", QUESTION),
    ("after-tool-result", TOOL_RESULT_TEXT),
    ("multi-turn", SECOND_QUESTION),
)


def learn_anchor(parts: Parts) -> None:
    """Fill `parts.header`, `anchors`, `prewritten`, `generation_prompts` and `turn_start`.

    Raises:
        InferenceError: no prompt shows where the new turn starts.
    """
    parts.turn_start = _turn_start(parts.probes[0])
    first = {
        probe.mode: _from_turn_start(parts, generation_prompt(probe, "first-turn").lstrip())
        for probe in parts.probes
    }
    parts.generation_prompts = first
    sources = [text for text in first.values() if text.strip()]
    leads = [
        _from_turn_start(parts, lead.lstrip())
        for lead in (_history_lead(probe) for probe in parts.probes)
        if lead and lead.strip()
    ]
    header = shared_start(sources + leads) if sources else ""
    header = _without_trailing_opener(header, sources + leads)
    if (
        sources
        and leads
        and len(leads[0].strip()) > len(header.strip())
        and all(leads[0].strip() in source for source in sources)
    ):
        # Every prompt ends the previous turn first, or writes a turn of its own (instructions),
        # then writes the header the history's turns start with.
        header = leads[0].strip()
        sources = [source[source.rfind(header) :] for source in sources]
        first = {
            mode: text[text.rfind(header) :] if header in text else text
            for mode, text in first.items()
        }
    set_header(parts, header, first, len(sources) + len(leads) > 1)
    for probe in parts.probes:
        for situation, needle in SITUATIONS:
            _situation_anchor(parts, probe, situation, needle)
    if not parts.anchors:
        raise InferenceError("the prompt shows no header or marker where the new turn starts")


def set_header(parts: Parts, header: str, first: dict[str, str], shared: bool = False) -> None:
    """Make `header` the new turn's header: its anchor, and what each mode pre-writes after it."""
    parts.header = header
    for probe in parts.probes:
        probe.header = header.strip()
    anchor = header.rstrip()
    if anchor.strip():
        if anchor not in parts.anchors:
            parts.anchors.insert(0, anchor)
        probe = parts.probes[0]
        parts.book.find(
            "start_anchor",
            anchor,
            "the header the generation prompt writes for the new turn"
            + (
                " (the part every thinking mode and the history's assistant turns share)"
                if shared
                else ""
            ),
            probe.first_turn_render(),
            probe.first_prompt_render(),
        )
    for mode, text in first.items():
        # What the parser sees after the anchor (its trailing blanks included).
        parts.prewritten[mode] = (
            text[len(anchor) :] if anchor and text.startswith(anchor) else ("" if anchor else text)
        )


def generation_prompt(probe: Probe, situation: str) -> str:
    """What the situation's generation prompt writes (or, when it writes nothing, what the chat
    template writes after every conversation)."""
    prompt = probe.generation_prompt(situation) or ""
    trailer = probe.renderer.trailer
    if not prompt.strip() and trailer and not NEEDLE.search(trailer):
        return (
            trailer  # written after every conversation: the new turn's start (not a message's text)
        )
    return prompt


def _history_lead(probe: Probe) -> str | None:
    """How the chat template starts an assistant turn in history (between the user's question
    and the answer of an earlier turn)."""
    ask = {"role": "user", "content": QUESTION}
    full = probe.render(
        [ask, assistant(content=ANSWER), {"role": "user", "content": SECOND_QUESTION}]
    )
    bare = probe.render([ask])
    if full is None or bare is None or QUESTION not in full or ANSWER not in full:
        return None
    trailer = probe.renderer.trailer
    if trailer and bare.endswith(trailer):
        bare = bare[: -len(trailer)]
    user_close = bare[bare.rfind(QUESTION) + len(QUESTION) :]
    between = full[full.find(QUESTION) + len(QUESTION) : full.find(ANSWER)]
    return between[back_to_boundary(between, common_length(between, user_close)) :]


def _turn_start(probe: Probe) -> str:
    """The marker every turn starts with: the first markup token of a render (after bos_token), or ""."""
    bare = probe.render(probe.history("first-turn")) or ""
    bos = probe.renderer.bos_token
    bare = bare[len(bos) :] if bos and bare.startswith(bos) else bare
    token = MARKUP_TOKEN.match(bare.lstrip())
    return token.group() if token else ""


def _from_turn_start(parts: Parts, text: str) -> str:
    """`text` from the turn-start marker on: what a prompt writes before it ends the previous turn."""
    at = text.find(parts.turn_start, 1) if parts.turn_start else -1
    return text[at:] if at > 0 and not text.startswith(parts.turn_start) else text


def _without_trailing_opener(header: str, sources: list[str]) -> str:
    """`header` without a trailing opener that, in some source, is the start of an empty block
    (the opener belongs to the block the prompt pre-writes, not to the turn's header)."""
    for token in reversed(list(MARKUP_TOKEN.finditer(header))):
        cut = token.start()
        for source in sources:
            block = (
                split_block(source[cut:].strip(), NEEDLE)
                if source.startswith(header[:cut])
                else None
            )
            if block is not None and block[0] == header[cut:].strip():
                return header[:cut]
    return header


def _prewrites_only(parts: Parts, probe: Probe, text: str) -> bool:
    """Whether `text` (a generation prompt) is, blanks aside, exactly what the first turn pre-writes
    after the header in this mode: an opener or an empty block, and no header of its own."""
    prewritten = parts.prewritten.get(probe.mode, "").strip()
    return bool(prewritten) and "".join(text.split()) == "".join(prewritten.split())


def _situation_anchor(parts: Parts, probe: Probe, situation: str, needle: str) -> None:
    """The anchor of a situation whose prompt does not start the new turn with the header."""
    prompt = probe.prompt(situation)
    if prompt is None:
        return
    written = _from_turn_start(parts, generation_prompt(probe, situation).lstrip())
    header = parts.header
    if header.strip() and header.strip() in written:
        return  # the header's anchor finds this turn too (after instructions the prompt writes)
    if not written.strip():
        anchor, what = prompt_end(prompt, needle), "writes no new header: the prompt ends with it"
    elif _prewrites_only(parts, probe, written):
        before = prompt[: len(prompt) - len(probe.generation_prompt(situation) or "")]
        anchor = prompt_end(before, needle)
        what = (
            "writes no new header, only what the first turn pre-writes after its header: the "
            "prompt's last marker before it"
        )
    else:
        anchor = shared_start([written, header]) or written
        what = "starts the new turn with a header of its own"
    anchor = anchor.rstrip()
    if not anchor.strip() or anchor in parts.anchors:
        return
    parts.anchors.append(anchor)
    name = situation.replace("-", " ")
    parts.book.find(
        "start_anchor",
        anchor,
        f"{name}: the chat template {what}",
        Render(
            probe.label(f"{name}, no generation prompt"),
            probe.render(probe.history(situation)) or "",
        ),
        Render(probe.label(f"{name}, with the generation prompt"), prompt),
    )


def header_without(parts: Parts, tail: str) -> None:
    """The header without `tail`, when it ends with it: text a later part shows to be the start
    of the message (a call's recipient marker the generation prompt writes), which the parser
    must see after the anchor."""
    header = parts.header.rstrip()
    if not tail or not header.endswith(tail) or header == tail:
        return
    shorter = header[: -len(tail)]
    parts.anchors = [shorter.rstrip() if anchor == header else anchor for anchor in parts.anchors]
    for finding in parts.book.findings:
        if finding.key == "start_anchor" and finding.value == header:
            finding.value = shorter.rstrip()
            finding.how += f" ({tail!r}, which it ends with, starts the message: a call's open)"
    parts.header = shorter
    for probe in parts.probes:
        probe.header = shorter.strip()
        parts.prewritten[probe.mode] = (
            shorter[len(shorter.rstrip()) :] + tail + parts.prewritten.get(probe.mode, "")
        )
