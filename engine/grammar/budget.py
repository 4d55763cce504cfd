"""What deriving and writing one grammar may spend: a deadline, grammar nodes, written characters.

A server that constrains generation derives a grammar from a template and tools its visitors
give, and some small inputs make a large grammar: a tool schema whose ``allOf`` parts refer to
the same definition at every level doubles with each level (a kilobyte of JSON, minutes of
work and gigabytes of nodes), and a template of many optional fields has many ways to start.
`GrammarBudget` bounds one derivation and the writing of its formats: `spend` is called for
every grammar node built or written (a schema value, a rule, a node a writer visits, a
self-check parse) and raises `GrammarTooLarge` once the nodes or the deadline are spent;
`check_written` does the same for the characters of a written grammar. Without a budget
(`derive_grammar`'s default) nothing is bounded, as for a command line run on one's own files.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


class GrammarTooLarge(ValueError):
    """The grammar passed a bound of its `GrammarBudget`. Not an `Unconstrainable` (which the
    planner notes and goes on past): it ends the derivation or the writing at once.

    Attributes:
        bound: which bound: ``"seconds"``, ``"nodes"`` or ``"chars"``.
        limit: the bound's value (seconds, nodes or characters).
        detail: what passed it ("building it took more than 5 s"); the message is
            "the grammar is too large: " and the detail.
    """

    def __init__(self, bound: str, limit: float, detail: str):
        super().__init__(f"the grammar is too large: {detail}")
        self.bound = bound
        self.limit = limit
        self.detail = detail


@dataclass
class GrammarBudget:
    """The bounds of one derivation and the writing of its formats (None: unbounded).

    Attributes:
        seconds: wall-clock seconds from the budget's creation until the last format is
            written (`deadline` is when they end, a `time.perf_counter()` value).
        nodes: grammar nodes built and written in all: schema values, rules, the nodes each
            writer visits, self-check parses. Every node a writer visits writes at least one
            character, so a budget of as many nodes as `chars` never refuses a grammar that
            `chars` allows unless deriving it built nodes it never wrote.
        chars: characters one written grammar (Lark, GBNF, the structural tag's JSON) may have.
        spent: the nodes spent so far.
    """

    seconds: float | None = None
    nodes: int | None = None
    chars: int | None = None
    spent: int = 0
    deadline: float | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if self.seconds is not None:
            self.deadline = time.perf_counter() + self.seconds

    def spend(self, nodes: int = 1) -> None:
        """Count `nodes` grammar nodes built or written.

        Raises:
            GrammarTooLarge: more than `nodes` nodes in all, or the deadline has passed.
        """
        self.spent += nodes
        if self.nodes is not None and self.spent > self.nodes:
            raise GrammarTooLarge("nodes", self.nodes, f"more than {self.nodes:,} grammar nodes")
        if self.deadline is not None and time.perf_counter() > self.deadline:
            self.out_of_time()

    def out_of_time(self) -> None:
        """Raise the `GrammarTooLarge` of the deadline (a self-check parse that ran past it)."""
        raise GrammarTooLarge(
            "seconds",
            self.seconds or 0.0,
            f"building it took more than {self.seconds:g} s",
        )

    def check_written(self, chars: int, form: str) -> None:
        """A writer has written `chars` characters of `form` (``"Lark"``, ``"GBNF"``...) so far.

        Raises:
            GrammarTooLarge: more than `chars` characters.
        """
        if self.chars is not None and chars > self.chars:
            raise GrammarTooLarge(
                "chars",
                self.chars,
                f"its {form} is longer than {self.chars:,} characters",
            )


def spend(budget: GrammarBudget | None, nodes: int = 1) -> None:
    """`budget.spend(nodes)`, or nothing without a budget."""
    if budget is not None:
        budget.spend(nodes)
