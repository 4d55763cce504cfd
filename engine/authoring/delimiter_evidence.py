"""Delimiter evidence: what shows that a template's delimiter is the one the model writes.

A near miss (`engine.authoring.diagnosis`) says that the text holds something close to a
delimiter: ``'</tool_calsl>'`` where the template expects ``'</tool_call>'``. Either the
template misspells the delimiter or the output does. When the template's text is confirmed
elsewhere (the chat template renders it, the tokenizer holds it as one token, the prompt or
other outputs of the same model contain it), the template agrees with the model and the output
is what is misspelt: a generation error. Proposing to copy the misspelling into the template
would break every other output, so `blame_the_output` rewrites such a near miss to say so and
drops its fix.

Nothing here parses; the evidence is plain text and tokens given by the caller (the CLI reads
them from --chat-template, --model, --prefix and the template's samples; the page from its chat
template, tokenizer, prompt and other outputs).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .diagnosis import Diagnosis


@dataclass(frozen=True)
class DelimiterEvidence:
    """Texts and tokens that show what the model writes.

    Attributes:
        texts: (phrase, text) pairs: `phrase` says in words that the source holds a delimiter
            (``"the chat template renders it"``, ``"the prompt holds it"``, ``"other outputs of
            the model hold it"``), `text` is what the source holds.
        tokens: the tokenizer's added and special tokens (a delimiter that is one of them is
            written as one token, so it cannot come out misspelt from the template's side).
    """

    texts: tuple[tuple[str, str], ...] = ()
    tokens: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls,
        *,
        renders: Iterable[str] = (),
        tokens: Iterable[str] = (),
        prefix: str = "",
        outputs: Iterable[str] = (),
    ) -> DelimiterEvidence:
        """Evidence from what a caller has (each part optional).

        Args:
            renders: texts the model's chat template rendered (prompts, conversations).
            tokens: the tokenizer's added and special tokens.
            prefix: the prompt sent before the output.
            outputs: other outputs of the same model.
        """
        texts = [("the chat template renders it", text) for text in renders if text]
        if prefix:
            texts.append(("the prompt holds it", prefix))
        texts += [("other outputs of the model hold it", text) for text in outputs if text]
        return cls(tuple(texts), frozenset(token for token in tokens if token))

    def __bool__(self) -> bool:
        return bool(self.texts or self.tokens)

    def where(self, delimiter_text: str) -> list[str]:
        """The sources that hold `delimiter_text`, in words, each named once ([] when none)."""
        found = []
        text = delimiter_text.strip() or delimiter_text
        if text in self.tokens:
            found.append("the tokenizer has it as one token")
        for phrase, held in self.texts:
            if text in held and phrase not in found:
                found.append(phrase)
        return found


def blame_the_output(
    diagnoses: Sequence[Diagnosis], evidence: DelimiterEvidence, source: str = "output"
) -> list[Diagnosis]:
    """`diagnoses` with every near miss whose expected delimiter `evidence` confirms rewritten
    as the output's misspelling.

    Args:
        diagnoses: a parse's diagnoses (`engine.authoring.diagnosis.diagnose`).
        evidence: what confirms the template's delimiters.
        source: what the near miss is in, for the message (``"output"``).

    Returns:
        A new list, in the same order. A rewritten diagnosis keeps its code (``near-miss``),
        place and severity; its message names the misspelling as a generation error and where
        the delimiter is confirmed, its `change` is "" and its `fix` None (no template edit is
        proposed), and `confirmed_by` lists the sources.
    """
    rewritten = []
    for diagnosis in diagnoses:
        sources = (
            evidence.where(diagnosis.expected)
            if diagnosis.code == "near-miss" and diagnosis.expected
            else []
        )
        if not sources:
            rewritten.append(diagnosis)
            continue
        where = (
            f" at {diagnosis.source} offset {diagnosis.start}"
            if diagnosis.start is not None
            else ""
        )
        consequence = f", so {diagnosis.consequence}" if diagnosis.consequence else ""
        message = (
            f"The {source} misspells {diagnosis.expected!r} as {diagnosis.found!r}{where}: a generation "
            f"error, not a template fault ({'; '.join(sources)}, as {diagnosis.key} expects){consequence}. "
            "Leave the template as it is."
        )
        rewritten.append(
            dataclasses.replace(
                diagnosis, message=message, change="", fix=None, confirmed_by=tuple(sources)
            )
        )
    return rewritten
