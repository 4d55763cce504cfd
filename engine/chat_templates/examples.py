"""Template inference, example outputs: what the model really wrote, when the author has it.

Renders show what a chat template writes; a model's outputs may differ (whitespace, a call
syntax the chat template never renders, markers no turn contains). An author who has outputs
gives them as examples, each a dict:

    {"prefix": PROMPT, "output": GENERATION, "tools": [...] (optional), "expected": MESSAGE (optional)}

and inference uses them two ways:

* `check_examples` (`engine.chat_templates.judge`): a candidate template is kept only when it
  parses every example without an error, to `expected` where given
  (`engine.chat_templates.evidence.message_differences`), and otherwise to a plausible message
  (each call names a given tool, with arguments its schema knows);
* `learn_from_examples`: where the template the renders give misreads an example, the aligner
  (`engine.chat_templates.example_fields.learn_template`) learns every part from where each
  part of the examples' messages stands in their text: the call syntax, the reasoning's
  markers, the markers no field explains (content closes). The same aligner reads the
  renders as labelled outputs: first for the calls' syntax, before the candidates are built
  (`aligned_calls`), then, where no candidate reads all the evidence, for a whole template
  (`learn_from_renders`), alone and together with the examples.

Nothing here knows a model family: the markers are the examples' own.
"""

from __future__ import annotations

import json

import regex

from ..errors import ResponseParseError
from ..pattern_shapes import pattern_literal
from .align import align_all
from .calls import CallSyntax
from .candidates import candidates, split_content_closes
from .evidence import (
    Example,
    labelled_renders,
    message_text,
    parse_example,
)
from .evidence import read_examples as read_examples  # where callers have always found it
from .example_fields import NotLearnt, learn_from_most, learn_template
from .judge import check_examples
from .probes import Finding
from .turns import argument_defects

# -- what the examples teach ------------------------------------------------------------------------


def learn_from_examples(parts, examples: list[Example], regex_timeout: float | None = 1.0) -> None:
    """Where the template the renders give misreads an example (or misses reasoning or calls an
    example without an expected message shows), the template the aligner learns from the
    examples: one learner for every part (the call syntax, the reasoning, the markers no field
    explains), the one that also reads the renders (`learn_from_renders`)."""
    first = candidates(parts)[0][1]
    if check_examples(first, examples, regex_timeout) or _proposal_unread(first, examples):
        _learn_by_alignment(parts, first, examples, regex_timeout)


def _proposal_unread(template: dict, examples: list[Example]) -> bool:
    """Whether the aligner proposes, for an example with no expected message, reasoning or calls
    that `template` does not read (a plausible reading may still miss them)."""
    from ..template import load_template

    anchor = load_template(template).start_anchor.pattern
    for example, alignment in zip(examples, align_all(examples, anchor)):
        if example.expected is not None or alignment is None:
            continue
        try:
            message, _ = parse_example(template, example)
        except (ResponseParseError, ValueError):
            return True
        if (alignment.of("reasoning") and not message_text(message.get("reasoning_content"))) or (
            alignment.of("calls") and not message.get("tool_calls")
        ):
            return True
    return False


def _learn_by_alignment(parts, first: dict, examples: list[Example], regex_timeout) -> None:
    """Where the template the renders give still misreads an example, a template whose fields
    are learnt by aligning each example's message with its text (it keeps `first`'s start
    anchor, content closes and the fields no example shows); kept as the first candidate when
    it reads more examples than `first` (every one, or as many as agree:
    `engine.chat_templates.example_fields.learn_from_most`),
    else the reason is noted."""
    try:
        learnt, taught = learn_from_most(examples, first, regex_timeout)
    except NotLearnt as error:
        parts.book.notes.append(
            f"aligning the example outputs gave no template that reads them all: {error}"
        )
        return
    parts.example_template = learnt.template
    evidence = [example.render() for example in taught[:2]]
    for key, value, how in learnt.findings:
        parts.book.find(key, value, f"{how} (aligned with the example outputs)", *evidence)
    labels = ", ".join(example.label for example in taught)
    if "tool_calls" in learnt.template["fields"]:
        parts.book.found_elsewhere("tool_calls")
        parts.book.fallbacks = [f for f in parts.book.fallbacks if not f.startswith("tool calls ")]
        if first["fields"].get("tool_calls") != learnt.template["fields"]["tool_calls"]:
            writers = ", ".join(e.label for e in taught if _calls_read(learnt.template, e))
            parts.book.notes.append(
                f"the tool-call syntax comes from the example outputs ({writers or labels})"
            )
    learnt_from = "the example outputs" if len(taught) == len(examples) else labels
    parts.book.notes.append(
        f"a template learnt by aligning {learnt_from} ({learnt.description}) is tried first"
    )
    for example, text in learnt.assumptions:
        parts.book.find(
            "assumed",
            text,
            "no expected message was given: a guess the example's own text suggests",
            example.render(),
        )


def _calls_read(template: dict, example: Example) -> bool:
    """Whether `template` reads a call in `example`'s output."""
    try:
        message, _ = parse_example(template, example)
    except (ResponseParseError, ValueError):
        return False
    return bool(message.get("tool_calls"))


def _misreads_calls(template: dict, examples: list[Example], regex_timeout: float | None) -> bool:
    return any(
        "tool_calls" in problem or "no call was read" in problem
        for problem in check_examples(template, examples, regex_timeout)
    )


# -- what the renders teach the same way ------------------------------------------------------------


def learn_from_renders(
    parts, regex_timeout: float | None = 1.0, examples: list[Example] | None = None
) -> None:
    """The aligner run over the chat template's renders, each a labelled output (the message it
    was rendered from and the text it became: `engine.chat_templates.evidence.labelled_renders`),
    exactly as over example outputs: a template whose fields are learnt from where each part of
    the message stands. Kept in `parts.render_template` (a candidate the conformance matrix
    judges with the others, its findings in `parts.render_findings`) when it reads every render
    back and differs from the candidates the renders' differences give; else the reason is noted.

    With `examples`, the aligner also runs over the renders and the examples together, one pass
    over all the evidence: a render shows what one example cannot (two calls in a turn, a part
    the examples never write) and an example what no render does (the model's own syntax). That
    template, when it reads all of them back, is `parts.evidence_template`."""
    rendered = labelled_renders(parts.probes)
    if not rendered:
        return
    built = [template for description, template in candidates(parts)]
    base = next(
        (template for template in built if template is not parts.example_template), built[0]
    )
    learnt, taught = _aligned_renders(parts, rendered, built, base, regex_timeout)
    if learnt is not None and learnt.template not in built:
        parts.render_template = learnt.template
        parts.render_findings = _findings(learnt, rendered, "the renders")
    if not examples:
        return
    try:
        joint = learn_template([*rendered, *examples], base, regex_timeout)
    except NotLearnt as error:
        parts.book.notes.append(
            f"aligning the renders and the example outputs together gave no template that reads "
            f"them all: {error}"
        )
        return
    if joint.template not in built and joint.template != parts.render_template:
        parts.evidence_template = joint.template
        parts.evidence_findings = _findings(
            joint, [*examples[:1], *rendered[:1]], "the renders and the examples"
        )


def _aligned_renders(parts, rendered: list[Example], built: list[dict], base: dict, regex_timeout):
    """(the template the aligner learns from `rendered` over `base`, the renders it was learnt
    from), or (None, []) with the reason noted: learnt again from another reading of the
    reasoning when the first lost it, and from the anchor cut before a recipient marker when
    that reads more renders."""
    try:
        # A render the chat template writes unlike its message (an answer before a call put in
        # the reasoning's channel) costs the others nothing: learnt from those that agree.
        learnt, taught = learn_from_most(rendered, base, regex_timeout, leave_out_each=False)
    except NotLearnt as error:
        learnt, taught = None, []
        note = f"aligning the renders gave no template that reads them all: {error}"
        if note not in parts.book.notes:  # the calls' learner may have said it already
            parts.book.notes.append(note)
    if learnt is not None:
        learnt, taught = _keeping_reasoning(built, base, rendered, (learnt, taught), regex_timeout)
    shorter = _anchored_before_call_marker(parts, base, rendered)
    if shorter is not None and len(taught) < len(rendered):
        try:
            again, again_taught = learn_from_most(
                rendered, shorter, regex_timeout, leave_out_each=False
            )
        except NotLearnt:
            pass
        else:
            if len(again_taught) > len(taught):
                learnt, taught = again, again_taught
    return learnt, taught


def aligned_calls(parts, regex_timeout: float | None = 1.0) -> CallSyntax | None:
    """The tool-call syntax the aligner learns from the renders (each a labelled output), as the
    learners after it and the candidates take it (`CallSyntax`): the `tool_calls` field; the
    content closes it adds, markers around the calls that no turn without a call writes (its
    `content_closes`, and `close_patterns` for those with a varying word); what a call starts
    with (for reasoning a call ends); the recipient marker the header ends with, when the
    renders were read with the anchor cut before it (`prewritten`); and the findings with the
    call renders that show them. None when no render shows a call or the aligner reads none
    (`regex_timeout`: seconds per regex call)."""
    rendered = labelled_renders(parts.probes)
    calling = [example for example in rendered if (example.expected or {}).get("tool_calls")]
    if not calling:
        return None
    built = [template for description, template in candidates(parts)]
    learnt, taught = _aligned_renders(parts, rendered, built, built[0], regex_timeout)
    if not _reads_calls(learnt):
        # Renders that write an argument in a form that loses its value (a string left bare
        # after its key) are evidence only when a reading holds them too: else the others teach.
        readable = [example for example in rendered if not _loses_values(example)]
        calling = [example for example in calling if example in readable]
        if calling and len(readable) < len(rendered):
            rendered, noted = readable, len(parts.book.notes)
            learnt, taught = _aligned_renders(parts, rendered, built, built[0], regex_timeout)
            if learnt is None:
                del parts.book.notes[noted:]  # the reason the first reading gave stands
    if not _reads_calls(learnt):
        return None
    spec = learnt.template["fields"]["tool_calls"]
    closes, patterns = split_content_closes(learnt.template["fields"].get("content", {}))
    if closes is None:
        return None
    # The markers around the calls: written where calls are, never in a turn without one.
    plain = [example.output for example in rendered if example not in calling]
    added = [
        close
        for close in closes
        if close not in parts.closes and not any(close in output for output in plain)
    ]
    added_patterns = [
        pattern
        for pattern in patterns
        if pattern not in parts.close_patterns
        and not any(regex.search(pattern, output, timeout=regex_timeout) for output in plain)
    ]
    start = spec.get("open_pattern") or (pattern_literal(spec["open"]) if "open" in spec else "")
    # Where a call starts, as another field's pattern: its named groups (the call's name) are
    # the call field's own; a back-reference to one cannot be written elsewhere.
    start = "" if "(?P=" in start else regex.sub(r"\(\?P<\w+>", "(?:", start)
    shown = [example for example in taught if example in calling] or calling
    evidence = tuple(example.render() for example in shown[:2])
    findings = [
        Finding(key, value, how.replace("the examples", "the renders"), evidence)
        for key, value, how in learnt.findings
        if key.startswith("fields.tool_calls") or key == "fields.content.close"
    ]
    aligner_keys = {finding.key for finding in findings}  # the whole field's, where given
    findings += [
        finding
        for finding in _call_findings(spec, learnt.description, rendered, calling)
        if not (finding.key == "fields.tool_calls.content" and "fields.tool_calls" in aligner_keys)
    ]
    # A section marker written before the first call starts the calls too (for a reasoning
    # that a call ends).
    heads = [
        pattern_literal(close)
        for close in added
        if any(0 <= example.output.find(close) < _first_name_at(example) for example in calling)
    ]
    starts = [*heads, start] if start else heads
    return CallSyntax(
        spec,
        added,
        starts,
        learnt.description,
        findings,
        _prewritten_marker(parts, built[0], learnt.template),
        spec.get("open", ""),
        added_patterns,
    )


def _reads_calls(learnt) -> bool:
    """Whether the aligner learnt a template (`learnt`, or None) with a tool-call field."""
    return learnt is not None and "tool_calls" in learnt.template["fields"]


def _loses_values(example: Example) -> bool:
    """Whether a render writes an argument of its message in a form that loses its value
    (`engine.chat_templates.turns.argument_defects`)."""
    return bool(argument_defects(example.expected or {}, example.output))


def _prewritten_marker(parts, base: dict, learnt: dict) -> str:
    """The marker the header ends with when the aligner read the renders with the anchor cut
    before it (a recipient marker the generation prompt pre-writes: the message starts with
    it, see `_anchored_before_call_marker`), else ""."""
    keys = ("start_anchor", "start_anchor_pattern")
    if all(base.get(key) == learnt.get(key) for key in keys):
        return ""
    marker = _header_marker(parts)
    return marker.group() if marker else ""


def _header_marker(parts) -> regex.Match | None:
    """The marker the header ends with (a run of punctuation, maybe ending with ``=``: ``>>>``,
    ``::to=``), matched in the header without its trailing blanks, or None."""
    return regex.search(r"[^\w\s]+=?$", parts.header.rstrip())


def _call_findings(
    spec: dict, description: str, rendered: list[Example], calling: list[Example]
) -> list[Finding]:
    """A finding for each delimiter and choice of the call field the aligner learnt from the
    renders, each shown by two renders: one call and two where the chat template renders two,
    else one call and the answer (one call alone where the chat template renders no answer).

    Returns:
        The findings of ``fields.tool_calls.content``, its open and close keys, and `repeats`
        where two calls are rendered.
    """
    one = next((e for e in calling if len(e.expected["tool_calls"]) == 1), calling[0])
    two = next((e for e in calling if len(e.expected["tool_calls"]) > 1), None)
    answer = next((e for e in rendered if not (e.expected or {}).get("tool_calls")), None)
    other = two if two is not None else answer
    pair = (one.render(),) if other is None else (one.render(), other.render())
    found = [
        Finding(
            "fields.tool_calls.content",
            spec["content"],
            f"the renders write each call's payload as {description}: read back as its name "
            "and arguments",
            pair,
        )
    ]
    for key in ("open", "open_pattern"):
        if key in spec:
            how = "what every render writes where a call starts, aligned with its message's calls"
            if spec[key].startswith("(?="):
                how += ": only a look ahead, the call's payload starts the call"
            found.append(Finding(f"fields.tool_calls.{key}", spec[key], how, pair))
    for key in ("close", "close_pattern"):
        if key in spec:
            how = (
                "what every render writes right after a call's payload; where it writes "
                "nothing, the next call's start or the end of the turn"
            )
            found.append(Finding(f"fields.tool_calls.{key}", spec[key], how, pair))
    if spec.get("repeats") and two is not None:
        found.append(
            Finding(
                "fields.tool_calls.repeats",
                True,
                "the render of two calls writes them one after the other",
                (one.render(), two.render()),
            )
        )
    return found


def _first_name_at(example: Example) -> int:
    """Where the first call's name stands in the example's output (-1 when it does not)."""
    return example.output.find(example.expected["tool_calls"][0]["function"]["name"])


def _keeping_reasoning(
    built: list[dict], base: dict, rendered: list[Example], first, regex_timeout
):
    """`first` (a learnt template and the renders it was learnt from), or, when it lost the
    reasoning field `base` has (that reading misread a render without reasoning: an open at the
    turn's start takes the answer too), what the aligner learns from the next candidate with
    another reading of the reasoning that keeps it and reads as many renders."""
    learnt, taught = first
    reasoning = base["fields"].get("reasoning_content")
    if reasoning is None or "reasoning_content" in learnt.template["fields"]:
        return first
    others = {
        json.dumps(template["fields"]["reasoning_content"], sort_keys=True): template
        for template in built
        if template["fields"].get("reasoning_content") not in (None, reasoning)
    }
    for other in others.values():
        try:
            again, again_taught = learn_from_most(
                rendered, other, regex_timeout, leave_out_each=False
            )
        except NotLearnt:
            continue
        if "reasoning_content" in again.template["fields"] and len(again_taught) >= len(taught):
            return again, again_taught
    return first


def _anchored_before_call_marker(parts, base: dict, rendered: list[Example]) -> dict | None:
    """`base` with its start anchor cut before the marker the header ends with, when the renders
    also write that marker right before a call's name (``>>>`` before the second of two calls):
    the generation prompt pre-writes it as the start of the message, a recipient marker the
    model completes with a name or with a word that heads its answer. None otherwise."""
    from .candidates import anchors_as_keys

    header = parts.header.rstrip()
    marker = _header_marker(parts)
    if marker is None or marker.start() == 0:
        return None
    names = {
        call["function"]["name"]
        for example in rendered
        for call in (example.expected or {}).get("tool_calls", [])
    }
    if not names:
        return None
    heads = regex.compile(
        regex.escape(marker.group()) + r"\s*(?:" + "|".join(map(regex.escape, names)) + ")"
    )
    if not any(heads.search(example.output) for example in rendered):
        return None
    anchors = [
        header[: marker.start()].rstrip() if anchor == header else anchor
        for anchor in parts.anchors
    ]
    keys = anchors_as_keys(anchors, parts.optional_tails)
    return {"defaults": base["defaults"], **keys, "fields": base["fields"]}


def _findings(learnt, shown: list[Example], by: str) -> list[Finding]:
    """The findings of a template the aligner learnt, each shown by the first two of `shown`
    and saying which evidence (`by`) taught it."""
    evidence = tuple(example.render() for example in shown[:2])
    return [
        Finding(key, value, how.replace("the examples", by), evidence)
        for key, value, how in learnt.findings
    ]
