"""The judge of template inference's evidence: what a candidate template gets wrong on the
labelled outputs (example outputs, renders of known messages), one sentence each.

An output with an expected message is misread when the parse differs from it
(`engine.chat_templates.evidence.message_differences`); one without is misread when the parse
is implausible (`implausible`) or leaves as content the leading text the aligner proposes as
reasoning (`engine.chat_templates.align`).
"""

from __future__ import annotations

from ..errors import ResponseParseError
from .align import align_all
from .evidence import Example, implausible, message_differences, message_text, parse_example


def check_examples(
    template: dict,
    examples: list[Example],
    regex_timeout: float | None = 1.0,
    width: int | None = None,
) -> list[str]:
    """What `template` gets wrong on the examples, one sentence each, ``LABEL: why`` ([] when it
    reads them all).

    An example without `expected` is also misread when the text the aligner proposes as its
    reasoning (prose a marker every such example writes follows) is read as content. `width`
    shortens the values shown (`message_differences`)."""
    problems = []
    proposed = _proposed_reasoning(template, examples)
    for example in examples:
        try:
            message, errors = parse_example(template, example, regex_timeout)
        except (ResponseParseError, ValueError) as error:
            problems.append(f"{example.label}: the parse failed: {error}")
            continue
        if errors:
            problems.append(f"{example.label}: {errors[0]}")
            continue
        wrong = (
            message_differences(example.expected, message, width)
            if example.expected is not None
            else implausible(message, example)
        )
        reasoning = proposed.get(example.index, "")
        if reasoning and reasoning in message_text(message.get("content")):
            wrong.append(
                f"{reasoning[:60]!r}, followed by the marker that ends every example's leading "
                "text, is read as content, not reasoning"
            )
        if wrong:
            problems.append(f"{example.label}: {'; '.join(wrong)}")
    return problems


def _proposed_reasoning(template: dict, examples: list[Example]) -> dict[int, str]:
    """{example index: the text the aligner proposes as reasoning} for the examples with no
    expected message."""
    if all(example.expected is not None for example in examples):
        return {}
    from ..template import load_template

    try:
        anchor = load_template(template).start_anchor.pattern
    except ValueError:
        return {}
    found = {}
    for example, alignment in zip(examples, align_all(examples, anchor)):
        if example.expected is None and alignment is not None:
            for span in alignment.of("reasoning"):
                found[example.index] = alignment.text[span.start : span.end]
    return found
