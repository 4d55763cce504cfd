"""The chat-template check: `engine.chat_templates.conformance` run in a worker with a time limit, and its matrix.

A pasted chat template is untrusted Jinja: it can loop for minutes or allocate
gigabytes inside transformers' sandbox. So `run_check` never renders it in the
server process: each check is a "conformance" job of `playground.server.workers`, in a
worker process of its own with a memory cap, killed when it has not answered
within `Limits.conformance_seconds` (the check then says it was cut off). A
model named for its chat template must be one the server allows
(`playground.server.folders`).

`matrix_view` is the report as the page shows it (a `MatrixView`, drawn by
`playground.panels.check_matrix`): a summary, the failing rows grouped by root
cause (`root_causes`: the diagnosis of each row's parse, so sixteen rows failing
on one misspelt delimiter are one cause, said first), then one row per situation
and check, each row with a prompt clickable (`data-row`, see
`playground.panels.page_script.CONFORMANCE_JS`) to load it into Paste & parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine import TemplateError, load_template

from ..server import limits
from ..server.folders import FolderError, check_model_name, shown
from ..server.input_readers import InputError, read_template
from ..server.redact import redact
from ..server.workers import JobError, run_job

DETAIL_SHOWN = 400
# The longest bos_token or eos_token accepted (characters): real ones are a few.
TOKEN_CHARS = 200


@dataclass
class CheckOutcome:
    """What one chat-template check gave.

    Attributes:
        report: `ConformanceReport.to_dict()` (``passed``, ``counts``, ``thinking_switch``,
            ``diagnostics``, ``situations``: each with name, passed, renderable, detail,
            expected, got, prompt, generation, normalisations), or None when there is none.
        error: why there is no report (bad input, no such model, an unreachable Hub, the
            time limit), or None.
        cut_off: the worker ran past the time limit and was killed.
        seconds: wall time of the check.
        source: what was checked against ("the pasted chat template", "samples/demo-model").
    """

    report: dict | None = None
    error: str | None = None
    cut_off: bool = False
    seconds: float = 0.0
    source: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def rows(self) -> list[dict]:
        return self.report["situations"] if self.report else []

    def to_dict(self) -> dict:
        """The `/conformance` result: the report's keys, plus error, cut_off, seconds and source."""
        report = self.report or {
            "passed": False,
            "counts": None,
            "thinking_switch": None,
            "diagnostics": [],
            "situations": [],
        }
        return {
            **report,
            "error": self.error,
            "cut_off": self.cut_off,
            "seconds": round(self.seconds, 3),
            "source": self.source,
            "notes": list(self.notes),
        }


# -- the job, in a worker process (`playground.server.workers`) ------------------------------


def check_job(payload: dict) -> dict:
    """One check in a worker: `ConformanceReport.to_dict()` of `payload` (the `run_check` arguments)."""
    from engine.chat_templates.conformance import check_conformance
    from engine.chat_templates.render import ModelLoadError

    try:
        report = check_conformance(
            payload["template"],
            payload.get("chat_template"),
            model=payload.get("model"),
            bos_token=payload.get("bos_token"),
            eos_token=payload.get("eos_token"),
            regex_timeout=payload.get("regex_timeout"),
        )
    except (TemplateError, ModelLoadError, ValueError, ImportError) as error:
        raise JobError(redact(str(error))) from None
    result = report.to_dict()
    for row in result["situations"]:  # a chat template's own errors, without Python's type names
        row["detail"] = redact(row["detail"])
    for diagnostic in result["diagnostics"]:
        diagnostic["message"] = redact(diagnostic["message"])
    return result


def run_check(
    template: dict,
    *,
    chat_template: str | None = None,
    model: str | None = None,
    bos_token: str | None = None,
    eos_token: str | None = None,
    seconds: float,
    regex_timeout: float | None = None,
) -> CheckOutcome:
    """Check `template` against a chat template (pasted text, or a model's tokenizer) in a worker.

    Args:
        template: the response template (a dict; validated by the worker).
        chat_template: the Jinja text; or `model`: a hub id or a local folder (tokenizer files
            only; a hub id fails in seconds when the Hub cannot be reached).
        bos_token, eos_token: the tokens the chat template writes (None: "" for a pasted
            template, the tokenizer's for a model).
        seconds: the time limit; past it the worker is killed and `cut_off` is set.
        regex_timeout: seconds per regex call of the template's patterns.

    Returns a `CheckOutcome`; never raises for bad input (its `error` says what went wrong).
    """
    source = (
        "the pasted chat template" if chat_template is not None else f"the chat template of {model}"
    )
    job = {
        "template": template,
        "chat_template": chat_template,
        "model": model,
        "bos_token": bos_token,
        "eos_token": eos_token,
        "regex_timeout": regex_timeout,
    }
    outcome = run_job("conformance", job, seconds=seconds)
    if outcome.cut_off:
        return CheckOutcome(
            error=f"The check was cut off after {seconds:g} s: the chat template takes too long to render (or loops). "
            "The time limit is PLAYGROUND_LIMITS' conformance_seconds.",
            cut_off=True,
            seconds=outcome.seconds,
            source=source,
        )
    error = outcome.error
    if (
        error
        and outcome.result is None
        and error.startswith(("the worker", "the job", "too many", "the result"))
    ):
        error = f"The check's {error.removeprefix('the ')}."
    return CheckOutcome(outcome.result, error, seconds=outcome.seconds, source=source)


def chat_template_input(
    chat_template_text: str, chat_template_model: str, bos_token: str, eos_token: str
) -> str:
    """Check the chat-template boxes of the page (the pasted text, the model box, the two
    tokens) against the caps; return the model to take the chat template from: "" when a
    chat template is pasted (it wins), else the model box's name as the server allows it.

    Raises:
        InputError: a token or the pasted text is too long, or both boxes are empty.
        FolderError: the model names a folder the server does not allow.
    """
    caps = limits.current()
    pasted = (chat_template_text or "").strip()
    model = (chat_template_model or "").strip()
    for what, token in (("bos_token", bos_token), ("eos_token", eos_token)):
        if len(token or "") > TOKEN_CHARS:
            raise InputError(
                f"The {what} is too long: {len(token):,} characters (limit {TOKEN_CHARS:,})."
            )
    if not pasted and not model:
        raise InputError(
            "Paste a chat template (the Jinja text of the model's chat_template), or name a model "
            "(a local folder or a hub id) to take it from."
        )
    if len(chat_template_text or "") > caps.chat_template_chars:
        raise InputError(
            f"The chat template is too large: {len(chat_template_text):,} characters "
            f"(limit {caps.chat_template_chars:,})."
        )
    return check_model_name(model) if model and not pasted else model


def check_from_page(
    template_text: str,
    chat_template_text: str,
    chat_template_model: str,
    bos_token: str = "",
    eos_token: str = "",
) -> CheckOutcome:
    """The check as the page (and `/conformance`) asks for it: the editor's template against the
    pasted chat template, or else the named model's. Empty token boxes mean "" for a pasted
    template and the tokenizer's own for a model. Bad input gives an outcome with `error`."""
    caps = limits.current()
    pasted = (chat_template_text or "").strip()
    try:
        template = read_template(template_text)
        load_template(template)
        model = chat_template_input(chat_template_text, chat_template_model, bos_token, eos_token)
    except (InputError, TemplateError, FolderError) as error:
        return CheckOutcome(error=redact(str(error)))
    notes = (
        [f"The pasted chat template is used; the model box ({model}) is ignored."]
        if pasted and model
        else []
    )
    outcome = run_check(
        template,
        chat_template=chat_template_text if pasted else None,
        model=None if pasted else model,
        bos_token=bos_token or None,
        eos_token=eos_token or None,
        seconds=caps.conformance_seconds,
        regex_timeout=caps.regex_seconds,
    )
    if not pasted:
        outcome.source = f"the chat template of {shown(model)}"
    outcome.notes = notes
    return outcome


# -- the matrix as the page shows it ---------------------------------------------------


def _parts(name: str) -> tuple[str, str, str]:
    """(situation, thinking mode or "", check) of a row name such as
    ``after-tool-result/thinking-on/round-trip:tool-call``."""
    pieces = name.split("/")
    if len(pieces) == 3:
        return pieces[0], pieces[1].removeprefix("thinking-"), pieces[2]
    return pieces[0], "", pieces[-1]


_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_NUMBER = re.compile(r"\d+")


def difference_summary(
    expected: dict | None, got: dict | None, template: dict | None = None
) -> str:
    """How `got` differs from `expected`, by key and without values ("content missing;
    unexpected reasoning_content"), so rows failing the same way read alike. For tool calls it
    says what differs and why (`call_differences`); `template` (the response template dict, when
    known) lets it name the content parser behind a value read as raw text."""
    from engine.chat_templates.evidence import differing_keys

    words = {
        "missing": "{key} missing",
        "unexpected": "unexpected {key}",
        "differs": "{key} differs",
    }
    parts = []
    for key, how in differing_keys(expected or {}, got or {}):
        if key == "tool_calls" and how == "differs":
            spec = ((template or {}).get("fields") or {}).get("tool_calls") or {}
            parts += call_differences(expected["tool_calls"], got["tool_calls"], spec)
        else:
            parts.append(words[how].format(key=key))
    return "; ".join(parts) or "the message differs"


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "text"
    return "null"


def call_differences(expected: object, got: object, spec: dict) -> list[str]:
    """What differs between the expected and the parsed tool calls, and why when it can tell,
    without values (argument names and kinds only), each a phrase.

    Args:
        expected, got: the two messages' ``tool_calls`` values.
        spec: the template's tool-call field (its ``content`` names the parser), or {}.

    Returns:
        phrases such as "2 tool calls expected, 1 read" or "argument 'details' came back as
        text, not an object: ..." ([] never: "tool_calls differs" when nothing more is known).
    """
    if not isinstance(expected, list) or not isinstance(got, list):
        return ["tool_calls differs"]
    if len(expected) != len(got):
        return [
            f"{len(expected)} tool call{'s' if len(expected) != 1 else ''} expected, {len(got)} read "
            "(a call lost, or two read as one: check where each call's region closes)"
        ]
    content = spec.get("content", "")
    found: list[str] = []
    for want, have in zip(expected, got):
        want_fn, have_fn = (want or {}).get("function") or {}, (have or {}).get("function") or {}
        if want_fn.get("name") != have_fn.get("name"):
            found.append(
                f"a call named {have_fn.get('name')!r} where {want_fn.get('name')!r} was expected"
            )
            continue
        want_args, have_args = want_fn.get("arguments"), have_fn.get("arguments")
        if isinstance(want_args, dict) and isinstance(have_args, str):
            found.append(
                f"the arguments of {want_fn.get('name')!r} came back as one string, not an object: "
                "the field's transform or content parser does not read them (check its content)"
            )
            continue
        if not isinstance(want_args, dict) or not isinstance(have_args, dict):
            found.append(f"the arguments of {want_fn.get('name')!r} differ")
            continue
        for key in want_args.keys() - have_args.keys():
            found.append(f"argument {key!r} missing")
        for key in have_args.keys() - want_args.keys():
            found.append(f"unexpected argument {key!r}")
        for key in sorted(want_args.keys() & have_args.keys()):
            a, b = want_args[key], have_args[key]
            if a == b:
                continue
            found.append(_argument_difference(key, a, b, content))
    return list(dict.fromkeys(found)) or ["tool_calls differs"]


def _argument_difference(key: str, expected: object, got: object, content: str) -> str:
    """One argument's difference, and why when the kinds tell it."""
    if isinstance(got, str) and isinstance(expected, (dict, list)):
        if content == "xml-inline":
            return (
                f"argument {key!r} came back as text, not {_kind(expected)}: the chat template writes "
                "it as nested tags, and xml-inline reads one level of tags, so the inner tags stay a "
                "raw string. Read that value as JSON (content_args.value_parser) when the model "
                "writes JSON there, or accept the text and convert it after parsing"
            )
        return (
            f"argument {key!r} came back as text, not {_kind(expected)}: its value is read as raw "
            "text; give the tool's schema (tools=) so it is cast, or read it as JSON "
            "(content_args.value_parser)"
        )
    if isinstance(got, str) and isinstance(expected, (bool, int, float)):
        return (
            f"argument {key!r} came back as text, not {_kind(expected)}: values are read as raw text; "
            "give the tool's schema (tools=) so it is cast"
        )
    if _kind(got) != _kind(expected):
        return f"argument {key!r} came back as {_kind(got)}, not {_kind(expected)}"
    return f"argument {key!r} has a different value"


def root_causes(rows: list[dict], template: dict | None) -> list[str | None]:
    """For each row: the root cause of its failure (None for rows that pass or are not
    renderable). The cause is the leading diagnosis of the row's parse (`engine.authoring.diagnosis`,
    the template key and what to change), else how its message differs, by key and without
    values (`difference_summary`), or for a row with no message its detail with quoted texts
    and numbers blanked, so rows failing the same way share one cause."""
    from engine import trace
    from engine.chat_templates.conformance import TOOLS

    from ..parse.causes import brief, leading_of

    causes: list[str | None] = []
    caps = limits.current()
    ends = limits.deadline("parse_seconds")  # every row's trace together, as one parse
    for row in rows:
        if row["passed"] or not row["renderable"]:
            causes.append(None)
            continue
        cause = None
        if template is not None and row.get("prompt") is not None:
            try:
                result = trace(
                    row["generation"],
                    template,
                    prefix=row["prompt"],
                    tools=TOOLS,
                    on_error="keep",
                    regex_timeout=caps.regex_seconds,
                    deadline=ends,
                    max_regions=caps.regions,
                    max_value_chars=caps.value_chars,
                )
                found = leading_of(result.diagnoses)
                if found is not None:
                    cause = brief(found)
            except (TemplateError, ValueError):
                cause = None
        if cause is None and row.get("got") is not None and row.get("expected") is not None:
            cause = difference_summary(row["expected"], row["got"], template)
        if cause is None:
            cause = _NUMBER.sub("N", _QUOTED.sub("“…”", row["detail"] or "fails"))
        causes.append(cause)
    return causes


def cause_groups(causes: list[str | None]) -> list[tuple[str, list[int]]]:
    """(cause, row indices) for every cause, the most rows first."""
    groups: dict[str, list[int]] = {}
    for index, cause in enumerate(causes):
        if cause is not None:
            groups.setdefault(cause, []).append(index)
    return sorted(groups.items(), key=lambda item: -len(item[1]))


@dataclass(frozen=True)
class MatrixRow:
    """One row of the matrix as shown.

    Attributes:
        index: its index in the report's situations (``data-row`` when `clickable`: it has a
            prompt, and a click loads it into Paste & parse).
        name: the row's name; `situation`, `mode` (" · thinking on", or ""), `check`: its parts.
        outcome: "pass", "fail" or "not renderable".
        detail: what happened, cut to DETAIL_SHOWN characters ("" for nothing).
        cause, cause_rows: the root cause of the group of failing rows this row starts, and how
            many rows it has ("" and 0 for a row that starts none).
    """

    index: int
    name: str
    situation: str
    mode: str
    check: str
    outcome: str
    clickable: bool
    detail: str
    cause: str = ""
    cause_rows: int = 0


@dataclass(frozen=True)
class MatrixView:
    """A check's report as the panel shows it: the verdict (`passed`, `counts`, `source`,
    `seconds`, `thinking_switch` or ""), the lint findings (`diagnostics`: (message,
    suggestion or "") each), the failing rows by root cause (`causes`: (cause, rows) each, the
    most rows first), then the rows: failing rows grouped under their cause, then the others."""

    passed: bool
    counts: dict
    source: str
    seconds: float
    thinking_switch: str
    diagnostics: list[tuple[str, str]]
    causes: list[tuple[str, int]]
    rows: list[MatrixRow]


def _outcome(row: dict) -> str:
    if not row["renderable"]:
        return "not renderable"
    return "pass" if row["passed"] else "fail"


def matrix_rows(situations: list[dict], groups: list[tuple[str, list[int]]]) -> list[MatrixRow]:
    """The matrix's rows: failing rows under their root cause (`groups`: (cause, row indices)
    each, from `cause_groups`), then the others."""
    grouped = [i for _, indices in groups for i in indices]
    order = grouped + [i for i in range(len(situations)) if i not in set(grouped)]
    heads = {indices[0]: (cause, len(indices)) for cause, indices in groups}
    rows = []
    for index in order:
        row = situations[index]
        situation, thinking, check = _parts(row["name"])
        detail = row["detail"] or ""
        if row["normalisations"] and not detail:
            detail = "normalised " + "; ".join(row["normalisations"])
        cause, cause_rows = heads.get(index, ("", 0))
        rows.append(
            MatrixRow(
                index,
                row["name"],
                situation,
                f" · thinking {thinking}" if thinking else "",
                check.replace(":", ": "),
                _outcome(row),
                bool(row["prompt"]),
                detail if len(detail) <= DETAIL_SHOWN else detail[: DETAIL_SHOWN - 1] + "…",
                cause,
                cause_rows,
            )
        )
    return rows


def matrix_view(outcome: CheckOutcome, causes: list[str | None] | None = None) -> MatrixView:
    """The report of `outcome` (which has one) as shown; `causes`: one per row, from
    `root_causes` (ignored unless there is one for every row)."""
    report = outcome.report
    situations = report["situations"]
    if causes is None or len(causes) != len(situations):
        causes = [None] * len(situations)
    groups = cause_groups(causes)
    return MatrixView(
        report["passed"],
        report["counts"],
        outcome.source,
        outcome.seconds,
        report["thinking_switch"] or "",
        [(d["message"], d.get("suggestion") or "") for d in report["diagnostics"]],
        [(cause, len(indices)) for cause, indices in groups],
        matrix_rows(situations, groups),
    )
