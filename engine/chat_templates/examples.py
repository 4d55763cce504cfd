"""Template inference, example outputs: what the model really wrote, when the author has it.

Renders show what a chat template writes; a model's outputs may differ (whitespace, a call
syntax the chat template never renders, markers no turn contains). An author who has outputs
gives them as examples, each a dict:

    {"prefix": PROMPT, "output": GENERATION, "tools": [...] (optional), "expected": MESSAGE (optional)}

and inference uses them three ways:

* `check_examples` (`engine.chat_templates.judge`): a candidate template is kept only when it
  parses every example without an error, to `expected` where given
  (`engine.chat_templates.evidence.message_differences`), and otherwise to a plausible message
  (each call names a given tool, with arguments its schema knows);
* `calls_from_examples`: where no render shows the call syntax, the text around the tools'
  names in the outputs proposes it: the markers before and after the calls and the payload
  between them, read by each payload parser; a syntax is kept only when it reads every
  example back;
* `unexplained_markers`: markers the chosen template leaves in an example's text (no field
  explains them) are proposed as content closes, and said.

Nothing here knows a model family: the markers are the examples' own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..content import parse_content
from ..errors import ResponseParseError
from ..pattern_shapes import pattern_literal
from .align import align_all
from .calls import CallSyntax
from .candidates import candidates
from .evidence import (
    Example,
    labelled_renders,
    message_text,
    names_pattern,
    parse_example,
    tool_properties,
)
from .evidence import read_examples as read_examples  # where callers have always found it
from .example_fields import NotLearnt, learn_template
from .judge import check_examples
from .markup import MARKUP_TOKEN
from .probes import Finding

# -- markers no field explains ------------------------------------------------------------------


def unexplained_markers(template: dict, examples: list[Example]) -> dict[str, Example]:
    """Markup tokens left in the content or reasoning of an example (no field explains them),
    each with the first example that shows it."""
    found: dict[str, Example] = {}
    for example in examples:
        try:
            message, _ = parse_example(template, example)
        except (ResponseParseError, ValueError):
            continue
        written = " ".join(
            message_text(message.get(key)) for key in ("content", "reasoning_content")
        )
        for token in MARKUP_TOKEN.findall(written):
            if token in example.output and not _mentioned(token, example):
                found.setdefault(token, example)
    return found


def _mentioned(token: str, example: Example) -> bool:
    """Whether the expected message itself holds the marker (it is text the model meant)."""
    expected = example.expected or {}
    return any(token in message_text(expected.get(key)) for key in ("content", "reasoning_content"))


# -- the call syntax from the examples -----------------------------------------------------------


@dataclass
class _Region:
    """Where the calls of one example lie: the marker before them, their payload, the marker after."""

    open: str
    payload: str
    close: str


def _call_region(example: Example) -> _Region | None:
    """The calls of `example`: from the last marker before the first tool name written to the
    first marker after the last, when each is a markup token; None when the output names no tool."""
    names = list(tool_properties(example.tools))
    spans = [m.span() for name in names for m in names_pattern(name).finditer(example.output)]
    if not spans:
        return None
    first, last = min(start for start, _ in spans), max(end for _, end in spans)
    output = example.output
    before = list(MARKUP_TOKEN.finditer(output, 0, first))
    after = MARKUP_TOKEN.search(output, last)
    if not before or after is None:
        return None
    opener = before[-1]
    return _Region(opener.group(), output[opener.end() : after.start()], after.group())


def _field_for(region: _Region, names: set[str]) -> tuple[dict, str] | None:
    """A `tool_calls` field that reads `region`'s payload, and its shape for people, or None."""
    payload = region.payload.strip()
    close = r"(?<=[}\]])\s*" + pattern_literal(region.close)
    try:
        calls = parse_content("python-call-list", payload, {})
    except ValueError:
        calls = None
    if calls:
        return (
            {
                "open": region.open,
                "close_pattern": close,
                "content": "python-call-list",
                "transform_each": True,
                "transform": {
                    "type": "function",
                    "function": {"name": "{name}", "arguments": "{arguments}"},
                },
            },
            "a Python-style list of calls",
        )
    try:
        value = json.loads(payload)
    except ValueError:
        return None
    items = value if isinstance(value, list) else [value]
    paths = [_name_and_arguments(item, names) for item in items if isinstance(item, dict)]
    if not paths or None in paths or len(set(paths)) != 1:
        return None
    name_key, arguments_key = paths[0]
    transform = {
        "type": "function",
        "function": {"name": "{" + name_key + "}", "arguments": "{" + arguments_key + "}"},
    }
    if isinstance(value, list):
        spec = {
            "open": region.open,
            "close_pattern": close,
            "content": "json",
            "transform_each": True,
        }
        return {**spec, "transform": transform}, "a JSON list of calls"
    transform["function"] = {
        "name": "{content." + name_key + "}",
        "arguments": "{content." + arguments_key + "}",
    }
    spec = {"open": region.open, "close_pattern": close, "repeats": True, "content": "json"}
    return {**spec, "transform": transform}, "a JSON object per call, the name inside"


def _name_and_arguments(item: dict, names: set[str]) -> tuple[str, str] | None:
    """The keys of a call object that hold the name (one of the tools') and the arguments (an object)."""
    name = next(
        (key for key, value in item.items() if isinstance(value, str) and value in names), None
    )
    arguments = next((key for key, value in item.items() if isinstance(value, dict)), None)
    return (name, arguments) if name and arguments else None


def calls_from_examples(
    base: dict, examples: list[Example], regex_timeout: float | None = 1.0
) -> tuple[CallSyntax, list[str]] | None:
    """A tool-call syntax the examples show (the text around the tools' names): the one with
    which `base` (a template without tool calls) misreads the fewest examples, the first on a
    tie, kept only when it reads more of them than `base` alone (an example whose calls no
    syntax reads back does not cost the others theirs); with the examples it was read from.
    None when no example writes a call, or no syntax reads one more example."""
    regions = [(example, _call_region(example)) for example in examples]
    regions = [(example, region) for example, region in regions if region is not None]
    best = len(check_examples(base, examples, regex_timeout))
    chosen = None
    for example, region in regions:
        found = _field_for(region, set(tool_properties(example.tools)))
        if found is None:
            continue
        spec, shape = found
        template = {**base, "fields": {"tool_calls": spec, **base["fields"]}}
        misread = len(check_examples(template, examples, regex_timeout))
        if misread < best:
            best, chosen = misread, (spec, shape, region)
        if not misread:
            break
    if chosen is not None:
        spec, shape, region = chosen
        evidence = [example.render() for example, _ in regions[:2]]
        syntax = CallSyntax(
            spec, [], [pattern_literal(region.open)], f"{shape}, as the examples write it"
        )
        reads = "it reads every example back" if not best else "it reads the most examples back"
        syntax.findings.append(
            Finding(
                "fields.tool_calls",
                spec,
                f"the examples write their calls as {shape} between {region.open!r} and "
                f"{region.close!r} (no render shows a call); {reads}",
                tuple(evidence),
            )
        )
        return syntax, [example.label for example, _ in regions]
    return None


# -- what the examples teach ------------------------------------------------------------------------


def learn_from_examples(parts, examples: list[Example], regex_timeout: float | None = 1.0) -> None:
    """The call syntax from the examples where the renders give none that reads them, and the
    markers they write that no field explains as content closes (each kept only when no example
    reads worse with it)."""
    first = candidates(parts)[0][1]
    if any(_call_region(example) for example in examples) and (
        parts.calls is None or _misreads_calls(first, examples, regex_timeout)
    ):
        base = {**first, "fields": {k: v for k, v in first["fields"].items() if k != "tool_calls"}}
        found = calls_from_examples(base, examples, regex_timeout)
        if found is not None:
            syntax, shown_by = found
            parts.calls = syntax
            parts.book.found_elsewhere("tool_calls")
            parts.book.fallbacks = [
                f for f in parts.book.fallbacks if not f.startswith("tool calls ")
            ]
            parts.book.findings += syntax.findings
            parts.book.notes.append(
                f"the tool-call syntax comes from the example outputs ({', '.join(shown_by)})"
            )
            first = candidates(parts)[0][1]
    # The aligner starts from the template before the markers below: a marker of a call's own
    # syntax (an opener with the name inside) would be dropped as text before its field opens.
    unmarked = first
    before = len(check_examples(first, examples, regex_timeout))
    # The markers around an example's calls are the calls' own: as a content close one would
    # take the calls as text, its marker dropped, and hide them from every later check.
    around_calls = {
        marker
        for region in map(_call_region, examples)
        if region is not None
        for marker in (region.open, region.close)
    }
    for marker, example in unexplained_markers(first, examples).items():
        if marker in around_calls:
            continue
        closes = first["fields"]["content"].get("close", [])
        closes = [closes] if isinstance(closes, str) else list(closes)
        trial = {
            **first,
            "fields": {
                **first["fields"],
                "content": {**first["fields"]["content"], "close": [*closes, marker]},
            },
        }
        if len(check_examples(trial, examples, regex_timeout)) > before:
            continue
        parts.add_close(marker)
        parts.book.find(
            "fields.content.close",
            marker,
            f"{example.label} writes it where no field explains it (no render does): a marker, "
            "dropped from the text",
            example.render(),
        )
        first = trial
    if check_examples(first, examples, regex_timeout) or _proposal_unread(first, examples):
        _learn_by_alignment(parts, unmarked, examples, regex_timeout)


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
    it reads every example back, else the reason is noted."""
    try:
        learnt = learn_template(examples, first, regex_timeout)
    except NotLearnt as error:
        parts.book.notes.append(
            f"aligning the example outputs gave no template that reads them all: {error}"
        )
        return
    parts.example_template = learnt.template
    evidence = [example.render() for example in examples[:2]]
    for key, value, how in learnt.findings:
        parts.book.find(key, value, f"{how} (aligned with the example outputs)", *evidence)
    parts.book.found_elsewhere("tool_calls")
    parts.book.notes.append(
        f"a template learnt by aligning the example outputs ({learnt.description}) is tried first"
    )
    for example, text in learnt.assumptions:
        parts.book.find(
            "assumed",
            text,
            "no expected message was given: a guess the example's own text suggests",
            example.render(),
        )


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
    try:
        learnt = learn_template(rendered, base, regex_timeout)
    except NotLearnt as error:
        parts.book.notes.append(
            f"aligning the renders gave no template that reads them all: {error}"
        )
    else:
        if learnt.template not in built:
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


def _findings(learnt, shown: list[Example], by: str) -> list[Finding]:
    """The findings of a template the aligner learnt, each shown by the first two of `shown`
    and saying which evidence (`by`) taught it."""
    evidence = tuple(example.render() for example in shown[:2])
    return [
        Finding(key, value, how.replace("the examples", by), evidence)
        for key, value, how in learnt.findings
    ]
