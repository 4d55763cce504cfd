"""Delimiter evidence: what shows that a template's delimiter is the one the model writes.

A near miss (`engine.authoring.diagnosis`) says that the text holds something close to a
delimiter: ``'</tool_calsl>'`` where the template expects ``'</tool_call>'``. Either the
template misspells the delimiter or the output does. When the template's text is confirmed
elsewhere (the chat template renders it, the tokenizer holds it as one token, the prompt or
other outputs of the same model contain it), the template agrees with the model and the output
is what is misspelt: a generation error. Proposing to copy the misspelling into the template
would break every other output, so `blame_the_output` rewrites such a near miss to say so and
drops its fix.

A shipped template is itself evidence: its samples (`samples/<family>.json`) are outputs of
its models that it parses, so they confirm its delimiters (`shipped_outputs`). When nothing
confirms either side, `blame_the_output` gives both readings (the output misspells the
delimiter, or the model writes it that way) and proposes no edit: one edit would write the
output's typo into the template as often as it fixes the template.

Nothing here parses; the evidence is plain text and tokens given by the caller (the CLI reads
them from --chat-template, --model, --prefix and the template's samples; the page from its chat
template, tokenizer, prompt and other outputs).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..template import ResponseTemplate, load_template
from ..template_files import list_templates
from .diagnosis import Diagnosis
from .samples import SAMPLES_DIR, load_sample_file

# How the evidence of a shipped template's samples is named.
SHIPPED_SAMPLES = "the shipped template's samples hold it"


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
        shipped: Iterable[str] = (),
    ) -> DelimiterEvidence:
        """Evidence from what a caller has (each part optional).

        Args:
            renders: texts the model's chat template rendered (prompts, conversations).
            tokens: the tokenizer's added and special tokens.
            prefix: the prompt sent before the output.
            outputs: other outputs of the same model.
            shipped: the outputs of the samples of the shipped template in use
                (`shipped_outputs`).
        """
        texts = [("the chat template renders it", text) for text in renders if text]
        if prefix:
            texts.append(("the prompt holds it", prefix))
        texts += [("other outputs of the model hold it", text) for text in outputs if text]
        texts += [(SHIPPED_SAMPLES, text) for text in shipped if text]
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


def shipped_outputs(template: dict | str | ResponseTemplate) -> tuple[str, ...]:
    """The prompts and outputs of the samples of the shipped template `template` is (the same
    response template as a `templates/` file), or () when it is none of them."""
    loaded = load_template(template)
    return _shipped_outputs(json.dumps(loaded.source, sort_keys=True))


@functools.lru_cache(maxsize=64)
def _shipped_outputs(source: str) -> tuple[str, ...]:
    for shipped in list_templates():
        if json.dumps(shipped.response_template, sort_keys=True) != source:
            continue
        samples = SAMPLES_DIR / f"{shipped.name}.json"
        if not samples.is_file():
            return ()
        return tuple(
            case.prefix + case.generation
            for case in load_sample_file(samples, {})
            if case.expected is not None
        )
    return ()


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
        near = diagnosis.code == "near-miss" and diagnosis.expected and diagnosis.found
        sources = evidence.where(diagnosis.expected) if near else []
        if not sources:
            if near and not evidence.where(diagnosis.found):
                diagnosis = _both_readings(diagnosis, source)
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


def _both_readings(diagnosis: Diagnosis, source: str) -> Diagnosis:
    """A near miss nothing confirms either side of: both readings, and no edit."""
    said = diagnosis.message.split(" Fix: ")[0].rstrip(".")
    change = f" ({diagnosis.change})" if diagnosis.change else ""
    message = (
        f"{said}. Either the {source} misspells {diagnosis.expected!r} (a generation error: leave "
        f"the template as it is), or the model writes {diagnosis.found!r} there{change}; nothing "
        "given says which: an example output of the model, its chat template or its tokenizer "
        "would."
    )
    return dataclasses.replace(diagnosis, message=message, change="", fix=None)
