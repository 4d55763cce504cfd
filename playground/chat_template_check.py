"""The chat-template check: `engine.conformance` run in a worker with a time limit, and its matrix.

A pasted chat template is untrusted Jinja: it can loop for minutes or allocate
gigabytes inside transformers' sandbox. So `run_check` never renders it in the
server process. Each check runs in its own worker process (this module run as
``python -m playground.chat_template_check``), which reads one job as JSON on
stdin, writes the report as JSON on stdout and exits. The server waits at most
`Limits.conformance_seconds`; a worker that has not answered by then is killed
and the check says it was cut off. A worker is capped in memory too
(`WORKER_MEMORY_BYTES`). One worker is started ahead, its imports done, so a
check does not wait for transformers to import.

`matrix_html` draws the report as the page shows it: a summary, the failing
rows grouped by root cause (`root_causes`: the diagnosis of each row's parse,
so sixteen rows failing on one misspelt delimiter are one cause, said first),
then one row per situation and check, each row with a prompt clickable
(`data-row`, see `playground.page_script.CONFORMANCE_JS`) to load it into
Paste & parse.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from engine import TemplateError, load_template

from . import limits
from .limits import InputError, read_template
from .markup import escape

ROOT = Path(__file__).resolve().parent.parent
# Address space a worker may use (bytes): a chat template that tries to build a huge
# string gets a MemoryError (its row says so) instead of taking the machine's memory.
WORKER_MEMORY_BYTES = 3 * 1024**3
# The largest report a worker sends back (characters of JSON); a chat template that writes
# bigger prompts gets an error instead.
REPORT_CHARS = 8_000_000
DETAIL_SHOWN = 400


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
        report = self.report or {"passed": False, "counts": None, "thinking_switch": None, "diagnostics": [], "situations": []}
        return {**report, "error": self.error, "cut_off": self.cut_off, "seconds": round(self.seconds, 3),
                "source": self.source, "notes": list(self.notes)}


# -- the worker ---------------------------------------------------------------------


def _worker_main() -> None:
    """One job: read it from stdin, check, write the result to stdout, exit."""
    import resource

    from engine.chat_template import ModelLoadError
    from engine.conformance import check_conformance
    from engine.errors import TemplateError
    # Imported ahead, so a spare waiting for its job is warm.
    from transformers import AutoTokenizer  # noqa: F401
    from transformers.utils import chat_template_utils  # noqa: F401

    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    out = sys.stdout
    sys.stdout = sys.stderr  # whatever a library prints stays off the result channel
    raw = sys.stdin.read()
    if not raw.strip():
        return  # the server went away before giving this spare a job
    job = json.loads(raw)
    # A backstop should the server die mid-check: CPU seconds, counted from the start.
    used = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    budget = int(used + job["seconds"]) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (budget, budget + 1))
    try:
        report = check_conformance(
            job["template"], job.get("chat_template"), model=job.get("model"), bos_token=job.get("bos_token"),
            eos_token=job.get("eos_token"), regex_timeout=job.get("regex_timeout"),
        )
        result = {"report": report.to_dict()}
    except (TemplateError, ModelLoadError, ValueError, ImportError) as error:
        result = {"error": str(error)}
    except MemoryError:
        result = {"error": f"the check ran out of memory (a worker may use {WORKER_MEMORY_BYTES // 1024**3} GiB)"}
    text = json.dumps(result, ensure_ascii=False)
    if len(text) > REPORT_CHARS:
        text = json.dumps({"error": f"the report is too large ({len(text):,} characters of JSON, limit {REPORT_CHARS:,}): "
                                    "the chat template writes very long prompts"})
    out.write(text)
    out.flush()


class _Workers:
    """Starts worker processes, keeping one started ahead (its imports done while it waits)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spare: subprocess.Popen | None = None

    @staticmethod
    def _start() -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "playground.chat_template_check"], cwd=ROOT, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
        )

    def take(self) -> subprocess.Popen:
        """A worker for one job (the spare when it is alive), and a new spare for the next."""
        with self._lock:
            worker = self._spare if self._spare is not None and self._spare.poll() is None else None
            self._spare = self._start()
            return worker or self._start()


_workers = _Workers()


def run_check(
    template: dict, *, chat_template: str | None = None, model: str | None = None, bos_token: str | None = None,
    eos_token: str | None = None, seconds: float, regex_timeout: float | None = None,
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
    source = "the pasted chat template" if chat_template is not None else f"the chat template of {model}"
    job = {"template": template, "chat_template": chat_template, "model": model, "bos_token": bos_token,
           "eos_token": eos_token, "regex_timeout": regex_timeout, "seconds": seconds}
    started = time.perf_counter()
    worker = _workers.take()
    try:
        out, err = worker.communicate(json.dumps(job, ensure_ascii=False), timeout=seconds)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.communicate()
        return CheckOutcome(
            error=f"The check was cut off after {seconds:g} s: the chat template takes too long to render (or loops). "
                  "The time limit is PLAYGROUND_LIMITS' conformance_seconds.",
            cut_off=True, seconds=time.perf_counter() - started, source=source,
        )
    elapsed = time.perf_counter() - started
    try:
        result = json.loads(out)
    except json.JSONDecodeError:
        last = (err or "").strip().splitlines()[-1:] or [f"exit status {worker.returncode}"]
        stopped = "ran out of CPU time" if worker.returncode == -24 else f"stopped ({last[0][:300]})"
        return CheckOutcome(error=f"The check's worker {stopped}.", seconds=elapsed, source=source)
    error = result.get("error")
    if error:  # the library's advice names its command-line option; here the text is pasted
        error = error.replace(" with --chat-template", " instead")
    return CheckOutcome(result.get("report"), error, seconds=elapsed, source=source)


def check_from_page(
    template_text: str, chat_template_text: str, chat_template_model: str, bos_token: str = "", eos_token: str = "",
) -> CheckOutcome:
    """The check as the page (and `/conformance`) asks for it: the editor's template against the
    pasted chat template, or else the named model's. Empty token boxes mean "" for a pasted
    template and the tokenizer's own for a model. Bad input gives an outcome with `error`."""
    caps = limits.current()
    pasted = (chat_template_text or "").strip()
    model = (chat_template_model or "").strip()
    try:
        template = read_template(template_text)
        load_template(template)
        if not pasted and not model:
            raise InputError("Paste a chat template (the Jinja text of the model's chat_template), or name a model "
                             "(a local folder or a hub id) to take it from.")
        if len(chat_template_text) > caps.chat_template_chars:
            raise InputError(f"The chat template is too large: {len(chat_template_text):,} characters "
                             f"(limit {caps.chat_template_chars:,}).")
    except (InputError, TemplateError) as error:
        return CheckOutcome(error=str(error))
    notes = [f"The pasted chat template is used; the model box ({model}) is ignored."] if pasted and model else []
    outcome = run_check(
        template, chat_template=chat_template_text if pasted else None, model=None if pasted else model,
        bos_token=bos_token or None, eos_token=eos_token or None, seconds=caps.conformance_seconds,
        regex_timeout=caps.regex_seconds,
    )
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


def _result_cell(row: dict) -> str:
    if not row["renderable"]:
        return '<span class="rt-badge rt-pending rt-small">not renderable</span>'
    if row["passed"]:
        return '<span class="rt-badge rt-pass rt-small">✔ pass</span>'
    return '<span class="rt-badge rt-fail rt-small">✘ fail</span>'


def _detail(text: str) -> str:
    shown = text if len(text) <= DETAIL_SHOWN else text[: DETAIL_SHOWN - 1] + "…"
    return escape(shown)


_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_NUMBER = re.compile(r"\d+")


def root_causes(rows: list[dict], template: dict | None) -> list[str | None]:
    """For each row: the root cause of its failure (None for rows that pass or are not
    renderable). The cause is the leading diagnosis of the row's parse (`engine.diagnosis`,
    the template key and what to change), else the row's detail with quoted texts and
    numbers blanked, so rows failing the same way share one cause."""
    from engine import trace
    from engine.conformance import TOOLS

    from .causes import brief, leading_of

    causes: list[str | None] = []
    for row in rows:
        if row["passed"] or not row["renderable"]:
            causes.append(None)
            continue
        cause = None
        if template is not None and row.get("prompt") is not None:
            try:
                result = trace(row["generation"], template, prefix=row["prompt"], tools=TOOLS, on_error="keep",
                               regex_timeout=limits.current().regex_seconds)
                found = leading_of(result.diagnoses)
                if found is not None:
                    cause = brief(found)
            except (TemplateError, ValueError):
                cause = None
        if cause is None:
            cause = _NUMBER.sub("N", _QUOTED.sub("“…”", row["detail"] or "fails"))
        causes.append(cause)
    return causes


def _cause_groups(causes: list[str | None]) -> list[tuple[str, list[int]]]:
    """(cause, row indices) for every cause, the most rows first."""
    groups: dict[str, list[int]] = {}
    for index, cause in enumerate(causes):
        if cause is not None:
            groups.setdefault(cause, []).append(index)
    return sorted(groups.items(), key=lambda item: -len(item[1]))


def matrix_html(outcome: CheckOutcome | None, *, pending: str = "", causes: list[str | None] | None = None) -> str:
    """The check's panel: the summary (or the error), the lint findings, the failing rows by
    root cause (`causes`, one per row, from `root_causes`), then the matrix: failing rows
    grouped under their cause, then the others.

    Each row with a prompt carries ``data-row`` (its index in `outcome.rows`): a click loads
    its prompt and generation into Paste & parse.
    """
    if pending:
        return f'<div class="rt-status rt-status-live" id="conformance-pending">⏳ {escape(pending)}</div>'
    if outcome is None:
        return ('<div class="rt-note" id="conformance-empty">Paste a chat template (or name a model), then '
                "<b>Check</b>: the editor's template is checked against every conversation situation.</div>")
    parts = []
    if outcome.error:
        parts.append(f'<div class="rt-status rt-status-error" id="conformance-error">⚠ {escape(outcome.error)}</div>')
    report = outcome.report
    for note in outcome.notes:
        parts.append(f'<div class="rt-status rt-status-note">{escape(note)}</div>')
    if report is None:
        return '<div id="conformance-report">' + "".join(parts) + "</div>"
    counts = report["counts"]
    switch = f"; thinking switch: <code>{escape(report['thinking_switch'])}</code>" if report["thinking_switch"] else ""
    verdict = (
        '<span class="rt-badge rt-pass" id="conformance-badge" data-passed="true">✔ conforms</span>' if report["passed"]
        else '<span class="rt-badge rt-fail" id="conformance-badge" data-passed="false">✘ does not conform</span>'
    )
    parts.append(
        f'<div class="rt-conformance-summary" id="conformance-summary">{verdict} {counts["passed"]} passed, '
        f'{counts["failed"]} failed, {counts["not_renderable"]} not renderable — against {escape(outcome.source)} '
        f"({outcome.seconds:.1f} s{switch})</div>"
    )
    for diagnostic in report["diagnostics"]:
        hint = f" → {escape(diagnostic['suggestion'])}" if diagnostic.get("suggestion") else ""
        parts.append(f'<div class="rt-diag rt-diag-warning">△ {escape(diagnostic["message"])}{hint}</div>')
    situations = report["situations"]
    causes = causes if causes is not None and len(causes) == len(situations) else [None] * len(situations)
    groups = _cause_groups(causes)
    if groups:
        listed = "".join(
            f'<li><b>{len(indices)} row{"s" if len(indices) > 1 else ""}</b>: {escape(cause)}</li>' for cause, indices in groups
        )
        parts.append(f'<div class="rt-status rt-status-error" id="conformance-causes">Failing rows by root cause:<ul>{listed}</ul></div>')
    parts.append('<div class="rt-note">Click a row to load its prompt and generation into Paste &amp; parse.</div>')
    rows = []
    grouped = [i for _, indices in groups for i in indices]
    order = grouped + [i for i in range(len(situations)) if i not in set(grouped)]
    heads = {indices[0]: cause for cause, indices in groups}
    for index in order:
        row = situations[index]
        if index in heads:
            rows.append(f'<tr class="rt-cause-row"><td><b>Root cause ({len(dict(groups)[heads[index]])} rows):</b> {escape(heads[index])}</td></tr>')
        situation, thinking, check = _parts(row["name"])
        kind = "rt-row-na" if not row["renderable"] else ("rt-row-pass" if row["passed"] else "rt-row-fail")
        clickable = f' data-row="{index}" tabindex="0"' if row["prompt"] else ""
        detail = row["detail"]
        if row["normalisations"] and not detail:
            detail = "normalised " + "; ".join(row["normalisations"])
        mode = f" · thinking {thinking}" if thinking else ""
        said = f'<div class="rt-detail">{_detail(detail)}</div>' if detail else ""
        rows.append(
            f'<tr class="{kind}"{clickable} title="{escape(row["name"])}"><td>{_result_cell(row)} '
            f'<b>{escape(situation)}</b><span class="rt-check">{escape(mode)} · {escape(check.replace(":", ": "))}</span>'
            f"{said}</td></tr>"
        )
    parts.append(
        '<div class="rt-conformance" id="conformance-table"><table>'
        "<thead><tr><th>result · situation · thinking · check, and what happened</th></tr></thead><tbody>"
        + "".join(rows) + "</tbody></table></div>"
    )
    return '<div id="conformance-report">' + "".join(parts) + "</div>"


if __name__ == "__main__":
    _worker_main()
