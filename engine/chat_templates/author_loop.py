"""The author's loop: learn a template from example outputs, find the outputs it cannot read, add
the first of them to the examples, and learn again, round by round.

Each round learns from every example so far (the earlier ones stay, so what they taught stays
asked for), then checks the learnt template on the examples and on the outputs not yet added
(`engine.chat_templates.judge.check_examples`: the expected message where given, else a
plausible one). A round says what it fixed and what it lost: an example or an output the
best round before it read that this one misreads. A round that is no better than the best
before it sets the output it added aside, and the next round starts again from the best
round's examples with the next output that round misreads, so no round builds on a lesson
lost. The loop stops when the best round reads every output, when the examples reach the
number asked for, or when every output the best round misreads has been tried with its
examples (a new best round tries them all again). The template kept (`kept_round`) is the best
round's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from .evidence import Example
from .judge import check_examples

# Characters of a value shown in a misread's line (the stretch around the first difference).
SHOWN_WIDTH = 60


@dataclass
class Misread:
    """One labelled output a template does not read right.

    Attributes:
        label: which output ("example 2", "output 5").
        why: how the parse differs from its expected message, or why it is implausible.
        lost: True when the best round before this one read it (this round lost a lesson).
    """

    label: str
    why: str
    lost: bool = False

    def line(self) -> str:
        """The misread as a report line: ``"LOST output 2: why"`` or ``"UNREAD output 2: why"``."""
        return f"{'LOST' if self.lost else 'UNREAD'} {self.label}: {self.why}"

    def to_dict(self) -> dict:
        """The misread for JSON: ``{"label": str, "why": str, "lost": bool}``."""
        return {"label": self.label, "why": self.why, "lost": self.lost}


@dataclass
class Round:
    """One round of the loop.

    Attributes:
        number: 1 for the first round.
        examples: the labels of the examples learnt from, in order.
        outputs: how many outputs (not examples) were checked.
        template: the learnt template, None when learning failed.
        result: what the learner returned (an `InferredTemplate` for `infer_template`), or None.
        misread_examples: the examples the template misreads.
        misread_outputs: the outputs it misreads, in file order.
        error: why learning failed ("" when it did not).
        set_aside: when the round is no better than the best before it, which output it added
            is set aside, and why ("" otherwise).
        added: the label of the output added to the examples for the next round ("" when none).
    """

    number: int
    examples: list[str]
    outputs: int
    template: dict | None = None
    result: object = None
    misread_examples: list[Misread] = field(default_factory=list)
    misread_outputs: list[Misread] = field(default_factory=list)
    error: str = ""
    set_aside: str = ""
    added: str = ""

    @property
    def read_outputs(self) -> int:
        """How many of the round's `outputs` its template reads (an int; meaningless when
        learning failed, where there is no template)."""
        return self.outputs - len(self.misread_outputs)

    def lines(self) -> list[str]:
        """The round's report: a headline, a line per misread (``LOST`` first), the next step."""
        named = f" ({', '.join(self.examples)})" if self.examples else ""
        count = len(self.examples)
        head = f"round {self.number}: {count} example{'' if count == 1 else 's'}{named}"
        if self.error:
            found = [f"{head}: learning failed: {self.error}"]
        else:
            examples_read = len(self.examples) - len(self.misread_examples)
            read = f"{head}: outputs {self.read_outputs} of {self.outputs} read"
            if self.examples:
                read += f", examples {examples_read} of {len(self.examples)} read"
            found = [read]
        misread = sorted(
            (*self.misread_examples, *self.misread_outputs), key=lambda each: not each.lost
        )
        found += [f"  {each.line()}" for each in misread]
        if self.set_aside:
            found.append(f"  {self.set_aside}")
        if self.added:
            found.append(f"  adding {self.added} to the examples")
        return found

    def to_dict(self) -> dict:
        """The round for JSON: ``{"round": int, "examples": [label], "outputs": int,
        "outputs_read": int (0 when learning failed), "misread_examples": [Misread.to_dict()],
        "misread_outputs": [...], "error": str, "set_aside": str, "added": str}``."""
        return {
            "round": self.number,
            "examples": self.examples,
            "outputs": self.outputs,
            "outputs_read": self.read_outputs if not self.error else 0,
            "misread_examples": [each.to_dict() for each in self.misread_examples],
            "misread_outputs": [each.to_dict() for each in self.misread_outputs],
            "error": self.error,
            "set_aside": self.set_aside,
            "added": self.added,
        }


def _misreads(template: dict, evidence: list[Example], width: int | None = SHOWN_WIDTH) -> dict:
    """{label: why} of each of `evidence` that `template` misreads (labels must be distinct)."""
    found = {}
    for problem in check_examples(template, evidence, width=width):
        label, _, why = problem.partition(": ")
        found[label] = why
    return found


def _labelled(examples: list[Example], outputs: list[Example]) -> tuple[list, list]:
    """The examples and outputs renumbered as one list (the judge keys its proposals by index)
    and named by their own labels ("example 1", "output 3"), so an output keeps its name once
    added to the examples."""
    named = [replace(each, name=each.label) for each in (*examples, *outputs)]
    numbered = [replace(each, index=index) for index, each in enumerate(named)]
    return numbered[: len(examples)], numbered[len(examples) :]


def author_loop(
    learn: Callable[[list[dict]], object],
    examples: list[Example],
    outputs: list[Example],
    most_examples: int,
    on_round: Callable[[Round], None] | None = None,
    template_of: Callable[[object], dict] = lambda result: result.template,
) -> list[Round]:
    """Run the author's loop.

    Each round learns from the examples of the best round so far plus the output added, and
    checks every example and output. A round that misreads fewer of them than the best so far
    becomes the best; one that does not (or whose learning fails) sets its added output aside,
    and the next round starts again from the best round's examples. What an output is added
    for is to be read: the output added is the first the best round's template misreads that
    was not tried yet with its examples. A misread is `lost` when the best round so far read it.

    Args:
        learn: learns from examples given as dicts (`Example.to_dict`, named: "output 2" stays
            "output 2" in what it reports): returns a result whose template `template_of`
            gives. A ValueError it raises (nothing could be learnt) in the first round is
            raised here (nothing to loop on); in a later round it sets the output added aside (an `InferenceError` with hint "time_budget" says it ran out of
            time: the time allowed is per round, so N rounds may take N times it).
        examples: the examples to start from (`engine.chat_templates.evidence.read_examples`).
        outputs: the other outputs (kind "output"), in the order they are tried.
        most_examples: the examples the loop may grow to (a round adds one output).
        on_round: called with each round once it is checked (to report it as it comes).
        template_of: the template of what `learn` returns.

    Returns:
        The rounds, in order (at least one); `kept_round` gives the best.

    Raises:
        ValueError: what `learn` raised in the first round.
    """
    base, every_output = _labelled(examples, outputs)
    rounds: list[Round] = []
    best: Round | None = None
    tried: set[str] = set()
    added: Example | None = None
    while True:
        used = [*base, *([added] if added else [])]
        others = [each for each in every_output if each not in used]
        out_of_time = False
        current = Round(len(rounds) + 1, [each.label for each in used], len(others))
        rounds.append(current)
        try:
            current.result = learn([each.to_dict(with_name=True) for each in used])
        except ValueError as error:
            if best is None:
                raise
            current.error = str(error)
            # The time allowed is per round: running out of it says nothing of the output.
            out_of_time = getattr(error, "hint", "") == "time_budget"
        else:
            _check(current, template_of(current.result), used, others, best)
        if best is None or (not current.error and _misread(current) < _misread(best)):
            best, base = current, used
            # An output set aside against the old examples may teach the new ones.
            tried.clear()
        else:
            why = (
                ("learning ran out of time" if out_of_time else "learning failed with it")
                if current.error
                else f"its template misreads {_misread(current)}, no fewer than round "
                f"{best.number}'s ({_misread(best)})"
            )
            current.set_aside = (
                f"setting {added.label} aside: {why}, so the next round starts from round "
                f"{best.number}'s examples"
            )
        unread = {each.label for each in best.misread_outputs}
        candidates = [
            each
            for each in every_output
            if each.label in unread and each.label not in tried and each not in base
        ]
        added = candidates[0] if candidates and len(base) < most_examples else None
        if added is not None:
            tried.add(added.label)
            current.added = added.label
        if on_round:
            on_round(current)
        if added is None:
            return rounds


def _check(
    current: Round, template: dict, used: list[Example], others: list[Example], best
) -> None:
    """Fill the round's misreads of `used` and `others` with `template`, each `lost` when the
    best round so far read it."""
    current.template = template
    wrong = _misreads(template, [*used, *others])
    read_before = set()
    if best is not None:
        misread_before = {each.label for each in (*best.misread_examples, *best.misread_outputs)}
        read_before = {each.label for each in (*used, *others)} - misread_before
    current.misread_examples = [
        Misread(each.label, wrong[each.label], each.label in read_before)
        for each in used
        if each.label in wrong
    ]
    current.misread_outputs = [
        Misread(each.label, wrong[each.label], each.label in read_before)
        for each in others
        if each.label in wrong
    ]


def _misread(done: Round) -> int:
    return len(done.misread_examples) + len(done.misread_outputs)


def kept_round(rounds: list[Round]) -> Round:
    """The best round: the one whose template misreads the fewest of all the labelled outputs
    (the examples and the outputs: every round checks the same ones), the earliest of those on a
    tie (a round that fixes one output and loses another has not improved)."""
    return min(
        (each for each in rounds if each.template is not None),
        key=lambda each: len(each.misread_examples) + len(each.misread_outputs),
    )
