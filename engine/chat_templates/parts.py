"""Template inference, shared state: what each learner found, and the record of why.

Inference learns a template part by part (`engine.chat_templates.learner` runs them in
order): the start anchor, the reasoning field, the content's closes, the tool calls. Each
part reads what the parts before it found, so they share one `Parts`, and every decision
goes into its `Notebook`: a `Finding` with the renders (or other evidence) that show it, a
fallback where nothing could decide, a note, or a `MissingPart` where a part of the
template could not be learnt or expressed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .probes import Finding, Probe, Render, Turn, check_deadline

if TYPE_CHECKING:
    from .calls import CallSyntax


class InferenceError(ValueError):
    """Nothing can be inferred from the chat template; the message says why.

    Attributes:
        hint: what a caller may change for another try, for it to name in its own terms (a
            command-line option, a server's setting): ``"time_budget"``, inference ran out of
            time and a larger budget may let it finish; ``"memory"``, it ran out of memory; ""
            when the chat template itself gives nothing to infer from.
    """

    def __init__(self, message: str, *, hint: str = ""):
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True)
class MissingPart:
    """A part of the template inference could not learn or the template language cannot express.

    Attributes:
        part: the message key it concerns (``tool_calls``, ``reasoning_content``).
        why: one sentence: what is missing and what would give it (example outputs, a construct
            the template language lacks).
        construct: the construct of the template language that would express it, when that is
            what is missing ("" when evidence is missing instead).
    """

    part: str
    why: str
    construct: str = ""

    def to_dict(self) -> dict:
        return {"part": self.part, "why": self.why, "construct": self.construct}

    def sentence(self) -> str:
        return f"{self.part} not inferred: {self.why}" + (
            f" (the template language lacks {self.construct})" if self.construct else ""
        )


@dataclass
class Notebook:
    """What inference wrote down while learning.

    Attributes:
        findings: each delimiter and choice with the evidence that shows it.
        fallbacks: the documented fallbacks used, as sentences.
        notes: what was not found or was left out, and why.
        missing: the parts of the template that could not be learnt or expressed.
    """

    findings: list[Finding] = field(default_factory=list)
    fallbacks: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing: list[MissingPart] = field(default_factory=list)

    def find(self, key: str, value: Any, how: str, *renders: Render) -> None:
        self.findings.append(Finding(key, value, how, tuple(renders)))

    def found_elsewhere(self, part: str) -> None:
        """`part` was learnt from other evidence than the renders: it is no longer missing, and the
        notes say that no render shows it rather than that it is absent."""
        self.missing = [each for each in self.missing if each.part != part]
        self.findings = [
            f for f in self.findings if not (f.key == f"fields.{part}" and f.value is None)
        ]
        self.notes = [
            note.replace(f"no {part} field: ", f"no render shows the {part}: ", 1)
            for note in self.notes
        ]

    def lack(self, part: str, why: str, construct: str = "") -> None:
        if not any(known.part == part for known in self.missing):
            self.missing.append(MissingPart(part, why, construct))


@dataclass
class Reasoning:
    """The reasoning field's markers (`open` "" with `at_start`: the turn starts inside it)."""

    open: str
    close: str
    at_start: bool = False


@dataclass
class Parts:
    """The parts learnt so far, filled in order by the learners.

    Attributes:
        probes: one per thinking mode whose prompt renders.
        eos_token: the tokenizer's end of sequence (a content close).
        book: the findings, fallbacks, notes and missing parts.
        switch: the chat template's thinking switch, or None.
        has_examples: whether example outputs were given (some candidates only they can choose).
        generation_prompts: what each mode's first-turn generation prompt writes.
        anchors: the start anchors (literals; blanks inside make them a pattern).
        optional_tails: patterns of what a prompt may write after an anchor that belongs to it
            (an optional part of the anchor): a plain-text lead the finished turn lacks, or a
            pre-written opener that a prefilled answer follows.
        header: the new turn's header.
        turn_start: the marker every turn of a render starts with, or "".
        prewritten: per mode, what the first-turn prompt writes after the start anchor.
        reasoning: the reasoning markers, or None.
        reasoning_renders: the two renders that show them.
        closes: the implicit content field's closes, in the order found.
        close_patterns: its closes that are patterns (a marker with a word that varies, such
            as a call's id), in the order found.
        calls: the tool-call syntax, or None.
        answer_end: (probe, answer turn, whether an end of turn is written) once known.
        example_template: a template learnt by aligning the example outputs, tried first, or None.
        render_template: a template learnt by aligning the renders with their messages (as
            example outputs are), tried after the others, or None.
        render_findings: the findings that show `render_template`'s fields.
        evidence_template: a template learnt by aligning the renders and the example outputs
            together (one pass over all the evidence), tried after the others, or None.
        evidence_findings: the findings that show `evidence_template`'s fields.
    """

    probes: list[Probe]
    eos_token: str
    book: Notebook
    switch: str | None = None
    has_examples: bool = False
    generation_prompts: dict[str, str] = field(default_factory=dict)
    anchors: list[str] = field(default_factory=list)
    optional_tails: list[str] = field(default_factory=list)
    header: str = ""
    turn_start: str = ""
    prewritten: dict[str, str] = field(default_factory=dict)
    reasoning: Reasoning | None = None
    reasoning_renders: tuple[Render, ...] = ()
    closes: list[str] = field(default_factory=list)
    close_patterns: list[str] = field(default_factory=list)
    calls: CallSyntax | None = None
    answer_end: tuple = (None, None, False)
    example_template: dict | None = None
    render_template: dict | None = None
    render_findings: list[Finding] = field(default_factory=list)
    evidence_template: dict | None = None
    evidence_findings: list[Finding] = field(default_factory=list)

    def add_close(self, text: str) -> bool:
        """Add a content close; False when it was known already (or empty)."""
        if text and text not in self.closes:
            self.closes.append(text)
            return True
        return False

    def check_deadline(self, doing: str) -> None:
        """Raise `InferenceTimeout` past the probes' deadline; `doing` says what for the message."""
        check_deadline(self.probes[0].deadline, doing)

    def used_markers(self) -> list[str]:
        """The texts the learnt parts use: the content's closes, the start anchors, the reasoning's
        markers and the tool-call field's strings (its delimiters and patterns)."""
        found = [*self.closes, *self.anchors]
        if self.reasoning is not None:
            found += [self.reasoning.open, self.reasoning.close]
        if self.calls is not None:
            found += [value for value in self.calls.field.values() if isinstance(value, str)]
        return [text for text in found if text]

    def unwritten(self, groups: list[tuple[str, ...]], written: set[str]) -> list[tuple[str, ...]]:
        """The groups of markers (one marker, or an opener and its closer) that evidence other than
        the renders proposes and that nothing explains: no marker of the group is in `written`
        (the markup tokens of every render, `MARKUP_TOKEN` matches) or inside a text the learnt
        parts use (`used_markers`): one set look-up and a few substring tests a marker."""
        used = self.used_markers()
        return [
            group
            for group in groups
            if not any(
                marker in written or any(marker in text for text in used) for marker in group
            )
        ]

    def visible(self, probe: Probe, turn: Turn) -> str:
        """The turn as the parser sees it: what the prompt pre-writes after the anchor, then the
        generation."""
        prewritten = self.prewritten.get(probe.mode, "")
        if turn.missing and prewritten.endswith(turn.missing):
            prewritten = prewritten[: -len(turn.missing)]
        elif turn.missing:
            prewritten = ""
        return prewritten + turn.text
