"""Template inference: a response template derived from a chat template, verified and explained.

`infer_template` renders conversations that differ in one thing (an answer and the
same answer after reasoning, one call and two, no generation prompt and one, thinking
on and off: `engine.chat_templates.probes`) and reads each part of the response template off
the difference between two renders (`engine.chat_templates.learner` runs the learners:
`anchor`, `reasoning`, `content_closes`), the calls by aligning each render with the message it
was rendered from (`engine.chat_templates.examples.aligned_calls`). Other evidence adds what renders do not
show: the chat template's source (`source_text`), the system prompt it writes for tools
(`system_prompt`), a tokenizer's paired tokens (`tokens`) and the author's example outputs
(`examples`); what none of it shows is named as a missing part, and the rest is still given.

The parts make one or more candidate templates (`engine.chat_templates.candidates`), each
checked with the conformance matrix (`engine.chat_templates.conformance.check_conformance`)
against the same chat template, with the examples when given, and with the renders read as
labelled outputs (`engine.chat_templates.evidence.labelled_renders`, judged as the examples
are); the first that passes and reads them all is kept, else the one that misreads the least
evidence (failing rows and misread examples alike, then misread renders), and every finding
carries the evidence that shows it. Where no evidence decides a
marker, a few documented fallbacks apply (listed in `InferredTemplate.fallbacks` and in
docs/authoring.md). Nothing here knows a model family or its markers.

transformers renders the chat templates (as for `check_conformance`): install the
`conformance` extra.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import TemplateError
from ..template import load_template
from .candidates import LEARNT_FROM_ALL, LEARNT_FROM_RENDERS, WITHOUT_OPENER
from .candidates import candidates as build_candidates
from .conformance import ConformanceReport, check_conformance, resolve_chat_template
from .evidence import Example, labelled_renders, read_examples
from .examples import learn_from_renders
from .judge import check_examples
from .learner import learn, without_opener_finding
from .parts import InferenceError, MissingPart, Parts
from .probes import Finding, InferenceTimeout, Render
from .render import render_function
from .tokens import load_tokenizer
from .unexplained import Unexplained, unexplained

# Seconds inference may take by default (renders and conformance checks).
DEFAULT_TIME_BUDGET = 60.0


@dataclass
class Candidate:
    """One template inference built and checked.

    Attributes:
        description: what sets it apart ("reasoning also ends where a tool call starts").
        template: the response template.
        report: its conformance matrix against the chat template.
        example_problems: what it gets wrong on the example outputs, one sentence each ([] when
            it reads them all, or none were given).
        render_problems: what it gets wrong on the chat template's renders taken as labelled
            outputs (`engine.chat_templates.evidence.labelled_renders`: the probes' final turns
            with the messages rendered), judged exactly as the examples are.
    """

    description: str
    template: dict
    report: ConformanceReport
    example_problems: list[str] = field(default_factory=list)
    render_problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.report.passed

    @property
    def reads_examples(self) -> bool:
        return not self.example_problems

    @property
    def misread(self) -> int:
        """How much of the evidence it misreads: failing rows of its matrix (the renders) and
        misread example outputs, each counting one. The candidate kept misreads the least, then
        the fewest labelled renders (`judged`), so it never fails a row or an example that
        another candidate reads while reading all that one reads."""
        return len(self.report.failed) + len(self.example_problems)

    @property
    def judged(self) -> tuple[int, int]:
        """What the judge ranks candidates by, the least first (the first of those on a tie):
        `misread`, then the labelled renders it misreads. The renders as written come second
        because the matrix already reads them, with the normalisations a render needs where the
        chat template writes one part as it writes another (content as reasoning, a string
        without quotes); a labelled render still tells apart candidates the matrix cannot (its
        rows with calls not renderable)."""
        return self.misread, len(self.render_problems)

    def failures(self, limit: int = 3) -> list[str]:
        """The first failing rows, as ``name: detail``, then the first example it misreads."""
        rows = [f"{row.name}: {row.detail}" for row in self.report.failed[:limit]]
        return rows + self.example_problems[:1] + self.render_problems[:1]

    def to_dict(self) -> dict:
        return {
            "description": self.description,
            "passed": self.passed,
            "counts": self.report.counts(),
            "failures": self.failures(),
            "example_problems": self.example_problems,
            "render_problems": self.render_problems,
            "template": self.template,
        }


@dataclass
class InferredTemplate:
    """What `infer_template` found.

    Attributes:
        template: the response template (valid against templates/response_template.schema.json).
        report: its conformance matrix against the chat template.
        findings: each delimiter and choice with the renders that show it.
        candidates: every candidate built, in the order tried, with its matrix (the kept one
            misreads the least evidence: failing rows and misread examples, `Candidate.misread`).
        fallbacks: the documented fallbacks used, as sentences (empty when the renders decided all).
        notes: what was not found, and why (no tool calls: the chat template writes none).
        missing: the parts of the message that could not be inferred or expressed, each with
            why and, where the template language lacks it, the construct (`MissingPart`).
        thinking_switch: the chat-template keyword that switches reasoning, or None.
        generation_prompt: what the first turn's generation prompt writes, per thinking mode.
        renders: every render inference made (for looking up what the chat template ever writes).
        refusals: every conversation the chat template refused, with its error.
        prewritten: per thinking mode, what the first turn's prompt writes after the start anchor
            (the prefix tail the parser starts from: an opener, an empty block, or "").
        unexplained: {example index: the stretches of its output the template does not explain
            (`engine.chat_templates.unexplained.Unexplained`: offsets into the output, and why)};
            empty when every example is read right, or none was given.
    """

    template: dict
    report: ConformanceReport
    findings: list[Finding]
    candidates: list[Candidate]
    fallbacks: list[str]
    notes: list[str]
    thinking_switch: str | None
    generation_prompt: dict[str, str]
    renders: list[Render] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    prewritten: dict[str, str] = field(default_factory=dict)
    missing: list[MissingPart] = field(default_factory=list)
    unexplained: dict[int, list[Unexplained]] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.report.passed

    @property
    def complete(self) -> bool:
        """Every part of the message the chat template shows was inferred (`missing` is empty)."""
        return not self.missing

    @property
    def exit_code(self) -> int:
        """0 when the template passes its matrix and is complete, 1 when it fails rows or a part
        is missing (a partial template: the parts that work, the missing ones named)."""
        return 0 if self.passed and self.complete else 1

    def verdict(self) -> str:
        """One sentence: whether the template passes its matrix, and what is missing."""
        counts = self.report.counts()
        rows = counts["passed"] + counts["failed"]
        if self.complete:
            matrix = (
                f"passes its matrix ({rows} rows)"
                if self.passed
                else f"fails {counts['failed']} of the {rows} rows of its matrix"
            )
            return f"the inferred template {matrix}"
        matrix = (
            f"pass the matrix ({rows} rows)"
            if self.passed
            else f"fail {counts['failed']} of the {rows} rows of the matrix"
        )
        parts = ", ".join(missing.part for missing in self.missing)
        return f"a partial template: {parts} could not be inferred; the parts inferred {matrix}"

    def template_file(
        self, name: str = "inferred", models: list[str] | None = None, source: str = ""
    ) -> dict:
        """A `templates/`-style file: name, models, generation prompt, notes on what was found and
        from which renders, and the response template."""
        prompts = "; ".join(
            f"{mode}: {prompt}" if mode else prompt
            for mode, prompt in self.generation_prompt.items()
        )
        notes = [
            f"{finding.key} = {json.dumps(finding.value, ensure_ascii=False)}: {finding.how} (compared: "
            f"{' / '.join(render.label for render in finding.renders)})"
            for finding in self.findings
        ]
        notes += [f"fallback: {text}" for text in self.fallbacks] + self.notes
        notes += [f"missing: {missing.sentence()}" for missing in self.missing]
        if not self.passed:
            notes += [f"fails: {row.name}: {row.detail}" for row in self.report.failed]
        counts = self.report.counts()
        return {
            "$schema": "./template_file.schema.json",
            "name": name,
            "description": (
                f"Inferred from the chat template{f' of {Path(source).name}' if source else ''} by comparing its renders; "
                f"the conformance matrix: {counts['passed']} passed, {counts['failed']} failed, "
                f"{counts['not_renderable']} not renderable."
            ),
            "models": models or [name],
            "generation_prompt": prompts,
            "notes": notes,
            "response_template": self.template,
        }

    def to_dict(self) -> dict:
        return {
            "passed": self.passed,
            "complete": self.complete,
            "verdict": self.verdict(),
            "missing": [missing.to_dict() for missing in self.missing],
            "template": self.template,
            "report": self.report.to_dict(),
            "findings": [finding.to_dict() for finding in self.findings],
            "candidates": [candidate.to_dict() for candidate in self.candidates],
            "fallbacks": self.fallbacks,
            "notes": self.notes,
            "thinking_switch": self.thinking_switch,
            "generation_prompt": self.generation_prompt,
            "refusals": self.refusals,
            "unexplained": {
                str(index): [span.to_dict() for span in spans]
                for index, spans in self.unexplained.items()
            },
        }


def infer_template(
    chat_template: str | None = None,
    *,
    model: str | None = None,
    bos_token: str | None = None,
    eos_token: str | None = None,
    examples: list[dict] | None = None,
    tokenizer: Any = None,
    regex_timeout: float | None = 1.0,
    time_budget: float | None = DEFAULT_TIME_BUDGET,
) -> InferredTemplate:
    """Infer a response template from a chat template, verify it, and explain every delimiter.

    Args:
        chat_template: the Jinja chat template text. Give this or `model`.
        model: a hub id or local folder whose tokenizer files hold the chat template (and the
            bos/eos tokens); weights are never read. Its tokenizer is evidence too (below).
        bos_token, eos_token: what the chat template writes as ``bos_token`` / ``eos_token``
            (default "" or the tokenizer's). The eos token is accepted as an end of turn.
        examples: outputs the model really wrote, each a dict ``{"prefix": PROMPT, "output":
            GENERATION, "tools": [...] (optional), "expected": MESSAGE (optional)}``. The chosen
            template must read every one (to `expected` where given, else to a plausible
            message); where no render shows how the model writes a call, the examples' calls
            give the syntax; markers no field explains become content closes.
        tokenizer: a Hugging Face tokenizer (anything with ``get_added_vocab()``): its added and
            special tokens are evidence of markers (paired as open and close where their names
            pair). With `model`, that model's tokenizer is used.
        regex_timeout: seconds per regex call of the candidates' patterns in the checks.
        time_budget: seconds for inference, checked between renders and between the steps of
            reading the other evidence (None: no limit). A chat template that loops inside
            one render is not interrupted here: run inference in a process that can be killed
            (`python -m engine infer` and the playground do).

    Returns:
        An `InferredTemplate`: `passed` says whether the template passes the matrix, `complete`
        whether every part was inferred (`missing` names the others).

    Raises:
        InferenceError (a ValueError): nothing can be inferred (the chat template renders no
            first turn, or inference runs out of time); the message says why.
        ValueError: neither or both of `chat_template` and `model`; a malformed example (the
            message names it and its key).
        ModelLoadError (a ValueError): `model` has no tokenizer or chat template.
        ImportError: transformers (or jinja2) is not installed.
    """
    read = read_examples(examples)
    if model is not None and tokenizer is None:
        tokenizer = load_tokenizer(model)
    chat_template, bos_token, eos_token = resolve_chat_template(
        chat_template, model, bos_token, eos_token, InferenceError
    )
    deadline = None if time_budget is None else time.monotonic() + time_budget
    try:
        parts = learn(chat_template, bos_token, eos_token, deadline, read, tokenizer, regex_timeout)
    except InferenceTimeout as error:
        raise InferenceError(
            f"inference ran out of time after {time_budget:g} s: {error}", hint="time_budget"
        ) from None
    candidates = _checked_candidates(
        parts, chat_template, bos_token, eos_token, read, regex_timeout, deadline
    )
    chosen = min(candidates, key=lambda each: each.judged)
    book = parts.book
    _note_choice(chosen, parts)
    return InferredTemplate(
        chosen.template,
        chosen.report,
        book.findings,
        candidates,
        book.fallbacks,
        book.notes,
        parts.switch,
        parts.generation_prompts,
        [render for probe in parts.probes for render in probe.renders],
        [refusal for probe in parts.probes for refusal in probe.refusals],
        dict(parts.prewritten),
        list(book.missing),
        unexplained(chosen.template, read, regex_timeout) if chosen.example_problems else {},
    )


def _note_choice(chosen: Candidate, parts: Parts) -> None:
    """What the notebook says of the candidate chosen: the findings of a learnt one, and what
    it misreads of the examples."""
    book = parts.book
    if WITHOUT_OPENER in chosen.description:
        book.findings.append(without_opener_finding(parts))
    if chosen.description in (LEARNT_FROM_RENDERS, LEARNT_FROM_ALL):
        learnt_from_renders = chosen.description == LEARNT_FROM_RENDERS
        book.findings += parts.render_findings if learnt_from_renders else parts.evidence_findings
        if "tool_calls" in chosen.template["fields"]:
            book.found_elsewhere("tool_calls")
        book.notes.append(
            f"the template {chosen.description} reads the most evidence"
            if not learnt_from_renders
            else "the template learnt by aligning the renders with the messages rendered reads "
            "the most evidence"
        )
    book.notes += [f"the template misreads {problem}" for problem in chosen.example_problems]


def _checked_candidates(
    parts: Parts,
    chat_template: str,
    bos_token: str,
    eos_token: str,
    examples: list[Example],
    regex_timeout: float | None,
    deadline: float | None,
) -> list[Candidate]:
    """Each candidate with its matrix (and its problems on the examples), in order, up to the
    first that passes and reads every example; when none does, the template the aligner learns
    from the renders (`engine.chat_templates.examples.learn_from_renders`) after them.

    Raises:
        InferenceError: no candidate is a valid template.
    """
    book = parts.book
    rendered = labelled_renders(parts.probes)

    def checked(named: list) -> list[Candidate]:
        return _check_each(
            named, parts, chat_template, bos_token, eos_token, examples, rendered, regex_timeout
        )

    candidates = checked(build_candidates(parts))
    best = min(candidates, key=lambda each: each.judged, default=None)
    if (best is None or best.misread or _lacks_rendered_part(best.template, rendered)) and _before(
        deadline
    ):
        # None reads all the evidence, or the best has no field for a part the renders show:
        # the aligner run over the renders for a whole template gives one more (only then:
        # each run costs about as much as the other candidates together).
        learn_from_renders(parts, regex_timeout, examples)
        learnt = [
            (description, template)
            for description, template in (
                (LEARNT_FROM_RENDERS, parts.render_template),
                (LEARNT_FROM_ALL, parts.evidence_template),
            )
            if template is not None
        ]
        if learnt:
            candidates += checked(learnt)
    if not candidates:
        raise InferenceError("no valid template could be built: " + "; ".join(book.notes))
    return candidates


def _before(deadline: float | None) -> bool:
    return deadline is None or time.monotonic() <= deadline


def _check_each(
    built: list[tuple[str, dict]],
    parts: Parts,
    chat_template: str,
    bos_token: str,
    eos_token: str,
    examples: list[Example],
    rendered: list[Example],
    regex_timeout: float | None,
) -> list[Candidate]:
    """Each of `built` with its matrix and its problems on the examples and on the labelled
    renders (`rendered`), in order, up to the first that reads all of it or the deadline (a
    template the language rejects is noted)."""
    book, deadline = parts.book, parts.probes[0].deadline
    candidates = []
    for description, template in built:
        try:
            load_template(template)
        except (
            TemplateError
        ) as error:  # a learnt marker the template language rejects: say so, never guess
            book.notes.append(f"candidate ({description}) is not a valid template: {error}")
            continue
        report = check_conformance(
            template,
            chat_template,
            bos_token=bos_token,
            eos_token=eos_token,
            regex_timeout=regex_timeout,
        )
        problems = check_examples(template, examples, regex_timeout) if examples else []
        misread_renders = check_examples(template, rendered, regex_timeout)
        candidates.append(Candidate(description, template, report, problems, misread_renders))
        if (
            report.passed and not problems and not _lacks_rendered_part(template, rendered)
        ) or not _before(deadline):
            break
    return candidates


def _lacks_rendered_part(template: dict, rendered: list[Example]) -> bool:
    """Whether a labelled render's message has tool calls or reasoning that `template` has no
    field for: the chat template renders a part that the renders' differences did not learn (a
    call syntax no learner of the differences reads, calls only an adapted render writes)."""
    fields = template["fields"]
    return any(
        example.expected.get(key) and key not in fields
        for example in rendered
        for key in ("tool_calls", "reasoning_content")
    )


# -- inference in a process that can be killed ---------------------------------------------

# Address space the inference process may use (bytes): a chat template that builds a huge
# string gets a MemoryError there, not the machine's memory.
ISOLATED_MEMORY_BYTES = 3 * 1024**3

# Seconds the inference process may take to start (importing the chat-template renderer) before
# its time budget begins: seconds on a loaded machine, never the chat template's doing.
ISOLATED_START_SECONDS = 120

# Seconds past its time budget the inference process is waited for before it is killed: a render
# cannot be interrupted, so the one in flight at the deadline ends first, then the answer comes.
ISOLATED_GRACE_SECONDS = 5


def infer_template_isolated(
    chat_template: str | None = None,
    *,
    model: str | None = None,
    bos_token: str | None = None,
    eos_token: str | None = None,
    examples: list[dict] | None = None,
    regex_timeout: float | None = 1.0,
    seconds: float = DEFAULT_TIME_BUDGET,
    memory_bytes: int = ISOLATED_MEMORY_BYTES,
) -> InferredTemplate:
    """`infer_template` in a child process that is killed past `seconds` and capped at `memory_bytes`.

    The `seconds` start once the child has imported the chat-template renderer (allowed
    ISOLATED_START_SECONDS), so a slow start is never reported as a slow chat template.

    A chat template is code: one that loops inside a render cannot be stopped in this
    process, so the command line (and anything serving untrusted chat templates) infers here.

    Raises:
        InferenceError: the child ran out of time or memory, or died (the message says which),
            or inference itself found nothing; other errors of `infer_template` as raised there.
    """
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    receiver, sender = context.Pipe(duplex=False)
    job = {
        "chat_template": chat_template,
        "model": model,
        "bos_token": bos_token,
        "eos_token": eos_token,
        "examples": examples,
        "regex_timeout": regex_timeout,
        "time_budget": seconds,
    }
    child = context.Process(target=_isolated_main, args=(sender, job, memory_bytes), daemon=True)
    child.start()
    sender.close()
    try:
        if not receiver.poll(ISOLATED_START_SECONDS):
            raise InferenceError(
                f"the inference process did not start within {ISOLATED_START_SECONDS} s (importing "
                "transformers to render the chat template): the machine may be overloaded",
                hint="time_budget",
            )
        receiver.recv()  # started: the time budget runs from here, in the child and here
        if not receiver.poll(seconds + ISOLATED_GRACE_SECONDS):
            raise InferenceError(
                f"inference ran out of time after {seconds:g} s: it was stopped "
                f"{ISOLATED_GRACE_SECONDS} s later, inside one render (the chat template may "
                "loop, or render a very long output)",
                hint="time_budget",
            )
        kind, value = receiver.recv()
    except EOFError:
        child.join(5)
        raise InferenceError(
            f"the inference process stopped without an answer (exit code {child.exitcode}): the chat "
            f"template may need more than {memory_bytes // 1024**2} MB",
            hint="memory",
        ) from None
    finally:
        if child.is_alive():
            child.kill()
        child.join(5)
        receiver.close()
    if kind == "ok":
        return value
    raise value


def _isolated_main(sender, job: dict, memory_bytes: int) -> None:
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    except (ValueError, OSError):
        pass  # the limit cannot be lowered here: inference still runs, with its time budget
    try:
        render_function()  # imported before the budget starts: its seconds are not the template's
    except ImportError:
        pass  # infer_template raises it again, with what to install
    sender.send(("started", None))
    try:
        result = ("ok", infer_template(**job))
    except MemoryError:
        result = (
            "error",
            InferenceError(
                f"inference ran out of memory (it may use {memory_bytes // 1024**2} MB): the "
                "chat template builds very large outputs",
                hint="memory",
            ),
        )
    except (
        ValueError,
        ImportError,
    ) as error:  # InferenceError, ModelLoadError, TemplateError: their messages say why
        result = ("error", error)
    except Exception as error:  # the chat template's own failure, whatever its type
        result = ("error", InferenceError(f"inference failed: {error}"))
    try:
        sender.send(result)
    except Exception as error:  # a result that cannot be sent (pickling) is an answer too
        sender.send(
            (
                "error",
                InferenceError(
                    f"inference finished but its result could not be sent back: {error}"
                ),
            )
        )
    sender.close()


# -- choosing a template for a chat template -----------------------------------------------


def choose_template(
    chat_template: str,
    *,
    bos_token: str = "",
    eos_token: str = "",
    model_name: str = "",
    model_type: str = "",
    regex_timeout: float | None = 1.0,
    time_budget: float | None = DEFAULT_TIME_BUDGET,
) -> tuple[dict, str]:
    """The response template to parse a model's output with, given its chat template, and why.

    A shipped template (`templates/`) that passes the conformance check against the chat
    template, tried in this order: those whose `models` list `model_name`, the one the family
    rules propose (`engine.chat_templates.families`: markers of the chat template's source, `model_type`),
    then every other whose start anchor occurs in a prompt the chat template renders. The rules
    only propose: a template is chosen only when the check passes. When none passes, the
    template inferred from the chat template (`infer_template`); when that fails its check too,
    whichever candidate failed the fewest rows, and the reason says so.

    Returns:
        (response template dict, reason: one sentence for the user, such as "templates/qwen3.json
        conforms to the chat template (the family rules propose it: ...)" or "inferred from the
        chat template: no shipped template conforms (3 checked)").

    Raises:
        InferenceError: nothing conforms and nothing can be inferred.
        ImportError: transformers (or jinja2) is not installed.
    """
    from ..template_files import list_templates

    files = {template_file.name: template_file for template_file in list_templates()}
    order = _proposed(files, chat_template, bos_token, eos_token, model_name, model_type)
    tried: list[tuple[int, dict, str]] = []
    for name, why in order.items():
        report = check_conformance(
            files[name].response_template,
            chat_template,
            bos_token=bos_token,
            eos_token=eos_token,
            regex_timeout=regex_timeout,
        )
        if report.passed:
            return (
                files[name].response_template,
                f"templates/{files[name].path.name} conforms to the chat template ({why})",
            )
        tried.append(
            (
                len(report.failed),
                files[name].response_template,
                f"templates/{files[name].path.name}",
            )
        )
    inferred = infer_template(
        chat_template,
        bos_token=bos_token,
        eos_token=eos_token,
        regex_timeout=regex_timeout,
        time_budget=time_budget,
    )
    checked = f"{len(tried)} checked" if tried else "none proposed"
    if inferred.passed:
        partial = (
            ""
            if inferred.complete
            else f"; it is partial: {'; '.join(missing.sentence() for missing in inferred.missing)}"
        )
        return (
            inferred.template,
            f"inferred from the chat template: no shipped template conforms ({checked}){partial}",
        )
    best = min(tried, key=lambda item: item[0], default=None)
    if best is not None and best[0] < len(inferred.report.failed):
        return (
            best[1],
            f"{best[2]} fails {best[0]} rows of the check, the fewest; neither it nor the inferred template conforms",
        )
    return inferred.template, (
        f"inferred from the chat template, which fails {len(inferred.report.failed)} rows of the check: "
        f"no shipped template conforms ({checked})"
    )


def _proposed(
    files: dict,
    chat_template: str,
    bos_token: str,
    eos_token: str,
    model_name: str,
    model_type: str,
) -> dict[str, str]:
    """The shipped templates to check, in order, each with why it is proposed."""
    from .conformance import rendered_prompts
    from .families import family_template

    order: dict[str, str] = {}
    for template_file in files.values():
        if model_name and model_name in template_file.models:
            order.setdefault(template_file.name, f"its models list {model_name}")
    family = family_template(chat_template, model_type, files)
    if family is not None:
        order.setdefault(family[0], f"the family rules propose it: {family[1]}")
    prompts = rendered_prompts(chat_template, bos_token=bos_token, eos_token=eos_token)
    for name, template_file in files.items():
        if name not in order and _anchor_in(template_file.response_template, prompts):
            order[name] = "its start anchor is in the chat template's prompts"
    return order


def _anchor_in(template: dict, prompts: list[str]) -> bool:
    """Whether the template's start anchor matches somewhere in one of `prompts`."""
    anchor = load_template(template).start_anchor
    return any(anchor.pattern.search(prompt) for prompt in prompts)
