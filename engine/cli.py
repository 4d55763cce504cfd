"""Command line for template authors: ``python -m engine {batch,check,conformance,explain,export,grammar,infer,lint,parse} ...``.

- ``check TEMPLATE SAMPLES``: lint, then parse every sample (expected message or error)
  and run the stream checks; exit 1 on a lint error, a wrong message or a stream mismatch.
- ``conformance TEMPLATE (--chat-template FILE | --model ID_OR_PATH)``: render the matrix
  of conversation situations with the model's chat template and check the template reads
  each one back; exit 0 when every renderable situation passes, 1 when some fail, 2 when
  nothing could be rendered (or on bad input).
- ``infer (--chat-template FILE | --model ID_OR_PATH) [--examples FILE] [--outputs FILE [--loop N]] [--output FILE] [--json]``: infer a
  response template from the chat template, write it as a ``templates/``-style file, and print
  the matrix summary and each finding with the renders that show it; exit 0 when it passes the
  matrix and every part was inferred, 1 when it does not or a part is missing (the file is
  still written, with the parts that work), 2 when nothing can be inferred. It says which
  examples, and with ``--outputs`` which of those outputs, the template cannot read (exit 1
  when one is unread): the author adds the first to the examples and infers again; ``--loop N``
  does so round by round up to N examples (`engine.chat_templates.author_loop`).
- ``lint TEMPLATE [--chat-template FILE] [--target RUNTIME] [--tokenizer DIR]``: print the
  diagnostics (with a chat template, also whether its prompts contain the start anchor; with a
  target, also what that runtime refuses or reads differently; with a tokenizer, also literal
  delimiters that are not one control token and control tokens the template never mentions);
  exit 1 on an error.
- ``grammar TEMPLATE [--tools FILE] [--tool-choice auto|required|none|NAME] [--no-parallel]
  [--format structural-tag|lark|gbnf] [--prefix FILE] [--tokenizer DIR]``: the grammar of
  every output the template reads back that honours the request (`engine.grammar`); what it
  cannot enforce goes to stderr; exit 1 when no grammar honours the request.
- ``export TEMPLATE --for RUNTIME [--output FILE]``: the template rewritten for a runtime
  (``reasoning_content`` is ``thinking`` in vLLM and SGLang), what changed and what the
  runtime still refuses; exit 1 when it still refuses something.
- ``parse TEMPLATE [--prefix FILE] [--tokenizer DIR] [GENERATION_FILE|-]``: print the message
  as JSON, or with ``--trace`` the region map as coloured text. With a tokenizer the generation
  is read as token ids (a JSON list, or text that is tokenized) and ``--trace`` shows the
  tokens, what matched each delimiter, and the control tokens spelled out as text. A failed or suspicious parse is
  explained cause first (`engine.authoring.diagnosis`: the key to change and how), then the error.
- ``explain PATTERN``: a delimiter pattern piece by piece (`engine.authoring.pattern_explain`).
- ``batch TEMPLATE INPUT --output OUTPUT [--engine local|datasets|ray] [--num-proc N] ...``:
  parse every row of a JSONL or Parquet file, keeping the order; a progress bar, then a
  summary (rows, errors by field, rows per second; with ``--profile``, where the time went).
  See docs/batch.md.

TEMPLATE is a plain response-template JSON file, a ``templates/`` wrapper file, or a
family name from ``templates/``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .authoring.delimiter_evidence import DelimiterEvidence, blame_the_output, shipped_outputs
from .authoring.diagnosis import Diagnosis
from .authoring.lint import lint, lint_prompts, lint_tokenizer
from .authoring.pattern_explain import explain_pattern
from .authoring.portability import TARGETS
from .authoring.samples import SAMPLES_DIR, load_sample_file
from .authoring.stream_checks import check_stream
from .authoring.trace import trace
from .batch.files import BATCH_ROWS
from .batch.run import ENGINES
from .errors import ResponseParseError, TemplateError
from .parser import ON_ERROR_MODES, ResponseParser
from .template_files import load_template_file

_FIELD_STYLES = ["green", "cyan", "magenta", "yellow", "blue", "bright_red"]
_KIND_STYLES = {"discarded": "dim strike", "held": "reverse", "unparsed": "bold white on red"}


def read_template(argument: str) -> dict:
    """The response template dict from a path (plain or wrapper JSON) or a family name.

    Raises:
        FileNotFoundError, ValueError: no such file, not JSON.
    """
    path = Path(argument)
    if not path.is_file():
        return load_template_file(argument).response_template
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict) and "response_template" in data:
        return data["response_template"]
    return data


def _print_diagnostics(console: Console, diagnostics) -> None:
    styles = {"error": "bold red", "warning": "yellow", "info": "blue"}
    for diagnostic in diagnostics:
        line = Text()
        line.append(f"{diagnostic.severity:7} ", styles[diagnostic.severity])
        line.append(f"{diagnostic.path or '<template>'}: ", "bold")
        line.append(diagnostic.message)
        console.print(line)
        if diagnostic.suggestion:
            console.print(Text(f"        fix: {diagnostic.suggestion}", "dim"))


def _chat_template_options(args) -> dict:
    """``check_conformance`` keywords from --chat-template / --model / --bos-token / --eos-token."""
    if (args.chat_template is None) == (getattr(args, "model", None) is None):
        raise ValueError("give exactly one of --chat-template FILE and --model HUB_ID_OR_PATH")
    options = {"bos_token": args.bos_token, "eos_token": args.eos_token}
    if args.chat_template is not None:
        options["chat_template"] = Path(args.chat_template).read_text(encoding="utf-8")
    else:
        options["model"] = args.model
    return options


def command_lint(args, console: Console) -> int:
    template = read_template(args.template)
    diagnostics = lint(template, target=args.target)
    if args.chat_template is not None:
        from .chat_templates.conformance import rendered_prompts

        chat_template = Path(args.chat_template).read_text(encoding="utf-8")
        prompts = rendered_prompts(
            chat_template, bos_token=args.bos_token or "", eos_token=args.eos_token or ""
        )
        diagnostics += lint_prompts(template, prompts)
    if args.tokenizer is not None:
        diagnostics += lint_tokenizer(template, load_tokenizer_folder(args.tokenizer))
    _print_diagnostics(console, diagnostics)
    if not diagnostics:
        console.print("no findings")
    return 1 if any(d.severity == "error" for d in diagnostics) else 0


def command_check(args, console: Console) -> int:
    template = read_template(args.template)
    diagnostics = lint(template)
    _print_diagnostics(console, diagnostics)
    failures = sum(d.severity == "error" for d in diagnostics)
    if any(d.code == "template-error" for d in diagnostics):
        return 1
    samples = load_sample_file(Path(args.samples), {}, template)
    leaky = 0
    for sample in samples:
        case_template = template if sample.template_name != "<inline>" else sample.template
        problems = []
        report = check_stream(
            sample.generation,
            case_template,
            prefix=sample.prefix,
            tools=sample.tools,
            seeds=range(args.seeds),
            truncation_step=args.truncation_step,
            on_error=args.on_error,
        )
        baseline = report.baseline
        if sample.expected_error is not None:
            if baseline.error is None or sample.expected_error not in baseline.error:
                problems.append(
                    f"expected an error containing {sample.expected_error!r}, got {baseline.error or baseline.message!r}"
                )
        # The one comparison of a parse with its expected message (inference and the page use it).
        elif baseline.error is not None or sample.labelled.differences(baseline.message):
            problems.append(
                f"message differs:\n    expected {json.dumps(sample.expected, ensure_ascii=False)}\n    got      "
                f"{json.dumps(baseline.message, ensure_ascii=False) if baseline.error is None else baseline.error}"
            )
        if not report.ok:
            mismatch = report.mismatch
            problems.append(
                f"streaming differs from one-shot with chunking {mismatch.chunking} (splits {mismatch.splits[:10]}): "
                f"{json.dumps(mismatch.message, ensure_ascii=False) if mismatch.error is None else mismatch.error}"
            )
        status = Text("FAIL", "bold red") if problems else Text("ok  ", "green")
        leaks = report.truncation_leaks
        detail = Text(f"  ({report.runs} chunkings agree", "dim")
        if leaks:
            detail.append(
                f"; {len(leaks)} truncation leak{'s' if len(leaks) > 1 else ''}", "yellow"
            )
        detail.append(")", "dim")
        console.print(Text.assemble(status, f" {sample.name}", detail))
        for problem in problems:
            console.print(f"    {problem}")
        if leaks:
            first = leaks[0]
            console.print(
                Text(
                    f"    leak: cut at {first.cut} leaves {first.fragment!r} of {first.delimiter!r} at the end of {first.field}",
                    "yellow",
                )
            )
        for note in report.notes:
            console.print(Text(f"    note: {note}", "dim"))
        failures += bool(problems)
        leaky += bool(leaks)
    console.print(f"{len(samples)} samples, {failures} failure(s)")
    if leaky:
        console.print(
            Text(
                f"{leaky} sample(s) with truncation leaks: when a generation stops inside a delimiter (a token limit), the "
                "delimiter's first characters end up as text at the end of a field. This is a warning about cut-off "
                "streams, not a failure: the exit status counts only failures. See docs/cli.md.",
                "yellow",
            )
        )
    return 1 if failures else 0


_STATUS = {True: Text("ok  ", "green"), False: Text("FAIL", "bold red")}


def command_conformance(args, console: Console) -> int:
    from .chat_templates.conformance import check_conformance

    template = read_template(args.template)
    report = check_conformance(template, **_chat_template_options(args))
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
        return report.exit_code
    source = args.chat_template or args.model
    switch = f" (thinking switch: {report.thinking_switch})" if report.thinking_switch else ""
    console.print(Text(f"{args.template} against {source}{switch}", "bold"))
    for row in report.situations:
        status = _STATUS[row.passed] if row.renderable else Text("n/r ", "yellow")
        line = Text.assemble(status, f" {row.name}")
        if row.renderable and row.passed and row.normalisations:
            line.append(f"  (normalised: {'; '.join(row.normalisations)})", "dim")
        console.print(line)
        if not row.passed:
            console.print(Text(f"    {row.detail}", "dim" if not row.renderable else ""))
    _print_diagnostics(console, report.diagnostics)
    counts = report.counts()
    console.print(
        f"{len(report.situations)} situations: {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['not_renderable']} not renderable"
    )
    return report.exit_code


def _file_name(text: str) -> str:
    """A templates/ file name from a chat template file or a model id (``org/Model-7B`` -> ``model-7b``)."""
    stem = Path(text.rstrip("/")).name
    stem = stem[: -len(".jinja")] if stem.endswith(".jinja") else stem
    name = "".join(c if c.isalnum() or c in "._-" else "-" for c in stem.lower()).strip("-._")
    return name or "inferred"


def _difference_excerpt(render, span: tuple[int, int], width: int = 48) -> Text:
    """`render`'s text around its differing `span`, the difference highlighted."""
    start, end = span
    text = render.text
    shown = Text()
    shown.append(
        ("…" if start > width else "") + text[max(0, start - width) : start].replace("\n", "⏎"),
        "dim",
    )
    shown.append(text[start:end].replace("\n", "⏎") or "∅", "bold reverse")
    shown.append(
        text[end : end + width].replace("\n", "⏎") + ("…" if end + width < len(text) else ""), "dim"
    )
    return shown


def _finding_line(finding, template: dict) -> Text:
    """``KEY = VALUE``, or ``KEY includes VALUE`` where the template's value there is a list of several."""
    value = template
    for part in finding.key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if finding.key == "start_anchor" and "start_anchor_pattern" in template:
        value, key = None, "start_anchor_pattern"
        relation = " matches "
    else:
        key = finding.key
        relation = " includes " if isinstance(value, list) and value != finding.value else " = "
    return Text.assemble((key, "bold"), relation, json.dumps(finding.value, ensure_ascii=False))


def command_infer(args, console: Console) -> int:
    from .chat_templates.author_loop import author_loop, kept_round
    from .chat_templates.evidence import read_examples_file
    from .chat_templates.infer import infer_template_isolated

    options = _chat_template_options(args)
    examples = read_examples_file(args.examples) if args.examples else []
    outputs = read_examples_file(args.outputs, "output") if args.outputs else []
    if args.outputs and not outputs:
        raise ValueError(f"{args.outputs} holds no output")
    if args.loop is not None:
        if not args.outputs:
            raise ValueError(
                "--loop N needs --outputs FILE: the loop adds the first output the template "
                "cannot read to the examples, up to N examples"
            )
        if args.loop < 1:
            raise ValueError(f"--loop N needs N >= 1, got {args.loop}")
        if args.loop < len(examples):
            raise ValueError(
                f"--loop {args.loop} is below the {len(examples)} examples given: N counts every "
                "example a round learns from, those given included"
            )

    def learn(given: list[dict]):
        return infer_template_isolated(**options, examples=given or None, seconds=args.timeout)

    # Without --loop, one round: learn from the examples and check them and the outputs.
    show = None if args.json or args.loop is None else (lambda each: _print_round(console, each))
    most = len(examples) if args.loop is None else args.loop
    rounds = author_loop(learn, examples, outputs, most, on_round=show)
    last = kept_round(rounds)
    result = last.result
    unread_examples = [f"{each.label}: {each.why}" for each in last.misread_examples]
    unread = [f"{each.label}: {each.why}" for each in last.misread_outputs]
    exit_code = max(result.exit_code, 1 if unread or unread_examples else 0)
    source = args.model or args.chat_template
    name = args.name or _file_name(source)
    output = Path(args.output or f"{name}.json")
    data = result.template_file(name, [args.model] if args.model else None, source)
    output.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    if args.json:
        found = {**result.to_dict(), "file": str(output)}
        if last.examples:
            found["unread_examples"] = unread_examples
        if outputs:
            found["unread_outputs"] = unread
        if args.loop is not None:
            found["rounds"] = [each.to_dict() for each in rounds]
            found["kept_round"] = last.number
        print(json.dumps(found, ensure_ascii=False, indent=2))
        return exit_code
    if args.loop is not None:
        learnt = (
            f"learnt from: {', '.join(last.examples)} (add these to --examples to infer "
            "without --loop)"
            if last.examples
            else "learnt from no example"
        )
        console.print(Text(f"kept round {last.number}, {learnt}", "bold"))
    _print_inferred(console, result, source, output)
    if last is not rounds[-1]:
        misread = len(last.misread_examples) + len(last.misread_outputs)
        console.print(
            Text(
                f"kept round {last.number}'s template: it misreads the fewest outputs and "
                f"examples ({misread}); the later rounds lost as much as they fixed, or more",
                "yellow",
            )
        )
    if last.examples:
        _print_unread_examples(console, unread_examples, len(last.examples))
    if outputs:
        loop_full = None if args.loop is None else len(last.examples) >= args.loop
        _print_unread(console, unread, last.outputs, args.examples, loop_full)
    return exit_code


def _print_round(console: Console, done) -> None:
    """One round of the author's loop, as it ends (`Round.lines`)."""
    for number, line in enumerate(done.lines()):
        style = "bold" if number == 0 else "red" if "UNREAD" in line or "LOST" in line else "yellow"
        console.print(Text(line, style))


def _print_inferred(console: Console, result, source: str, output: Path) -> None:
    """The inferred template's report: findings with the renders that show them, fallbacks,
    notes, missing parts, candidates, the verdict and the matrix."""
    from .chat_templates.markup import difference

    switch = f" (thinking switch: {result.thinking_switch})" if result.thinking_switch else ""
    console.print(Text(f"inferred from {source}{switch}: wrote {output}", "bold"))
    for finding in result.findings:
        console.print(_finding_line(finding, result.template))
        console.print(Text(f"    {finding.how}", "dim"))
        if len(finding.renders) == 2:
            for render, span in zip(
                finding.renders, difference(finding.renders[0].text, finding.renders[1].text)
            ):
                console.print(
                    Text.assemble(
                        "    ", (f"{render.label}: ", "cyan"), _difference_excerpt(render, span)
                    )
                )
        elif finding.renders:
            console.print(Text.assemble("    ", (f"{finding.renders[0].label}", "cyan")))
    for text in result.fallbacks:
        console.print(Text(f"fallback: {text}", "yellow"))
    for text in result.notes:
        console.print(Text(f"note: {text}", "dim"))
    for missing in result.missing:
        console.print(Text(f"missing: {missing.sentence()}", "yellow"))
    for candidate in result.candidates:
        verdict = _STATUS[candidate.passed]
        console.print(Text.assemble(verdict, f" candidate: {candidate.description}"))
        for failure in candidate.failures():
            console.print(Text(f"    {failure}", "dim"))
    counts = result.report.counts()
    console.print(Text(result.verdict(), "bold"))
    console.print(
        f"matrix: {counts['passed']} passed, {counts['failed']} failed, {counts['not_renderable']} not renderable"
    )
    for row in result.report.failed:
        console.print(Text(f"  FAIL {row.name}: {row.detail}", "red"))


def _print_unread_examples(console: Console, unread: list[str], total: int) -> None:
    """How many of the examples the template reads, each misread one with why."""
    console.print(Text(f"examples: {total - len(unread)} of {total} read", "bold"))
    for problem in unread:
        console.print(Text(f"  UNREAD {problem}", "red"))


def _print_unread(
    console: Console,
    unread: list[str],
    total: int,
    examples: str | None,
    loop_full: bool | None = None,
) -> None:
    """How many of the author's other outputs the template reads, each unread one with why, and
    the next step: the first unread output added to the examples; after a loop (`loop_full`:
    whether it stopped at the examples allowed), a larger ``--loop`` or, when every unread
    output was tried and set aside, a hand edit."""
    console.print(Text(f"outputs: {total - len(unread)} of {total} read", "bold"))
    for problem in unread:
        console.print(Text(f"  UNREAD {problem}", "red"))
    if not unread:
        return
    if loop_full:
        console.print(Text("next: allow more examples with a larger --loop N", "yellow"))
    elif loop_full is not None:
        console.print(
            Text(
                "next: each output still unread was tried as an example and cost more than it "
                "taught; edit the template by hand where the UNREAD lines say",
                "yellow",
            )
        )
    else:
        first = unread[0].split(":")[0]
        into = f" ({examples})" if examples else " (--examples FILE)"
        console.print(Text(f"next: add {first} to the examples{into} and infer again", "yellow"))


def print_diagnoses(console: Console, diagnoses: list[Diagnosis], *, notes: bool = False) -> None:
    """The causes of a parse, most important first: ``cause:`` lines (errors), ``warning:`` lines,
    and with `notes` the ``note:`` lines (a pattern's literal that may be mentioned on purpose)."""
    styles = {
        "error": ("cause", "bold red"),
        "warning": ("warning", "yellow"),
        "note": ("note", "dim"),
    }
    for diagnosis in diagnoses:
        if diagnosis.severity == "note" and not notes:
            continue
        label, style = styles[diagnosis.severity]
        line = Text()
        line.append(f"{label}: ", style)
        line.append(diagnosis.message)
        console.print(line)


def render_trace(result, console: Console) -> None:
    """Print a trace as the prefix tail and generation, coloured by region, then a legend."""
    styles: dict[str, str] = {}
    text = Text()
    boundary_done = False
    for span in result.spans:
        if span.source == "generation" and not boundary_done:
            boundary_done = True
            if result.prefix_tail:
                text.append("⏐", "bold white on blue")  # where the generation starts
        if span.kind in _KIND_STYLES:
            style = _KIND_STYLES[span.kind]
        else:
            style = styles.setdefault(span.field, _FIELD_STYLES[len(styles) % len(_FIELD_STYLES)])
            if span.kind in ("open", "close"):
                style = f"bold underline {style}"
        text.append(span.text, style)
    console.print(Text(f"anchor cut at prefix offset {result.anchor.offset}", "dim"))
    console.print(text)
    legend = Text("\nregions: ")
    for name, style in styles.items():
        legend.append(f" {name} ", f"reverse {style}")
    legend.append("  delimiters underlined; ")
    legend.append(" discarded ", _KIND_STYLES["discarded"])
    legend.append(" unparsed ", _KIND_STYLES["unparsed"])
    console.print(legend)
    print_diagnoses(console, result.diagnoses, notes=True)
    for warning in result.warnings:
        console.print(
            Text(
                f"warning ({warning.code}) at {warning.source} {warning.start}: {warning.message}",
                "yellow",
            )
        )
        if warning.suggestion:
            console.print(Text(f"    fix: {warning.suggestion}", "dim"))
    for kept in result.errors:
        console.print(
            Text(
                f"kept error in {kept.field} at {kept.position_source or kept.source} {kept.position if kept.position is not None else kept.offset}: {kept.message}",
                "yellow",
            )
        )
    if result.error is not None:
        console.print(
            Text(
                f"error in {result.error.field} at {result.error.source} {result.error.offset}: {result.error.message}",
                "bold red",
            )
        )
    else:
        console.print_json(json.dumps(result.message, ensure_ascii=False))


def command_parse(args, console: Console) -> int:
    template = read_template(args.template)
    prefix = Path(args.prefix).read_text(encoding="utf-8") if args.prefix else ""
    if args.prefix is None:
        Console(stderr=True, highlight=False, soft_wrap=True).print(
            Text(
                "note: no --prefix, so the prefix is empty: a region the chat template opens in the prompt (an "
                "opening <think>, a channel header) is unknown, and its text may land in the wrong field. Pass the "
                "prompt text with --prefix FILE (--prefix /dev/null says the empty prefix is meant).",
                "yellow",
            )
        )
    generation = (
        sys.stdin.read()
        if args.generation == "-"
        else Path(args.generation).read_text(encoding="utf-8")
    )
    if args.tokenizer is not None:
        return command_parse_ids(args, console, template, prefix, generation)
    if args.trace:
        result = trace(generation, template, prefix=prefix, on_error=args.on_error)
        render_trace(result, console)
        return 1 if result.error else 0
    errors = Console(stderr=True, highlight=False, soft_wrap=True)

    def causes() -> list[Diagnosis]:
        found = trace(generation, template, prefix=prefix, on_error=args.on_error).diagnoses
        if not any(d.code == "near-miss" for d in found):
            return found
        return blame_the_output(found, parse_evidence(args, prefix, template))

    try:
        parser = ResponseParser(
            template, prefix, on_error=args.on_error
        )  # replaying the prefix can fail too
        message, _ = parser.finalize(generation)
    except ResponseParseError as error:
        # The error is usually a symptom: say its cause first.
        print_diagnoses(console, causes())
        console.print(Text(f"error: {error}", "bold red"), highlight=False)
        return 1
    diagnoses = causes() if parser.errors or prefix else []
    print_diagnoses(errors, diagnoses)
    for kept in parser.errors:
        errors.print(Text(f"kept: {kept}", "yellow"))
    print(json.dumps(message, ensure_ascii=False, indent=2))
    return 0


def parse_evidence(args, prefix: str, template=None) -> DelimiterEvidence:
    """What confirms the template's delimiters for `parse`: the chat template's renders
    (--chat-template or --model), the tokenizer's tokens (--model), the prefix, and, for a
    shipped template (named by family, or a file holding the same template), the outputs of
    its samples file.

    Raises:
        ValueError (ModelLoadError): --model cannot be loaded; the chat template is empty.
    """
    renders: list[str] = []
    tokens: list[str] = []
    if args.chat_template or args.model:
        from .chat_templates.conformance import rendered_prompts, resolve_chat_template
        from .chat_templates.tokens import load_tokenizer, marker_tokens

        text = Path(args.chat_template).read_text(encoding="utf-8") if args.chat_template else None
        chat_template, bos, eos = resolve_chat_template(
            text, args.model, args.bos_token, args.eos_token
        )
        renders = rendered_prompts(chat_template, bos_token=bos, eos_token=eos)
        if args.model:
            tokens = marker_tokens(load_tokenizer(args.model))
    outputs: list[str] = []
    samples = SAMPLES_DIR / f"{args.template}.json"
    if not Path(args.template).is_file() and samples.is_file():
        outputs = [
            case.prefix + case.generation
            for case in load_sample_file(samples, {})
            if case.expected is not None
        ]
    return DelimiterEvidence.of(
        renders=renders,
        tokens=tokens,
        prefix=prefix,
        outputs=outputs,
        shipped=() if outputs or template is None else shipped_outputs(template),
    )


def load_tokenizer_folder(folder: str):
    """The Hugging Face tokenizer saved in `folder` (nothing is downloaded).

    Raises:
        SystemExit: the folder holds no tokenizer (the message says which folder).
    """
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(folder, local_files_only=True)
    except (OSError, ValueError) as error:
        raise SystemExit(f"error: no tokenizer in {folder!r}: {error}") from None


def generation_ids(generation: str, tokenizer) -> list[int]:
    """The generation as token ids: a JSON list of ints as is, any other text tokenized
    (without special tokens added; a control token written in the text is encoded as its id)."""
    stripped = generation.strip()
    if stripped.startswith("["):
        try:
            ids = json.loads(stripped)
        except json.JSONDecodeError:
            ids = None
        if isinstance(ids, list) and all(
            isinstance(i, int) and not isinstance(i, bool) for i in ids
        ):
            return ids
    return tokenizer.encode(generation, add_special_tokens=False)


def render_tokens(parser: ResponseParser, events: list[dict], console: Console) -> None:
    """Print the decoded stream token by token (alternate shades, control tokens bold, spelled-out
    control tokens underlined in red), then each delimiter and what matched it."""
    tokens = parser.tokens
    spelled = tokens.spelled_out()
    text = Text()
    for number, token in enumerate(tokens.boundaries()):
        if token["control"]:
            style = "bold black on magenta"
        elif any(start < token["end"] and token["start"] < end for start, end in spelled):
            style = "underline red"
        else:
            style = "on grey23" if number % 2 else "on grey35"
        text.append(tokens.text[token["start"] : token["end"]], style)
    console.print(Text(f"{len(tokens.ids) - tokens.prefix_tokens} generated token(s)", "dim"))
    console.print(text)
    legend = Text("\ntokens: ")
    legend.append(" control token ", "bold black on magenta")
    legend.append(" ")
    legend.append(" spelled out (text, never a delimiter) ", "underline red")
    console.print(legend)
    for event in events:
        if event["type"] != "region_chunk" and event["end"] > event["start"]:
            first, past = event["tokens"]
            side = "open" if event["type"] == "region_open" else "close"
            console.print(
                f"{side} {event['field']}: {tokens.text[event['start'] : event['end']]!r} "
                f"(tokens {first}-{past - 1}, matched by {tokens.matched_by(event['start'], event['end'])})",
                highlight=False,
            )
    for start, end in spelled:
        console.print(
            Text(f"spelled out at {start}: {tokens.text[start:end]!r} stays text", "yellow")
        )


def command_parse_ids(args, console: Console, template: dict, prefix: str, generation: str) -> int:
    """`parse --tokenizer DIR`: the generation read as token ids (see `generation_ids`)."""
    tokenizer = load_tokenizer_folder(args.tokenizer)
    ids = generation_ids(generation, tokenizer)
    try:
        parser = ResponseParser(
            template, prefix, on_error=args.on_error, tokenizer=tokenizer, positions=args.trace
        )
        events = list(parser.initial_events)
        message, final = parser.finalize(ids)
    except ResponseParseError as error:
        console.print(Text(f"error: {error}", "bold red"), highlight=False)
        return 1
    if args.trace:
        render_tokens(parser, events + final, console)
        console.print_json(json.dumps(message, ensure_ascii=False))
        return 0
    errors = Console(stderr=True, highlight=False, soft_wrap=True)
    for kept in parser.errors:
        errors.print(Text(f"kept: {kept}", "yellow"))
    print(json.dumps(message, ensure_ascii=False, indent=2))
    return 0


def command_explain(args, console: Console) -> int:
    explanation = explain_pattern(args.pattern)
    if explanation.error:
        console.print(Text(f"error: {explanation.error}", "bold red"))
        console.print(
            Text(f"  {args.pattern}\n  {' ' * (explanation.error_position or 0)}^", "red")
        )
    for depth, piece in explanation.lines():
        line = Text("  " * depth)
        line.append(piece.text, "bold cyan")
        line.append(f"  {piece.meaning}" if piece.meaning else "")
        console.print(line)
    return 2 if explanation.error else 0


def command_batch(args, console: Console) -> int:
    from .batch.run import choose_engine, parse_file

    report = Console(stderr=True, highlight=False, soft_wrap=True)
    engine, note = (args.engine, None) if args.engine else choose_engine(args.input, args.num_proc)
    if args.no_prefix and args.prefix_column != "prefix":
        raise ValueError("give either --no-prefix or --prefix-column, not both")
    if note:
        report.print(Text(f"note: {note}", "yellow"))
    try:
        summary = parse_file(
            read_template(args.template),
            args.input,
            args.output,
            engine=engine,
            num_proc=None if note else args.num_proc,
            prefix_column=None if args.no_prefix else args.prefix_column,
            output_column=args.output_column,
            tools_column=args.tools_column,
            on_error=args.on_error,
            batch_rows=args.batch_size,
            keep_input=args.keep_input,
            regex_timeout=args.regex_timeout,
            progress=not args.no_progress,
        )
    except ImportError as error:
        raise ValueError(
            f"{error}: the datasets and ray engines, and Parquet files, need the batch extra "
            "(pip install 'response-templates[batch]', or '.[batch]' in a checkout)"
        ) from None
    workers = f"{summary.workers} process{'es' if summary.workers > 1 else ''}"
    startup = ""
    if summary.engine == "datasets":
        startup = f", after {summary.startup_seconds:.2f} s starting the processes"
    elif summary.engine == "ray":
        startup = f", after {summary.startup_seconds:.2f} s starting Ray and its workers ({summary.shutdown_seconds:.2f} s stopping it)"
    report.print(
        f"{summary.rows:,} rows in {summary.seconds:.2f} s ({summary.rows_per_second:,.0f} rows/s) "
        f"with {summary.engine} ({workers}){startup} -> {args.output}"
    )
    if summary.rows_with_errors:
        kept = "messages kept" if args.on_error == "keep" else "no message"
        by_field = ", ".join(
            f"{name} {count:,}" for name, count in summary.errors_by_field.most_common()
        )
        rows = f"{summary.rows_with_errors:,} row{'s' if summary.rows_with_errors != 1 else ''}"
        report.print(Text(f"{rows} with errors ({kept}); errors by field: {by_field}", "yellow"))
    else:
        report.print("no errors")
    if summary.rows_with_warnings:
        rows = f"{summary.rows_with_warnings:,} row{'s' if summary.rows_with_warnings != 1 else ''}"
        report.print(
            Text(
                f"{rows} with warnings (text the parse probably put where it does not belong: "
                "parse one with `parse --trace` to see where)",
                "yellow",
            )
        )
    if args.profile:
        report.print(profile_table(summary))
    return 0


def profile_table(summary) -> Table:
    """Where a batch run's time went: each stage's seconds (the workers' summed over them) and
    its share of the run's work, then how busy the workers were, and the CPU time of the read to
    write stages (well under their wall time: other processes held the CPUs)."""
    from .batch.run import APART_STAGES, STAGES, WORKER_STAGES

    workers = summary.workers
    work = sum(summary.stages.get(stage, 0.0) for stage in STAGES if stage not in APART_STAGES)
    where = {
        stage: "workers" if stage in WORKER_STAGES and summary.engine != "local" else "this process"
        for stage in STAGES
    }
    table = Table(
        title=f"where the time went: {summary.engine}, {summary.shards:,} shard{'s' if summary.shards != 1 else ''}",
        title_justify="left",
        box=None,
        pad_edge=False,
    )
    table.add_column("stage")
    table.add_column("where")
    table.add_column("seconds", justify="right")
    table.add_column("share", justify="right")
    for stage in STAGES:
        seconds = summary.stages.get(stage, 0.0)
        share = "(apart)" if stage in APART_STAGES else f"{seconds / work:.1%}" if work else "-"
        table.add_row(stage, where[stage], f"{seconds:.2f}", share)
    busy = sum(summary.stages.get(stage, 0.0) for stage in WORKER_STAGES)
    table.add_row("", "", "", "")
    table.add_row("run", "wall time", f"{summary.seconds:.2f}", "")
    if summary.engine != "local":
        whole = summary.seconds + summary.startup_seconds + summary.shutdown_seconds
        table.add_row("whole", "with start-up, shut-down", f"{whole:.2f}", "")
    if summary.engine != "local" and summary.seconds:
        table.add_row(
            "workers busy",
            f"of {workers} x {summary.seconds:.2f} s",
            f"{busy:.2f}",
            f"{busy / (workers * summary.seconds):.0%}",
        )
    if busy:
        table.add_row(
            "CPU",
            "of the stages' time",
            f"{summary.cpu_seconds:.2f}",
            f"{summary.cpu_seconds / busy:.0%}",
        )
    return table


def add_chat_template_source(command: argparse.ArgumentParser) -> None:
    """The options naming a chat template and its tokens (conformance and infer take the same)."""
    command.add_argument(
        "--chat-template", help="the Jinja chat template file (e.g. chat_template.jinja)"
    )
    command.add_argument(
        "--model",
        help="a hub id or local folder: use its tokenizer's chat template (no weights are read)",
    )
    command.add_argument(
        "--bos-token", help="the chat template's bos_token (default empty, or the tokenizer's)"
    )
    command.add_argument(
        "--eos-token", help="the chat template's eos_token (default empty, or the tokenizer's)"
    )


def command_grammar(args, console: Console) -> int:
    from .grammar import derive_grammar

    tools = json.loads(Path(args.tools).read_text(encoding="utf-8")) if args.tools else []
    if isinstance(tools, dict) and "tools" in tools:
        tools = tools["tools"]
    if not isinstance(tools, list):
        raise ValueError(f'{args.tools}: expected a JSON list of tools (or {{"tools": [...]}})')
    prefix = Path(args.prefix).read_text(encoding="utf-8") if args.prefix else ""
    derived = derive_grammar(
        read_template(args.template),
        tools,
        tool_choice=args.tool_choice,
        parallel_tool_calls=not args.no_parallel,
        prefix=prefix,
    )
    errors = Console(stderr=True, highlight=False, soft_wrap=True)
    if not derived.ok:
        for reason in derived.unconstrainable:
            errors.print(Text(f"cannot constrain: {reason}", "bold red"))
        return 1
    if args.format == "structural-tag":
        written = json.dumps(derived.structural_tag(), indent=2, ensure_ascii=False) + "\n"
    elif args.format == "lark":
        special = {}
        if args.tokenizer:
            from transformers import AutoTokenizer

            from .grammar.matching import special_tokens

            special = special_tokens(AutoTokenizer.from_pretrained(args.tokenizer))
        written = derived.lark(special)
        if not args.tokenizer:
            errors.print(
                Text(
                    "note: written without --tokenizer: delimiters are text; for a model whose "
                    "tokenizer has a delimiter as a special token, give --tokenizer",
                    "yellow",
                )
            )
    else:
        written = derived.gbnf()
    sys.stdout.write(written)
    for note in derived.notes_for(args.format):
        errors.print(Text(f"note: {note}", "yellow"))
    return 0


def command_export(args, console: Console) -> int:
    from .authoring.portability import export_for

    path = Path(args.template)
    source = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else args.template
    exported = export_for(source, args.target)
    written = json.dumps(exported.template, indent=2, ensure_ascii=False) + "\n"
    errors = Console(stderr=True, highlight=False, soft_wrap=True)
    if args.output:
        Path(args.output).write_text(written, encoding="utf-8")
        errors.print(f"wrote {args.output}")
    else:
        sys.stdout.write(written)
    for change in exported.changes:
        errors.print(Text(f"changed: {change}", "green"))
    for finding in exported.remaining:
        style = {"error": "bold red", "warning": "yellow", "info": "blue"}[finding.severity]
        errors.print(Text(f"{finding.severity}: {finding.path}: {finding.message}", style))
    return 0 if exported.servable else 1


def _template_command(commands, name: str, help: str) -> argparse.ArgumentParser:
    """Subcommand `name` of `commands` (argparse subparsers), its first argument the template
    (a template JSON file, plain or a templates/ wrapper, or a family name); returns its parser."""
    command = commands.add_parser(name, help=help)
    command.add_argument(
        "template", help="template JSON file (plain or templates/ wrapper) or family name"
    )
    return command


def add_grammar_commands(commands) -> None:
    """The ``grammar`` and ``export`` commands."""
    grammar = _template_command(
        commands,
        "grammar",
        help="the grammar of every output a template reads back, for constrained generation (exit 1 when none honours the request)",
    )
    grammar.add_argument(
        "--tools",
        help="JSON file: a list of tools as apply_chat_template takes them (none: no tool calls)",
    )
    grammar.add_argument(
        "--tool-choice", default="auto", help="auto (default), required, none, or a function name"
    )
    grammar.add_argument("--no-parallel", action="store_true", help="at most one tool call")
    grammar.add_argument(
        "--format",
        choices=("structural-tag", "lark", "gbnf"),
        default="structural-tag",
        help="structural-tag (xgrammar, vLLM, SGLang; default), lark (llguidance) or gbnf (llama.cpp)",
    )
    grammar.add_argument("--prefix", help="file holding the prompt text the output continues")
    grammar.add_argument(
        "--tokenizer",
        help="a local tokenizer folder: with --format lark, its special tokens are written as tokens",
    )
    export = _template_command(
        commands,
        "export",
        help="rewrite a template for a serving runtime (exit 1 when it still refuses something)",
    )
    export.add_argument("--for", dest="target", required=True, choices=TARGETS, help="the runtime")
    export.add_argument("--output", help="the file to write (default: stdout)")


def add_infer_command(commands) -> None:
    """The ``infer`` command and its options."""
    infer = commands.add_parser(
        "infer",
        help="infer a response template from a chat template (exit 0 it passes the matrix, 1 it does not, 2 nothing inferred)",
    )
    add_chat_template_source(infer)
    infer.add_argument(
        "--output", help="the templates/-style file to write (default NAME.json here)"
    )
    infer.add_argument(
        "--name", help="the template's name (default from the chat template file or the model id)"
    )
    infer.add_argument(
        "--json", action="store_true", help="print the result (template, matrix, findings) as JSON"
    )
    infer.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds the inference may take (default 60; with --loop, each round)",
    )
    infer.add_argument(
        "--examples",
        help="a JSONL file of outputs the model wrote (prefix, output, tools, expected: optional): "
        "the template must read them, and they teach what no render shows",
    )
    infer.add_argument(
        "--outputs",
        help="a JSONL file of other outputs (as --examples): says which ones the inferred template "
        "cannot read; add the first to the examples and infer again",
    )
    infer.add_argument(
        "--loop",
        type=int,
        metavar="N",
        help="with --outputs: learn, add the first output the template cannot read to the "
        "examples and learn again, up to N examples, reporting each round",
    )


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser: one subcommand a task (see `main`)."""
    parser = argparse.ArgumentParser(
        prog="python -m engine", description="Response-template tools for template authors."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    _add_check_and_lint(commands)
    _add_chat_template_commands(commands)
    _add_parse_and_explain(commands)
    _add_batch(commands)
    add_grammar_commands(commands)
    return parser


def _add_on_error(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--on-error",
        choices=ON_ERROR_MODES,
        default="raise",
        help="raise (default): a region that does not parse is an error; keep: its text goes to the implicit field",
    )


def _add_check_and_lint(commands) -> None:
    check = _template_command(
        commands, "check", help="lint a template and run it over a samples file (exit 1 on failure)"
    )
    check.add_argument("samples", help="samples JSON file (format: samples/README.md)")
    check.add_argument(
        "--seeds", type=int, default=20, help="random chunkings per sample (default 20)"
    )
    check.add_argument(
        "--truncation-step",
        type=int,
        default=1,
        help="test every K-th cut inside a delimiter (0: skip)",
    )
    _add_on_error(check)
    lint_command = commands.add_parser(
        "lint", help="print diagnostics for a template (exit 1 on an error)"
    )
    lint_command.add_argument("template")
    lint_command.add_argument(
        "--chat-template",
        help="a Jinja chat template file: also check its prompts contain the start anchor",
    )
    lint_command.add_argument("--bos-token", help="the chat template's bos_token (default empty)")
    lint_command.add_argument("--eos-token", help="the chat template's eos_token (default empty)")
    lint_command.add_argument(
        "--tokenizer",
        metavar="DIR",
        help="a local tokenizer folder: also warn where a literal delimiter is not one control token "
        "(`</tool_call >`, or one split across tokens) and where a control token the chat template "
        "writes appears nowhere in the template",
    )
    lint_command.add_argument(
        "--target",
        choices=TARGETS,
        help="also check what this runtime refuses (errors) or reads differently (warnings)",
    )


def _add_chat_template_commands(commands) -> None:
    conformance = _template_command(
        commands,
        "conformance",
        help="check a template against a model's chat template (exit 0 all pass, 1 some fail, 2 nothing renderable)",
    )
    add_chat_template_source(conformance)
    conformance.add_argument("--json", action="store_true", help="print the report as JSON")
    add_infer_command(commands)


def _add_parse_and_explain(commands) -> None:
    parse = commands.add_parser("parse", help="parse one generation and print the message")
    parse.add_argument("template")
    parse.add_argument(
        "generation", nargs="?", default="-", help="generation file, or - for stdin (default)"
    )
    parse.add_argument(
        "--prefix",
        help="file holding the prompt text sent before the generation (without it the prefix is empty, with a note)",
    )
    parse.add_argument("--trace", action="store_true", help="print the region map as coloured text")
    parse.add_argument(
        "--tokenizer",
        metavar="DIR",
        help="a local tokenizer folder: read the generation as token ids (a JSON list of ints, or "
        "text, which is tokenized), so that control tokens are delimiters only as their ids; with "
        "--trace, show the token boundaries",
    )
    _add_on_error(parse)
    # What confirms the template's delimiters, so a near miss in the output is not blamed on it.
    add_chat_template_source(parse)
    explain = commands.add_parser("explain", help="explain a delimiter pattern piece by piece")
    explain.add_argument(
        "pattern", help="the pattern, as written in the template (quote it for the shell)"
    )


def _add_batch(commands) -> None:
    batch = _template_command(
        commands, "batch", help="parse every row of a JSONL or Parquet file (see docs/batch.md)"
    )
    batch.add_argument(
        "input", help="input file: .jsonl/.ndjson or .parquet/.pq, one generation a row"
    )
    batch.add_argument(
        "--output",
        required=True,
        help="output file (.jsonl or .parquet): the rows in order, with message and error",
    )
    batch.add_argument(
        "--engine",
        choices=ENGINES,
        help="local (this process), datasets or ray (default: local, or datasets with --num-proc > 1 unless the input is small)",
    )
    batch.add_argument(
        "--num-proc",
        type=int,
        help="worker processes (ray: at most this many tasks at once; default: every CPU)",
    )
    batch.add_argument(
        "--prefix-column", default="prefix", help="column of prompt texts (default: prefix)"
    )
    batch.add_argument(
        "--no-prefix",
        action="store_true",
        help='rows have no prompt: parse each with the prefix ""',
    )
    batch.add_argument(
        "--output-column", default="output", help="column of generations (default: output)"
    )
    batch.add_argument(
        "--tools-column",
        help="column of tool schemas (a list, or its JSON text) to cast tool-call arguments",
    )
    batch.add_argument(
        "--on-error",
        choices=ON_ERROR_MODES,
        default="keep",
        help="keep (default): a region that does not parse keeps its text, and the row gets an error beside its message; "
        "raise: the row gets an error and no message",
    )
    batch.add_argument(
        "--batch-size", type=int, default=BATCH_ROWS, help=f"rows per batch (default {BATCH_ROWS})"
    )
    batch.add_argument(
        "--keep-input",
        action="store_true",
        help="also write the prefix, output and tools columns to OUTPUT",
    )
    batch.add_argument(
        "--regex-timeout",
        type=float,
        help="seconds allowed for each regex call of a template pattern",
    )
    batch.add_argument("--no-progress", action="store_true", help="no progress bars")
    batch.add_argument(
        "--profile",
        action="store_true",
        help="also print where the time went, stage by stage (read, parse, write...)",
    )


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 1 failure, 2 bad usage or input)."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    # argparse fills the optional GENERATION positional before it sees a later --prefix.
    if (
        extra
        and args.command == "parse"
        and args.generation == "-"
        and len(extra) == 1
        and not extra[0].startswith("--")
    ):
        args.generation = extra[0]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    console = Console(highlight=False, soft_wrap=True)
    handlers = {
        "batch": command_batch,
        "check": command_check,
        "conformance": command_conformance,
        "explain": command_explain,
        "export": command_export,
        "grammar": command_grammar,
        "infer": command_infer,
        "lint": command_lint,
        "parse": command_parse,
    }
    try:
        return handlers[args.command](args, console)
    except (TemplateError, OSError, ValueError, ImportError) as error:
        console.print(Text(f"error: {error}", "bold red"))
        # What the error hints at (its `hint`), named as this command offers it.
        offered = {
            "chat_template": ("chat_template", "give the chat template with --chat-template FILE"),
            "time_budget": ("timeout", "allow more time with --timeout SECONDS"),
        }.get(getattr(error, "hint", ""))
        if offered is not None and hasattr(args, offered[0]):
            console.print(Text(f"hint: {offered[1]}", "yellow"))
        return 2
