"""Template inference, the reasoning field: its markers, from renders or from what the prompt pre-writes.

In order: a finished turn with reasoning (the markers around it); an empty block the prompt
pre-writes (thinking off), or one a finished turn starts with; an opener the prompt
pre-writes alone (the reasoning is open when generation starts), whose closer is its
closing form, confirmed when the chat template drops an earlier turn's text up to it.
Other evidence (the chat template's source, the tokenizer) may propose markers where no
render shows any: `propose_reasoning` checks them the same way, `propose_from_pairs` the
pairs such evidence gives.
"""

from __future__ import annotations

import regex

from ..pattern_shapes import pattern_literal
from .markup import (
    MARKUP_TOKEN,
    closing_forms,
    last_block_start,
    rendered_text_pattern,
    split_block,
)
from .parts import Parts, Reasoning
from .probes import (
    ANSWER,
    NEEDLE,
    QUESTION,
    REASONING,
    REASONING_KEYS,
    SECOND_QUESTION,
    THINKING_CHUNK,
    Probe,
    Render,
    Turn,
    assistant,
)

# A chunk's own keys written quoted: the chat template writes the content list as data.
_CHUNK_WRITTEN_AS_DATA = regex.compile(r"['\"](?:type|thinking|text)['\"]\s*:")


def learn_reasoning(parts: Parts) -> None:
    """Fill `parts.reasoning` (and its findings) from the renders, if they show reasoning."""
    for probe in parts.probes:
        if _from_finished_turn(parts, probe):
            return
    _from_prewritten(parts)


def _from_finished_turn(parts: Parts, probe: Probe) -> bool:
    answer = probe.turn("answer")
    for key in (*REASONING_KEYS, THINKING_CHUNK):
        turn = probe.turn("reasoning", key)
        if turn is None or REASONING not in turn.text or ANSWER not in turn.text:
            continue
        if key == THINKING_CHUNK and _CHUNK_WRITTEN_AS_DATA.search(turn.text):
            continue  # the chunks written as they are given (a list's repr), not rendered
        view = parts.visible(probe, turn)
        start, end = view.find(REASONING), view.find(ANSWER)
        opening, between = view[:start].strip(), view[start + len(REASONING) : end]
        if end < start or not between.strip():
            continue
        pair = (answer.render if answer else turn.render, turn.render)
        parts.reasoning_renders = pair
        if not opening:
            _at_turn_start(parts, probe, turn, between.strip(), key, pair)
            return True
        opening = last_block_start(opening)
        # (the closer is trimmed by the content wrapper later)
        parts.reasoning = Reasoning(opening, between.strip())
        parts.book.find(
            "fields.reasoning_content.open",
            opening,
            f"the text before the reasoning in a finished turn ({key})",
            *pair,
        )
        return True
    return False


def _at_turn_start(
    parts: Parts, probe: Probe, turn: Turn, close: str, key: str, pair: tuple[Render, ...]
) -> None:
    """Reasoning the finished turn writes first, with no opener, and a closer before the answer.
    Plain text the prompt pre-writes that the finished turn lacks (a lead into the reasoning)
    becomes an optional part of the anchor."""
    parts.reasoning = Reasoning("", close, at_start=True)
    parts.book.find(
        "fields.reasoning_content.open_pattern",
        "^",
        f"a finished turn starts with the reasoning ({key}), no opener before it, and a closer "
        "after it: the reasoning opens where the turn starts",
        *pair,
    )
    lead = turn.missing.strip()
    if lead and not MARKUP_TOKEN.search(lead) and lead not in parts.optional_tails:
        parts.optional_tails.append(rendered_text_pattern(lead))
        parts.book.find(
            "start_anchor",
            lead,
            "the prompt pre-writes this text after the header, and the finished turn lacks it: an "
            "optional part of the anchor (a prompt with it and one without both start the turn)",
            probe.first_prompt_render(),
            turn.render,
        )


def _prompt_pair(parts: Parts) -> tuple[Render, Render]:
    """The renders that show what the prompt pre-writes: both modes' prompts, or one mode's
    first turn without and with the generation prompt."""
    probes = parts.probes
    if len(probes) == 2:
        return (
            Render(probes[0].label("first turn prompt"), probes[0].prompt("first-turn") or ""),
            Render(probes[1].label("first turn prompt"), probes[1].prompt("first-turn") or ""),
        )
    probe = probes[0]
    return (
        probe.first_turn_render(),
        probe.first_prompt_render(),
    )


def _from_prewritten(parts: Parts) -> None:
    """Reasoning markers from what the prompt pre-writes: an empty block, or an opener alone."""
    blocks = {
        mode: split_block(text.strip(), NEEDLE)
        for mode, text in parts.prewritten.items()
        if text.strip()
    }
    openers = {
        mode: text.strip()
        for mode, text in parts.prewritten.items()
        if text.strip() and blocks.get(mode) is None and MARKUP_TOKEN.fullmatch(text.strip())
    }
    pair = _prompt_pair(parts)
    block = next((found for found in blocks.values() if found), None)
    if block is None:
        block, pair = _block_starting_a_turn(parts, pair)
    if block is not None:
        parts.reasoning = Reasoning(*block)
        how = "the prompt pre-writes an empty reasoning block (opener then closer) when thinking is off"
        parts.book.find("fields.reasoning_content.open", block[0], how, *pair)
        parts.book.find(
            "fields.reasoning_content.close",
            block[1],
            "the closing marker of that pre-written empty block",
            *pair,
        )
        return
    if openers:
        propose_reasoning(
            parts,
            next(iter(openers.values())),
            "the prompt pre-writes it after the header (the reasoning is open when generation starts), and a finished turn lacks it",
            pair,
        )


def _block_starting_a_turn(parts: Parts, pair: tuple[Render, Render]):
    """An empty block a finished answer starts with (and the renders that show it), or (None, pair)."""
    for probe in parts.probes:
        answer = probe.turn("answer")
        if answer is None or ANSWER not in answer.text:
            continue
        view = parts.visible(probe, answer)
        block = split_block(view[: view.find(ANSWER)].strip(), NEEDLE)
        if block is not None:
            return block, (
                probe.first_turn_render(),
                answer.render,
            )
    return None, pair


def propose_reasoning(
    parts: Parts,
    opener: str,
    how: str,
    pair: tuple[Render, ...],
    closer: str | None = None,
    source: str = "",
) -> bool:
    """Reasoning opened by `opener` (a marker evidence shows but no render writes reasoning after):
    its closer is `closer`, or the opener's closing form, confirmed when the chat template drops an
    earlier turn's text up to it. Returns whether a reasoning field was made (an unconfirmed closer
    only when it comes from the prompt itself, `source` "")."""
    candidates = [closer] if closer else closing_forms(opener)
    confirmed = next((each for each in candidates if _dropped_before(parts.probes[0], each)), None)
    if confirmed is None and (source or not candidates):
        if not source:
            parts.book.notes.append(
                f"the prompt pre-writes {opener!r} but no render shows how it closes: no reasoning field"
            )
        return False
    chosen = confirmed or candidates[0]
    parts.reasoning = Reasoning(opener, chosen)
    parts.book.find("fields.reasoning_content.open", opener, how, *pair)
    parts.book.find(
        "fields.reasoning_content.close",
        chosen,
        (
            "the closing form of the opener; confirmed: the chat template drops an earlier turn's "
            "text up to it"
            if confirmed
            else "the closing form of the opener (no render confirms it)"
        )
        if closer is None
        else f"{source}; confirmed: the chat template drops an earlier turn's text up to it",
        *pair,
    )
    if closer is None:
        parts.book.fallbacks.append(
            f"reasoning close {chosen!r}: no render writes reasoning, so the closer is the opener's closing form"
            + ("" if confirmed else ", unconfirmed by any render")
        )
    return True


def propose_from_pairs(
    parts: Parts,
    pairs: list[tuple[str, str]],
    evidence: tuple[Render, ...],
    how: str,
    source: str,
) -> bool:
    """Reasoning from the first (opener, closer) of `pairs` (markers that evidence other than the
    renders pairs: the chat template's source, the tokenizer) that the chat template confirms
    (`propose_reasoning` with `closer`, `how` and `source` its wording). Each pair costs one
    render. Returns whether a reasoning field was made.

    Raises:
        InferenceTimeout: past the deadline (checked before each pair).
    """
    for opener, closer in pairs:
        parts.check_deadline("trying reasoning markers that other evidence pairs")
        if propose_reasoning(parts, opener, how, evidence, closer=closer, source=source):
            return True
    return False


def _dropped_before(probe: Probe, closer: str) -> bool:
    """Whether the chat template drops an earlier turn's text up to `closer` (as templates that keep
    reasoning out of history do)."""
    ask = {"role": "user", "content": QUESTION}
    message = assistant(content=f"{REASONING}{closer}{ANSWER}")
    full = probe.render([ask, message, {"role": "user", "content": SECOND_QUESTION}])
    return full is not None and ANSWER in full and REASONING not in full


def learn_prefill_after_opener(parts: Parts) -> None:
    """An opener the prompt pre-writes, after which the chat template writes a continued answer
    (``continue_final_message``): in a prefix where text follows it, it is part of the anchor,
    so the prefilled text is the answer's, not reasoning. The anchor's lookahead reads the
    prefix only: a prompt that ends with the opener still opens the reasoning."""
    reasoning = parts.reasoning
    if reasoning is None or not reasoning.open:
        return
    for probe in parts.probes:
        prewritten = parts.prewritten.get(probe.mode, "").strip()
        continued = probe.prefill()
        if prewritten != reasoning.open or continued is None or not continued.endswith(ANSWER):
            continue
        before = continued[: -len(ANSWER)].rstrip()
        if not before.endswith(reasoning.open):
            continue
        tail = pattern_literal(reasoning.open) + r"(?=\s*\S)"
        if tail not in parts.optional_tails:
            parts.optional_tails.append(tail)
            parts.book.find(
                "start_anchor",
                reasoning.open,
                "the chat template writes a continued answer right after the opener the prompt "
                "pre-writes: where text follows the opener in the prefix, the opener is part of "
                "the anchor (the prefilled text is the answer's)",
                probe.first_prompt_render(),
                Render(probe.label("first turn, an answer continued"), continued),
            )
        return
