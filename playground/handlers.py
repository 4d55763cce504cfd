"""The page's event handlers: plain functions from named inputs to named outputs.

Each parameter is named after the page component it reads (`template_text`,
`prefix`, `generation`, `tools_text`, ...; `session` is the visitor's
`Session`; `event` is the data a custom-HTML panel sent), and each handler
returns a dict keyed by the output names it declares with `@produces` (see
`playground.outputs`). Tests call them directly; each panel's module in
`playground/layout/` binds them to the page's components by those names.

Nothing is wiped: input that cannot be parsed (a template that is not valid
yet, an oversized text) keeps the last good parse on screen, marked stale,
with the message saying what is wrong.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from itertools import islice
from pathlib import Path

from engine import TemplateError
from engine.chat_templates.conformance import TOOLS as CHECK_TOOLS

from .authoring.chat_template_check import CheckOutcome, check_from_page, matrix_html, root_causes
from .authoring.diagnostics import apply_fix, check_template
from .authoring.editor_paths import string_at
from .authoring.export import export_files
from .authoring.fit import family_note, rank_templates
from .authoring.inference import (
    evidence_html,
    findings_html,
    infer_from_page,
    inference_losses,
    with_workspace_output,
)
from .authoring.inference_failures import apply_edit, failure_groups
from .authoring.output_evidence import with_output_evidence
from .authoring.share import (
    CHUNK_DIGITS,
    MAX_STATE_FILE,
    MODEL_PARAMETER_CHARS,
    MODEL_PARAMETERS,
    TABS,
    PageState,
    decode_state,
    link_problems,
    read_state_file,
    share_link,
    state_file_text,
)
from .authoring.stream_check import report_html, stream_check
from .authoring.template_editor import format_template, shipped_template
from .authoring.test_cases import (
    CHECK_NOTE,
    LIVE_NOTE,
    as_examples,
    author_cases,
    cases_for_template,
    cases_text,
    examples_jsonl,
    matrix_cases,
    read_cases,
    results_html,
    run_cases,
)
from .catalog import (
    DEFAULT_SAMPLE,
    EDITED_TEMPLATE,
    INLINE_TEMPLATE,
    samples_by_id,
    shipped_template_text,
    template_choice_for,
    template_names,
    template_text_of,
)
from .outputs import PARSE_VIEWS, Update, failed, produces, render
from .panels import reference_diff
from .panels.code_snippet import code_snippet_or_error
from .panels.explain import explain, explain_editor_key, span_of_event
from .panels.markup import escape
from .panels.match_list import match_list_html
from .panels.message_view import openai_stream
from .panels.status import error_html, parse_judgement, probable_losses, region_cut_by_stop
from .parse.chunking import chunking_param, parse_chunking_param
from .parse.derived import DERIVED_VIEWS, remember_derived, stale_derived
from .parse.parse_view import ParseView, traced_view
from .parse.replay import Replay, ReplayInputs, paced_feed, prepare_replay, seek
from .parse.session import Session
from .parse.token_reading import READ_LOADED, reading_for
from .parse.workspace import WorkspaceInputs
from .server import limits
from .server.downloads import remove_upload, write_download
from .server.input_readers import InputError, check_text_sizes, read_template, read_tools

# Above this many characters a running replay draws only the end of the map (MAP_TAIL).
FULL_MAP_CHARS = 50_000
MAP_TAIL = 20_000
SAMPLE_INPUTS = (
    "sample_id",
    "template_text",
    "prefix",
    "generation",
    "tools_text",
    "template_choice",
)
CHUNKING_INPUTS = ("chunking", "chunk_size", "chunk_seed", "split_points")
REPLAY_OUTPUTS = (*PARSE_VIEWS, "stream_check", "scrubber")
TEMPLATE_OUTPUTS = ("template_choice", "test_results", "scrubber", *DERIVED_VIEWS, *PARSE_VIEWS)


# ---------------------------------------------------------------------------
# Parsing what is on the page
# ---------------------------------------------------------------------------


def parse_inputs(workspace: WorkspaceInputs, session: Session | None = None) -> ParseView:
    """Check the caps, then parse a pasted generation: as text, or as token ids when the
    session's "Read as" asks for a tokenizer (`reading_of`). Raises InputError / TemplateError."""
    template = read_template(workspace.template_text)
    tools = read_tools(workspace.tools_text)
    prefix, generation = workspace.prefix or "", workspace.generation or ""
    check_text_sizes(prefix, generation)
    reading = reading_of(session, generation) if session is not None else None
    return traced_view(template, prefix, generation, tools, reading=reading)


# The "Spelled out" box's text read at most (characters).
SPELLED_TEXT_CHARS = 20_000


def reading_of(session: Session, generation: str):
    """How the session's "Read as" reads `generation`: a `TokenReading`, or None for text.

    Raises InputError: see `playground.parse.token_reading.reading_for`; a "Spelled out" box
    over SPELLED_TEXT_CHARS characters."""
    if len(session.spelled_text) > SPELLED_TEXT_CHARS:
        raise InputError(
            f"Spelled out: {len(session.spelled_text):,} characters (at most {SPELLED_TEXT_CHARS:,})."
        )
    return reading_for(session.read_as, session.spelled_text, generation, _loaded(session))


def _loaded(session: Session):
    """The loaded model's tokenizer when "Read as" asks for it (else None)."""
    if session.read_as != READ_LOADED:
        return None
    from .live import loaded_tokenizer  # the live module imports this one

    return loaded_tokenizer()


def reading_tokenizer(session: Session):
    """The tokenizer Paste & parse reads outputs with ("Read as"), which the diagnostics lint
    the template against; None when it reads text or the tokenizer is not at hand."""
    try:
        reading = reading_for(session.read_as, "", "", _loaded(session))
    except InputError:
        return None
    return reading.tokenizer if reading is not None else None


def show(view: ParseView, session: Session, **options) -> dict:
    """Put `view` on screen: remember it, and draw the parse panels. A different text forgets
    what #explain and the event log pointed at (their indices would name other stretches)."""
    if session.view is None or session.view.stream != view.stream:
        session.display.selection = session.display.selected_event = None
    session.view = view
    session.last_good = view
    return render(view, session, **options)


def _parsed(
    workspace: WorkspaceInputs, session: Session, note: str = "", test_cases_text: str | None = None
) -> dict:
    """The parse panels for these inputs; the last good parse, marked stale, when they cannot be
    parsed. A near miss that the chat template's renders, the prompt or the test cases
    (`test_cases_text`, else the session's) confirm is named as the output's misspelling."""
    generation = workspace.generation
    try:
        view = parse_inputs(workspace, session)
    except (InputError, TemplateError, ValueError) as error:
        if session.last_good is not None:
            drawn = render(session.last_good, session, stale=str(error))
            return {"status": drawn["status"], "region_map": drawn["region_map"]}
        shown = (
            generation
            if generation and len(generation) <= limits.current().generation_chars
            else ""
        )
        return failed(str(error), session, shown)
    session.replay = None
    cases = session.test_cases_text if test_cases_text is None else test_cases_text
    return show(with_output_evidence(view, session, workspace, cases), session, note=note)


def _tests(template_text: str, test_cases_text: str) -> str:
    """The test results panel for the editor's template."""
    try:
        cases = read_cases(test_cases_text)
        template = read_template(template_text)
    except InputError as error:
        return results_html([], 0, str(error))
    return results_html(run_cases(template, cases), len(cases))


def _parsed_page(
    workspace: WorkspaceInputs, test_cases_text, session: Session, note: str = ""
) -> dict:
    """The parse panels, the test results, and whether the editor still holds a templates/ file."""
    choice = template_choice_for(workspace.template_text, session.template_origin or None)
    if choice != EDITED_TEMPLATE:
        session.template_origin = choice
    parsed = _parsed(workspace, session, note, test_cases_text)
    return {
        "template_choice": choice,
        "test_results": _tests(workspace.template_text, test_cases_text),
        "scrubber": _scrubber_before_replay(session, workspace.generation),
        **stale_derived(session, workspace),
        **parsed,
    }


def _scrubber_before_replay(session: Session, generation: str) -> Update:
    """The scrubber while no replay runs: at 0, up to the most chunks the generation can have
    (one a character), so a chunk typed in before any replay is taken, not refused."""
    if session.replay is not None:
        return Update(value=session.replay.position, maximum=max(1, len(session.replay.chunks)))
    return Update(value=0, maximum=max(1, len(generation or "")))


@produces("diagnostics", *TEMPLATE_OUTPUTS)
def parse(workspace: WorkspaceInputs, test_cases_text: str, session: Session) -> dict:
    """Parse (the button, Ctrl+Enter, or a pause in typing): the parse panels, the test results,
    and whether the editor still holds a templates/ file; the diagnostics again when the parse
    shows a near miss (a fix that would copy that delimiter text is then held back)."""
    result = _parsed_page(workspace, test_cases_text, session)
    misses = near_misses_of(session, workspace.template_text)
    if misses:
        result["diagnostics"] = check_template(
            workspace.template_text, misses, reading_tokenizer(session)
        )
    return result


@produces("diagnostics", *TEMPLATE_OUTPUTS)
def set_reading(
    read_as: str,
    spelled_out: str,
    workspace: WorkspaceInputs,
    test_cases_text: str,
    session: Session,
) -> dict:
    """ "Read as" or "Spelled out" changed: remember them and parse again (as text, or as the
    token ids of the chosen tokenizer with the marked ranges spelled out)."""
    session.read_as = read_as or "text"
    session.spelled_text = spelled_out or ""
    result = parse(workspace, test_cases_text, session)
    if "diagnostics" not in result:  # the template is linted against the new tokenizer
        result["diagnostics"] = check_template(
            workspace.template_text,
            near_misses_of(session, workspace.template_text),
            reading_tokenizer(session),
        )
    return result


@produces(*PARSE_VIEWS)
def set_display(
    hide_chunks: bool,
    show_whitespace: bool,
    log_search: str,
    log_field: str,
    log_page: float,
    session: Session,
    show_tokens: bool = False,
    group_by_token: bool = False,
) -> dict:
    """A display option changed (event-log filter or page, whitespace, the Tokens view, the
    log's grouping by token): re-draw the parse on screen."""
    display = session.display
    display.show_tokens = bool(show_tokens)
    display.group_by_token = bool(group_by_token)
    changed = (display.log_search, display.log_field, display.hide_chunks) != (
        log_search or "",
        log_field or "",
        bool(hide_chunks),
    )
    display.hide_chunks, display.show_whitespace = bool(hide_chunks), bool(show_whitespace)
    display.log_search, display.log_field = log_search or "", log_field or ""
    display.log_page = 1 if changed else int(log_page or 1)
    display.selected_event = None
    if session.view is None:
        return {}
    return render(session.view, session)


@produces("explain")
def explain_span(event: dict, session: Session) -> dict:
    """A stretch of the region map was clicked (or chosen from the keyboard): explain it.

    A click that comes before the page-load handler gave the session its parse (a busy
    server: the page shows the first sample until then) parses that sample first, as the
    page-load handler would, so the click is never answered with nothing.
    """
    selection = known_selection(event.get("selected"))
    if selection is None:
        return {}
    session.display.selection = selection
    if session.view is None and not session.sample_id:
        selection = session.display.selection
        _sample_outputs(DEFAULT_SAMPLE, session)
        session.display.selection = selection
    return {"explain": explain(session.view, session.display.selection, session.inference)}


@produces("explain", "event_log", "log_page", "results_tabs")
def show_event(event: dict, template_text: str, session: Session) -> dict:
    """An event link in #explain, or a row of the event log, was clicked: page the log to that
    event, highlight it, and explain the stretch it came from. A click in the template editor
    (`editor_at`: the character index of the cursor) on a pattern explains that pattern, and on
    a delimiter the last inference found shows the renders that found it."""
    view = session.view
    if "editor_at" in event:
        found = string_at(template_text or "", event_number(event, "editor_at"))
        panel = (
            explain_editor_key(view, *found, session.inference, _editor_template(template_text))
            if found
            else None
        )
        return {"explain": panel} if panel else {}
    if view is None:
        return {}
    if "selected" in event:
        selection = known_selection(event["selected"])
        if selection is None:
            return {}
        session.display.selection = selection
        return {"explain": explain(view, selection, session.inference)}
    number = event_number(event, "event", 0)
    session.display.selected_event = number
    session.display.log_search = session.display.log_field = ""
    index = span_of_event(view, number)
    if index is not None:
        session.display.selection = str(index)
    drawn = render(view, session)
    session.display.results_tab = "log"
    return {
        "explain": drawn["explain"],
        "event_log": drawn["event_log"],
        "log_page": drawn["log_page"],
        "results_tabs": Update(selected="log"),
    }


def _editor_template(template_text: str) -> dict | None:
    """The editor's text as a template dict, or None while it is not valid JSON."""
    try:
        template = json.loads(template_text or "")
    except (ValueError, RecursionError):
        return None
    return template if isinstance(template, dict) else None


# The results tabs by id (what `select_results_tab` may remember).
RESULTS_TABS = (
    "message",
    "log",
    "matches",
    "initial",
    "openai",
    "checks",
    "tests",
    "reference",
)
# What #explain may be asked to explain: a span's index, the anchor, the cut, an error ("e3")
# or a diagnosis ("d0").
_SELECTION = re.compile(r"anchor|cut|[ed]?[0-9]{1,9}")
# The most digits a number sent in an event may have (more is no index of anything on the page).
EVENT_DIGITS = 9


def known_selection(selected) -> str | None:
    """What a click asks #explain to explain (see `_SELECTION`) as a string, or None when it is
    nothing #explain knows (a page of this server never sends one: it is not kept)."""
    if isinstance(selected, int) and not isinstance(selected, bool):
        selected = str(selected)
    if isinstance(selected, str) and _SELECTION.fullmatch(selected):
        return selected
    return None


def event_number(event: dict, key: str, default: int = -1) -> int:
    """The whole number an event sent under `key` (a JSON number, or a string of at most
    EVENT_DIGITS digits), or `default` when there is none or it is anything else."""
    value = event.get(key, default)
    if isinstance(value, bool):
        return default
    if isinstance(value, float) and value.is_integer() and abs(value) < 10**EVENT_DIGITS:
        return int(value)
    if isinstance(value, int):
        return value if abs(value) < 10**EVENT_DIGITS else default
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]{1,%d}" % EVENT_DIGITS, value):
        return int(value)
    return default


# ---------------------------------------------------------------------------
# Samples and templates
# ---------------------------------------------------------------------------


# Editor texts a session keeps for Restore at most (and for going back after Restore).
RESTORES_KEPT = 10

# The buttons under the editor every replacement of its text updates.
RESTORE_BUTTONS = ("restore_button", "restore_back_button")
BACK_LABEL = "↷ Back to the text Restore replaced"


def restore_buttons(session: Session) -> dict:
    """The Restore button (names what replaced the editor's text last; hidden when nothing did)
    and the button that undoes a Restore (shown after one): {output name: Update}."""
    if session.replaced:
        why, _ = session.replaced[-1]
        restore = Update(value=f"↶ Restore the template before {why}", visible=True)
    else:
        restore = Update(visible=False)
    back = Update(value=BACK_LABEL, visible=True) if session.restored else Update(visible=False)
    return {"restore_button": restore, "restore_back_button": back}


def _keep(stack: list[tuple[str, str]], why: str, text: str) -> None:
    """Push (why, text) on a stack of editor texts, unless it is blank, the text on top, or longer
    than PLAYGROUND_LIMITS `template_chars`; keep the last RESTORES_KEPT."""
    if len(text or "") > limits.current().template_chars:
        return  # no template: the door refuses such an editor text, and it would outweigh the stack
    if (text or "").strip() and (not stack or stack[-1][1] != text):
        stack.append((why, text))
        del stack[:-RESTORES_KEPT]


def replacing(session: Session, old: str, new: str, why: str) -> dict:
    """The editor's text `old` is being replaced by `new` (by `why`: "loading a sample",
    "Infer"): keep it for Restore (unless it is empty or the same), forget the texts Restore
    replaced (a new step), and return both buttons ({output name: Update})."""
    if old != new:
        _keep(session.replaced, why, old)
    session.restored.clear()
    return restore_buttons(session)


def _sample_outputs(sample_id: str, session: Session, editor: str | None = None) -> dict:
    """The page for one sample; `editor` is the editor's text it replaces (kept for Restore),
    None on page load."""
    sample = samples_by_id().get(sample_id)
    if sample is None:
        return failed(f"No sample {sample_id!r}; pick one from the Samples tab.", session)
    text = template_text_of(sample.template)
    tools_text = template_text_of(sample.tools) if sample.tools else ""
    view = traced_view(sample.template, sample.prefix, sample.generation, sample.tools)
    note = f"Sample {sample.id}: {sample.description}"
    if sample.expected_error:
        note += f" (expected to fail with: {sample.expected_error})"
    choice = sample.template_name if sample.template_name in template_names() else INLINE_TEMPLATE
    session.reset_text, session.replay, session.sample_id = text, None, sample.id
    if choice != INLINE_TEMPLATE:
        session.template_origin = choice
    cases = cases_text(
        cases_for_template(choice if choice != INLINE_TEMPLATE else None, sample.template)
    )
    session.test_cases_text = cases
    restore = replacing(session, editor, text, "loading a sample") if editor is not None else {}
    return {
        **restore,
        "sample_id": sample.id,
        "template_text": text,
        "prefix": sample.prefix,
        "generation": sample.generation,
        "tools_text": tools_text,
        "template_choice": choice,
        "test_cases_text": cases,
        "test_results": _tests(text, cases),
        "stream_check": report_html(None),
        "scrubber": Update(value=0, maximum=max(1, len(sample.generation))),
        "start_from": session.template_origin
        if session.template_origin in template_names()
        else None,
        **stale_derived(
            session, WorkspaceInputs(text, sample.prefix, sample.generation, tools_text)
        ),
        **show(view, session, note=note),
    }


SAMPLE_OUTPUTS = (
    *SAMPLE_INPUTS,
    *RESTORE_BUTTONS,
    "test_cases_text",
    "test_results",
    "stream_check",
    "scrubber",
    "start_from",
    *DERIVED_VIEWS,
    *PARSE_VIEWS,
)


@produces(*SAMPLE_OUTPUTS)
def load_sample(sample_id: str, session: Session, template_text: str | None = None) -> dict:
    """Load one sample case, template and all, and parse it (the editor's text is kept for
    Restore)."""
    return _sample_outputs(sample_id, session, template_text)


@produces(*SAMPLE_OUTPUTS)
def load_sample_at(sample_rows: int, session: Session, template_text: str | None = None) -> dict:
    """One click on a row of the samples table (`sample_rows` is the row index)."""
    return _sample_outputs(list(samples_by_id())[int(sample_rows)], session, template_text)


def _use_template(name: str, workspace: WorkspaceInputs, session: Session) -> dict:
    """Load templates/ file `name` into the editor (its text before kept for Restore), with its
    test cases, and parse the workspace with it; {} for a choice that names no file."""
    text = shipped_template(name)
    if text is None:
        return {}  # "(edited...)" or "(inline...)": nothing to load
    session.reset_text, session.template_origin = text, name
    cases = cases_text(cases_for_template(name))
    session.test_cases_text = cases
    return {
        **replacing(session, workspace.template_text, text, f"loading {name}"),
        "template_text": text,
        "test_cases_text": cases,
        "test_results": _tests(text, cases),
        "start_from": name,
        **stale_derived(session, workspace.with_template(text)),
        **_parsed(workspace.with_template(text), session),
    }


USE_TEMPLATE_OUTPUTS = (
    *RESTORE_BUTTONS,
    "template_text",
    "template_choice",
    "test_cases_text",
    "test_results",
    "start_from",
    *DERIVED_VIEWS,
    *PARSE_VIEWS,
)


@produces(*USE_TEMPLATE_OUTPUTS)
def choose_template(template_choice: str, workspace: WorkspaceInputs, session: Session) -> dict:
    """The template dropdown: load that templates/ file into the editor, with its test cases, and parse."""
    return _use_template(template_choice, workspace, session)


@produces(*USE_TEMPLATE_OUTPUTS)
def start_from(start_from: str, workspace: WorkspaceInputs, session: Session) -> dict:
    """The Template tab's "Start from templates/": like the dropdown, and the dropdown follows."""
    result = _use_template(start_from, workspace, session)
    return {**result, "template_choice": start_from} if result else result


def near_misses_of(session: Session, template_text: str) -> list:
    """The near misses of the parse on screen when it was made with the editor's template (a
    one-click fix must not copy a delimiter text the output shows is wrong)."""
    view = session.view
    if view is None or not view.finished or view.template != _editor_template(template_text):
        return []
    return [d for d in view.diagnoses if d.code == "near-miss"]


@produces("diagnostics")
def diagnose(template_text: str, session: Session) -> dict:
    """The editor's diagnostics (validation, did-you-mean, lint), as the text changes."""
    return {
        "diagnostics": check_template(
            template_text, near_misses_of(session, template_text), reading_tokenizer(session)
        )
    }


@produces("template_text", "diagnostics", *RESTORE_BUTTONS, *TEMPLATE_OUTPUTS)
def fix_template(
    event: dict, workspace: WorkspaceInputs, test_cases_text: str, session: Session
) -> dict:
    """A "Fix" button in the diagnostics: apply that fix to the editor and parse."""
    template_text = workspace.template_text
    tokenizer = reading_tokenizer(session)
    fixed = apply_fix(template_text, event_number(event, "fix"), tokenizer)
    if fixed is None:
        return {"diagnostics": check_template(template_text, tokenizer=tokenizer)}
    return {
        "template_text": fixed,
        "diagnostics": check_template(fixed, tokenizer=tokenizer),
        **replacing(session, template_text, fixed, "the Fix"),
        **parse(workspace.with_template(fixed), test_cases_text, session),
    }


@produces("template_text", "diagnostics")
def format_editor(template_text: str) -> dict:
    """Format button: pretty-print the template (invalid JSON stays as typed)."""
    pretty, diagnostics = format_template(template_text)
    return (
        {"diagnostics": diagnostics}
        if pretty is None
        else {"template_text": pretty, "diagnostics": diagnostics}
    )


# Reset when the session no longer knows the text the editor started from (a page idle past
# the server's cap on sessions has its session freed).
NOTHING_TO_RESET = (
    "Nothing to reset to: this page was idle and the server freed what it kept. Load a sample or "
    "a template from templates/ to start again."
)


@produces("template_text", "diagnostics", *RESTORE_BUTTONS, *TEMPLATE_OUTPUTS)
def reset_template(workspace: WorkspaceInputs, test_cases_text: str, session: Session) -> dict:
    """Reset button: put back the template the editor started from, and parse (the edited text
    is kept for Restore)."""
    text = session.reset_text
    if not text:
        return {"status": error_html(NOTHING_TO_RESET)}
    result = parse(workspace.with_template(text), test_cases_text, session)
    result["template_choice"] = template_choice_for(
        text, session.template_origin or None, INLINE_TEMPLATE
    )
    restore = replacing(session, workspace.template_text, text, "Reset")
    return {"template_text": text, **restore, **result}


@produces("template_text", "diagnostics", *RESTORE_BUTTONS, *TEMPLATE_OUTPUTS)
def restore_template(workspace: WorkspaceInputs, test_cases_text: str, session: Session) -> dict:
    """Restore: put back the editor text the last replacement took away, and parse; the text
    it replaces (`workspace.template_text`) is kept for *Back*."""
    if not session.replaced:
        return restore_buttons(session)
    why, text = session.replaced.pop()
    _keep(session.restored, why, workspace.template_text)
    return _put_back(workspace.with_template(text), test_cases_text, session)


@produces("template_text", "diagnostics", *RESTORE_BUTTONS, *TEMPLATE_OUTPUTS)
def restore_back(workspace: WorkspaceInputs, test_cases_text: str, session: Session) -> dict:
    """Back: undo the last Restore, putting back the text it replaced, and parse; the text there
    now goes back on Restore's stack (under what replaced it first), so Restore works again."""
    if not session.restored:
        return restore_buttons(session)
    why, text = session.restored.pop()
    _keep(session.replaced, why, workspace.template_text)
    return _put_back(workspace.with_template(text), test_cases_text, session)


def _put_back(workspace: WorkspaceInputs, test_cases_text: str, session: Session) -> dict:
    """The editor set to `workspace.template_text` by Restore or Back, parsed, with both buttons."""
    text = workspace.template_text
    return {
        "template_text": text,
        "diagnostics": check_template(text),
        **restore_buttons(session),
        **parse(workspace, test_cases_text, session),
    }


@produces("template_file", "tokenizer_config_file", "export_note")
def export_template(
    template_text: str, tokenizer_config_upload: str | None, export_target: str = "transformers"
) -> dict:
    """Download / export: the template file, and tokenizer_config.json with the template merged
    in, both rewritten for the chosen runtime (what changed and what it still refuses are said)."""
    started = time.perf_counter()
    try:
        template_path, config_path, changes, remaining = export_files(
            template_text, tokenizer_config_upload, export_target or "transformers"
        )
    except (InputError, TemplateError, OSError) as error:
        return {
            "template_file": None,
            "tokenizer_config_file": None,
            "export_note": error_html(str(error)),
        }
    merged = (
        "merged into your tokenizer_config.json (its other keys kept)"
        if tokenizer_config_upload
        else (
            "a tokenizer_config.json holding only response_template: upload yours to merge into it"
        )
    )
    note = f'<div class="rt-status rt-status-ok" id="export-done">✔ Exported: {merged} ({(time.perf_counter() - started) * 1000:.0f} ms)</div>'
    note += export_target_html(changes, remaining)
    return {
        "template_file": template_path,
        "tokenizer_config_file": config_path,
        "export_note": note,
    }


def export_target_html(changes: list[str], remaining: list) -> str:
    """What the export changed for its runtime, and what that runtime still refuses or reads
    differently (errors and warnings), as a list under the export note."""
    items = [f"<li>changed: {escape(change)}</li>" for change in changes]
    items += [
        f'<li class="rt-export-{finding.severity}">{finding.severity}: {escape(finding.path)}: {escape(finding.message)}</li>'
        for finding in remaining
        if finding.severity != "info"
    ]
    return f'<ul id="export-target-notes">{"".join(items)}</ul>' if items else ""


# ---------------------------------------------------------------------------
# The chat-template check
# ---------------------------------------------------------------------------


@produces("conformance")
def check_chat_template(
    template_text: str,
    chat_template_text: str,
    chat_template_model: str,
    bos_token: str,
    eos_token: str,
    session: Session,
):
    """Check: the editor's template against the pasted chat template (or the model's), every
    situation of the matrix, in a worker with a time limit (`playground.authoring.chat_template_check`)."""
    yield {
        "conformance": matrix_html(
            None, pending=f"Checking… (at most {limits.current().conformance_seconds:g} s)"
        )
    }
    outcome = check_from_page(
        template_text, chat_template_text, chat_template_model, bos_token, eos_token
    )
    session.check_rows, session.check_template = outcome.rows, template_text
    try:
        template = read_template(template_text)
    except InputError:
        template = None
    shown = matrix_html(outcome, causes=root_causes(outcome.rows, template))
    yield {"conformance": remember_derived(session, "conformance", shown, template_text)}


# Which matrix row shows an inferred template working, best first (by the row's check).
SHOWCASE_CHECKS = (
    "round-trip:content-and-tool-calls",
    "round-trip:tool-call",
    "round-trip:reasoning-and-answer",
    "round-trip:answer",
    "round-trip:continuation",
    "anchor",
)


def showcase_row(rows: list[dict], groups: list[dict] | None = None) -> int | None:
    """The matrix row to load into the workspace after Infer: a passing one that shows the most
    (text and calls, then a call, then reasoning and an answer...); when none passes, the first
    row of the largest failure group (what to fix first). None when no row has a prompt."""

    def rank(index: int) -> int:
        check = rows[index]["name"].rsplit("/", 1)[-1]
        return SHOWCASE_CHECKS.index(check) if check in SHOWCASE_CHECKS else len(SHOWCASE_CHECKS)

    passing = [i for i, row in enumerate(rows) if row["passed"] and row.get("prompt") is not None]
    if passing:
        return min(passing, key=lambda i: (rank(i), i))
    for group in groups or []:
        return group["rows"][0]
    return next((i for i, row in enumerate(rows) if row.get("prompt") is not None), None)


INFER_OUTPUTS = (
    "inference",
    "conformance",
    "template_text",
    "diagnostics",
    *RESTORE_BUTTONS,
    "prefix",
    "generation",
    "tools_text",
    "test_cases_text",
    "start_from",
    *TEMPLATE_OUTPUTS,
)


def chat_template_owner(chat_template_text: str, chat_template_model: str) -> str:
    """Which chat template the author's outputs are made for: the model named, else the pasted
    chat template's text (blank-insensitive), as a short digest ("" when neither is given)."""
    import hashlib

    name = (chat_template_model or "").strip()
    text = "" if name else " ".join((chat_template_text or "").split())
    if not name and not text:
        return ""
    return hashlib.sha256(f"{name}\0{text}".encode()).hexdigest()[:16]


@produces(*INFER_OUTPUTS)
def infer_chat_template(
    chat_template_text: str,
    chat_template_model: str,
    bos_token: str,
    eos_token: str,
    use_examples: bool,
    workspace: WorkspaceInputs,
    test_cases_text: str,
    session: Session,
):
    """Infer: a template derived from the pasted chat template (or the model's), in a worker with
    the check's caps (`playground.authoring.inference`), with the author's outputs as examples
    (`use_examples`): the workspace's output (not a sample or a render the page put there) and
    those in Tests. It goes into the editor (the text there kept for Restore) with its matrix
    and what fails grouped by cause; one of its matrix rows is loaded into the workspace; Tests
    holds the author's outputs and the matrix rows."""
    yield {
        "inference": findings_html(
            None, pending=f"Inferring… (at most {limits.current().conformance_seconds:g} s)"
        )
    }
    try:
        mine = author_cases(read_cases(test_cases_text))
    except InputError:
        mine = []
    page_made = {sample.generation for sample in samples_by_id().values()}
    page_made |= {row.get("generation", "") for row in session.check_rows}
    # The author's outputs belong to the chat template they were made for: another one starts
    # fresh (they are set aside, not sent, and named; pasted again they count for this one).
    owner = chat_template_owner(chat_template_text, chat_template_model)
    set_aside = []
    if session.outputs_for and session.outputs_for != owner:
        set_aside = with_workspace_output(as_examples(mine), *workspace[1:], page_made)
        mine = []
    examples = (
        with_workspace_output(as_examples(mine), *workspace[1:], page_made)
        if use_examples and not set_aside
        else []
    )
    outcome = infer_from_page(
        chat_template_text, chat_template_model, bos_token, eos_token, examples
    )
    if outcome.result is None:
        yield {"inference": findings_html(None, outcome.error)}
        return
    result = outcome.result
    result["failure_groups"] = [group.to_dict() for group in failure_groups(result)]
    result["set_aside"] = len(set_aside)
    session.inference, session.outputs_for = result, owner
    text = template_text_of(result["template"])
    session.reset_text, session.template_origin = text, ""
    check = CheckOutcome(result["report"], seconds=outcome.seconds, source=outcome.source)
    session.check_rows, session.check_template = check.rows, text
    matrix = matrix_html(check, causes=root_causes(check.rows, result["template"]))
    cases = cases_text(mine + matrix_cases(check.rows, CHECK_TOOLS))
    session.test_cases_text = cases
    index = showcase_row(check.rows, result["failure_groups"])
    row = (
        check.rows[index] if index is not None else {"prompt": "", "generation": "", "tools": False}
    )
    tools_text = template_text_of(CHECK_TOOLS) if row.get("tools") else ""
    note = (
        f"Matrix row {row['name']} ({'passed' if row['passed'] else 'failed'}): a render of "
        f"{outcome.source}, parsed with the inferred template."
        if index is not None
        else ""
    )
    parsed = _parsed_page(
        WorkspaceInputs(text, row["prompt"], row["generation"], tools_text), cases, session, note
    )
    # The workspace's status, said beside the verdict too (on a phone the status line sits
    # below the whole tab).
    shown = (
        f"{note} {parse_judgement(session.view)[1]}"
        if note and session.view is not None and session.view.finished
        else ""
    )
    yield {
        "inference": findings_html(result, examples=len(examples), workspace_status=shown),
        "conformance": remember_derived(session, "conformance", matrix, text),
        "template_text": text,
        "diagnostics": check_template(text),
        **replacing(session, workspace.template_text, text, "Infer"),
        "prefix": row["prompt"],
        "generation": row["generation"],
        "tools_text": tools_text,
        "test_cases_text": cases,
        "start_from": None,  # the editor no longer holds a templates/ file
        **parsed,
    }


@produces("explain")
def show_finding(event: dict, session: Session) -> dict:
    """A finding of the inference panel was clicked: the renders that found it, in #explain."""
    findings = (session.inference or {}).get("findings", [])
    index = event_number(event, "finding")
    if not 0 <= index < len(findings):
        return {}
    return {"explain": evidence_html(findings[index])}


@produces("explain", "template_text", "diagnostics", *RESTORE_BUTTONS, *TEMPLATE_OUTPUTS)
def inference_click(
    event: dict, workspace: WorkspaceInputs, test_cases_text: str, session: Session
) -> dict:
    """A click in the inference panel: a finding shows its renders in #explain; an Apply button
    (``apply``: the index of a failure group) applies that group's edit to the editor's
    template (the text before is kept for Restore) and parses."""
    if "apply" not in event:
        return show_finding(event, session)
    groups = (session.inference or {}).get("failure_groups", [])
    index = event_number(event, "apply")
    if not 0 <= index < len(groups) or not groups[index]["fix"]:
        return {}
    template_text = workspace.template_text
    try:
        template = json.loads(template_text or "")
    except ValueError:
        return {"status": error_html("The editor's template is not valid JSON: fix it first.")}
    if not isinstance(template, dict):
        return {}
    fixed = template_text_of(apply_edit(template, groups[index]["fix"]))
    return {
        "template_text": fixed,
        "diagnostics": check_template(fixed),
        **replacing(session, template_text, fixed, "the Apply"),
        **parse(workspace.with_template(fixed), test_cases_text, session),
    }


@produces("prefix", "generation", "tools_text", "modes", *TEMPLATE_OUTPUTS)
def load_check_row(event: dict, template_text: str, test_cases_text: str, session: Session) -> dict:
    """A row of the chat-template check was clicked: its prompt becomes the prefix and its
    generation the generation (with the check's tools), parsed with the editor's template."""
    index = event_number(event, "row")
    if not 0 <= index < len(session.check_rows) or not session.check_rows[index]["prompt"]:
        return {}
    row = session.check_rows[index]
    verdict = (
        "not renderable" if not row["renderable"] else ("passed" if row["passed"] else "failed")
    )
    note = f"Chat-template check, {row['name']} ({verdict})" + (
        f": {row['detail']}" if row["detail"] else ""
    )
    if template_text != session.check_template:
        note += " The template has changed since the check."
    tools_text = template_text_of(CHECK_TOOLS)
    session.tab = "paste"
    return {
        "prefix": row["prompt"],
        "generation": row["generation"],
        "tools_text": tools_text,
        "modes": Update(selected="paste"),
        **_parsed_page(
            WorkspaceInputs(template_text, row["prompt"], row["generation"], tools_text),
            test_cases_text,
            session,
            note,
        ),
    }


# ---------------------------------------------------------------------------
# Which template fits?
# ---------------------------------------------------------------------------


@produces("fits", "use_best_button")
def fit_templates(prefix: str, generation: str, tools_text: str, session: Session) -> dict:
    """Which template fits?: every templates/ file on the current input, best first."""
    try:
        tools = read_tools(tools_text)
        check_text_sizes(prefix or "", generation or "")
    except InputError as error:
        return {"fits": error_html(str(error)), "use_best_button": Update(visible=False)}
    ranked, skipped = rank_templates(
        prefix or "", generation or "", tools, deadline=limits.deadline("fit_seconds")
    )
    # Each template's first problem on a line of its own under its figures, as wide as the table.
    rows = "".join(
        f'<tr class="{"rt-best" if i == 0 else ""}{" rt-claims-nothing" if fit.claims_nothing else ""}"><td>{i + 1}</td>'
        f"<td><code>{escape(fit.name)}</code></td><td>{fit.errors}</td><td>{fit.claimed:,}</td>"
        f"<td>{fit.unclaimed:,}</td><td>{fit.warnings}</td></tr>"
        + (
            f'<tr class="rt-fit-problem{" rt-claims-nothing" if fit.claims_nothing else ""}"><td></td>'
            f'<td colspan="5" title="{escape(fit.note)}">{escape(fit.note[:240])}</td></tr>'
            if fit.note
            else ""
        )
        for i, fit in enumerate(ranked)
    )
    note = family_note(ranked, prefix or "")
    shown = (
        f'<div class="rt-status rt-status-warn" id="fits-family">△ {escape(note)}</div>'
        if note
        else ""
    )
    table = (
        f'{shown}<div class="rt-fits" id="fits-table"><table><colgroup><col class="rt-c-rank"><col class="rt-c-name"><col class="rt-c-count">'
        '<col class="rt-c-count"><col class="rt-c-count"><col class="rt-c-count"></colgroup><thead><tr><th>#</th><th>template</th>'
        "<th>errors</th><th>claimed</th><th>unclaimed or discarded</th><th>warnings</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
    )
    if skipped:
        table += error_html(
            limits.over_budget("fit_seconds", "The ranking")
            + f" {skipped} templates were not tried."
        )
    best = ranked[0].name if ranked else ""
    session.best_template = best
    remember_derived(session, "fits", table, "", prefix, generation, tools_text)
    return {"fits": table, "use_best_button": Update(value=f"Use {best}", visible=bool(best))}


@produces(*USE_TEMPLATE_OUTPUTS)
def use_best(prefix: str, generation: str, tools_text: str, session: Session) -> dict:
    """Use the best-fitting template found by "Which template fits?" (the editor's text is not
    read, so none is kept for Restore)."""
    best = session.best_template
    result = _use_template(best, WorkspaceInputs("", prefix, generation, tools_text), session)
    return {**result, "template_choice": best} if result else result


# ---------------------------------------------------------------------------
# Test cases and the reference
# ---------------------------------------------------------------------------


@produces("test_results")
def run_tests(template_text: str, test_cases_text: str, session: Session) -> dict:
    """The test cases changed: re-run them."""
    session.test_cases_text = test_cases_text
    return {"test_results": _tests(template_text, test_cases_text)}


@produces("test_cases_text", "test_results")
def add_test_case(workspace: WorkspaceInputs, test_cases_text: str, session: Session) -> dict:
    """Add the current input, with the message it parses to now, as a test case."""
    try:
        cases = read_cases(test_cases_text)
        tools = read_tools(workspace.tools_text)
    except InputError as error:
        return {"test_results": results_html([], 0, str(error))}
    view = session.view
    message = view.message if view is not None else None
    case = {
        "name": f"case {len(cases) + 1}",
        "source": "output",
        "prefix": workspace.prefix or "",
        "generation": workspace.generation or "",
        "expected": message or {},
    }
    if view is not None and probable_losses(view, inference_losses(view, session.inference)):
        # Recorded from a parse that probably lost text: not evidence until the author checks it.
        case["check"] = CHECK_NOTE
    if tools:
        case["tools"] = tools
    # The author's outputs first: they run before the matrix rows, and inference reads them.
    mine = author_cases(cases)
    text = cases_text([*mine, case, *(c for c in cases if c not in mine)])
    session.test_cases_text = text
    return {"test_cases_text": text, "test_results": _tests(workspace.template_text, text)}


@produces("test_cases_text", "test_results", "live_example_note")
def use_live_output(template_text: str, test_cases_text: str, session: Session) -> dict:
    """Use as example: the last output generated live (its prompt, what the model wrote, the
    tools it was given) becomes one of the author's test cases, so Infer sends it as an example.
    Its expected message is the parse shown, marked to check (`LIVE_NOTE`): until the author
    deletes that mark, inference gets the output and its tools only."""
    live = session.live_output
    if not live or not live["output"].strip():
        return {
            "live_example_note": "Generate first: the output the model writes can then become an "
            "example for Infer (Start from a model)."
        }
    try:
        cases = read_cases(test_cases_text)
    except InputError as error:
        return {"test_results": results_html([], 0, str(error))}
    if any(
        case["generation"] == live["output"] and (case.get("prefix") or "") == live["prefix"]
        for case in cases
    ):
        return {
            "live_example_note": "This output is already in Tests: Infer sends it as an example."
        }
    view = session.view
    message = view.message if view is not None and view.stream.endswith(live["output"]) else None
    mine = author_cases(cases)
    case = {
        "name": f"live output {len(mine) + 1}",
        "source": "output",
        "prefix": live["prefix"],
        "generation": live["output"],
        "expected": message or {},
        "check": LIVE_NOTE,
    }
    if live.get("tools"):
        case["tools"] = live["tools"]
    text = cases_text([*mine, case, *(c for c in cases if c not in mine)])
    session.test_cases_text = text
    return {
        "test_cases_text": text,
        "test_results": _tests(template_text, text),
        "live_example_note": f"✔ Added to Tests as {case['name']!r}, one of your outputs: Infer "
        "(Start from a model) sends it as an example, the output and the tools it was given.",
    }


@produces("examples_file", "test_results")
def export_cases(template_text: str, test_cases_text: str) -> dict:
    """Download the test cases as examples: a JSONL file of ``{"prefix", "output", "tools"?,
    "expected"}``, what `python -m engine infer --examples` reads (every case: the author's
    outputs and the rows)."""
    try:
        cases = read_cases(test_cases_text)
    except InputError as error:
        return {"examples_file": None, "test_results": results_html([], 0, str(error))}
    path = write_download("examples.jsonl", examples_jsonl(cases), "The examples file")
    return {"examples_file": path}


@produces("reference")
def compare_reference(workspace: WorkspaceInputs, session: Session) -> dict:
    """Compare with transformers: this engine's message and the reference's, side by side (marked
    stale when the input changes afterwards)."""
    try:
        view = parse_inputs(workspace)
    except (InputError, TemplateError, ValueError) as error:
        return {"reference": error_html(str(error))}
    shown = reference_diff.compare(
        view.template,
        workspace.prefix or "",
        workspace.generation or "",
        view.tools,
        view.message,
        view.error,
    )
    return {"reference": remember_derived(session, "reference", shown, *workspace)}


# ---------------------------------------------------------------------------
# Replay and stream checks
# ---------------------------------------------------------------------------


def _replay_failed(error: Exception, session: Session) -> dict:
    session.replay = None
    if session.last_good is not None:
        drawn = render(session.last_good, session, stale=str(error))
        return {"status": drawn["status"], "region_map": drawn["region_map"]}
    return failed(str(error), session)


def _replay_view(
    session: Session,
    *,
    check=None,
    note: str = "",
    playing: bool = False,
    pending: str = "",
    stopped: bool = False,
) -> dict:
    """The replay's panels, with `note` under the status (`stopped`: the replay was stopped
    before its end and finalized there; the note then also names a region the stop cut)."""
    replay = session.replay
    live = replay.live
    huge = (
        playing and live.received > FULL_MAP_CHARS
    )  # updates of a huge replay draw only what changes fast
    view = live.view(
        [
            ("chunk", f"{replay.position:,} / {len(replay.chunks):,}"),
            ("events", f"{len(live.events):,}"),
        ],
        partial_message=not huge,
    )
    cut = region_cut_by_stop(view) if stopped else ""
    if cut:
        note = f"{note} {cut} Play or Step on to see it close."
    window = max(0, len(view.stream) - MAP_TAIL) if huge else 0
    if playing:
        session.display.log_page = 10**9  # follow the newest events
    session.view = view
    if view.finished or not playing:
        session.last_good = view
    drawn = render(
        view,
        session,
        note=note or replay.how_note,
        progress=f"chunk {replay.position:,} / {len(replay.chunks):,}",
        window_start=window,
    )
    return {
        **drawn,
        "stream_check": report_html(check, pending),
        "scrubber": Update(value=replay.position, maximum=max(1, len(replay.chunks))),
    }


def _checked(replay: Replay, inputs: ReplayInputs, ends: float):
    """The stream checks of `replay`, fed to its end, within the request's deadline `ends` (a
    `time.perf_counter()` value)."""
    return stream_check(
        replay.template,
        replay.prefix,
        inputs.generation or "",
        replay.tools,
        replay.chunks,
        deadline=ends,
    )


def _at(session: Session, position: int | Callable[[Replay], int], inputs: ReplayInputs) -> dict:
    """The replay of `inputs` moved to `position` (a chunk count, or a function of the replay
    giving one), drawn; the stream checks run when it is at the end."""
    try:
        replay = prepare_replay(inputs, session.replay, session.generated)
    except (InputError, TemplateError, ValueError) as error:
        return _replay_failed(error, session)
    session.replay = replay
    ends = limits.deadline("replay_seconds")
    try:
        seek(replay, position(replay) if callable(position) else position, deadline=ends)
    except (
        InputError
    ) as error:  # the chunks before the position took longer than the budget: shown where it got
        return _replay_view(session, note=str(error))
    check = None
    if replay.at_end:
        check = _checked(replay, inputs, ends)
    return _replay_view(session, check=check)


@produces()
def select_tab(event: dict, session: Session) -> dict:
    """An input tab was chosen: remember it (share links and state files reopen it)."""
    if event.get("id") in TABS:
        session.tab = event["id"]
    return {}


@produces("openai_stream", "matches")
def select_results_tab(event: dict, session: Session) -> dict:
    """A results tab was chosen: remember it, and draw the OpenAI stream or the match list when
    it is that one (each costs as much as the parse on a big input, so only while shown)."""
    chosen = event.get("id")
    session.display.results_tab = chosen if chosen in RESULTS_TABS else "message"
    view = session.view
    if view is None:
        return {}
    if session.display.results_tab == "openai":
        return {"openai_stream": openai_stream(view) if view.finished else ""}
    if session.display.results_tab == "matches":
        return {"matches": match_list_html(view)}
    return {}


@produces(*REPLAY_OUTPUTS)
def replay_step(inputs: ReplayInputs, session: Session) -> dict:
    """Step: feed one more chunk; after the last one, finalize and run the stream checks;
    one more press starts over."""

    def forward(replay):
        return 0 if replay.at_end and replay.position else replay.position + 1

    return _at(session, forward, inputs)


@produces(*REPLAY_OUTPUTS)
def replay_back(inputs: ReplayInputs, session: Session) -> dict:
    """Step back: the parse one chunk earlier."""
    return _at(session, lambda replay: replay.position - 1, inputs)


@produces(*REPLAY_OUTPUTS)
def replay_seek(scrubber: float, inputs: ReplayInputs, session: Session) -> dict:
    """The scrubber was let go: jump to chunk N."""
    return _at(session, int(scrubber or 0), inputs)


@produces(*REPLAY_OUTPUTS)
def replay_stop(session: Session) -> dict:
    """The replay bar's Stop. A running Play ends at its next chunk and draws the finalized parse
    itself; a replay stepped part of the way is finalized here, parsed as if the stream had
    ended at its position (Stop always leaves a finalized parse)."""
    session.stop_requested = True
    replay = session.replay
    if session.heavy_jobs or replay is None or replay.live is None or replay.live.finished:
        return {}
    session.stop_requested = False
    replay.live.finalize()
    note = f"■ Stopped at chunk {replay.position:,} of {len(replay.chunks):,}: the text so far is parsed as if the stream had ended there."
    return _replay_view(
        session,
        note=note,
        pending="stopped before the end: Play or Step to the end to check streaming",
        stopped=True,
    )


@produces(*REPLAY_OUTPUTS)
def replay_play(inputs: ReplayInputs, speed, session: Session):
    """Play: feed the remaining chunks at `speed` chunks per second (0: as fast as possible).

    Updates are coalesced (`playground.parse.replay.paced_feed`, the loop Generate live runs
    too). Stop (`live.request_stop`) ends the replay at the next chunk with a finalized parse;
    at the end comes the stream check.
    """
    try:
        replay = prepare_replay(inputs, session.replay, session.generated)
    except (InputError, TemplateError, ValueError) as error:
        yield _replay_failed(error, session)
        return
    session.replay = replay
    ends = limits.deadline("replay_seconds")
    try:
        if replay.at_end or replay.live is None or replay.live.finished:
            seek(replay, 0 if replay.at_end else replay.position, deadline=ends)
    except InputError as error:
        yield _replay_view(session, note=str(error))
        return
    session.stop_requested = False
    live = replay.live
    live.set_deadline(ends)

    def feed(chunk: str) -> None:
        live.feed(chunk)
        replay.position += 1

    end = yield from paced_feed(
        islice(replay.chunks, replay.position, None),
        feed,
        lambda: _replay_view(session, playing=True, pending="playing…"),
        stop=lambda: session.stop_requested,
        ends=ends,
        seconds_per_piece=1.0 / float(speed) if speed else 0.0,
    )
    stopped, out_of_time = end.stopped, end.out_of_time
    session.stop_requested = False
    live.finalize()
    # The finalized parse first, drawn like the updates (on a huge input only the map's end),
    # so Stop lands at once; then the whole map, and at the end the stream check.
    note = ""
    if stopped:
        why = (
            f" (the time budget PLAYGROUND_LIMITS replay_seconds, {limits.current().replay_seconds:g} s)"
            if out_of_time
            else ""
        )
        note = (
            f"■ Stopped at chunk {replay.position:,} of {len(replay.chunks):,}{why}: the text so far is parsed as if "
            "the stream had ended there."
        )
    pending = (
        "stopped before the end: Play or Step to the end to check streaming"
        if stopped
        else "checking…"
    )
    if live.received > FULL_MAP_CHARS:
        yield _replay_view(session, note=note, pending=pending, playing=True)
    if stopped:
        yield _replay_view(session, note=note, pending=pending, stopped=True)
        return
    check = _checked(replay, inputs, ends)
    yield _replay_view(session, check=check)


# ---------------------------------------------------------------------------
# Share links, state files and deep links
# ---------------------------------------------------------------------------


def page_state(
    sample_id, template_choice, inputs: ReplayInputs, test_cases_text, tab, session: Session
) -> PageState:
    """The shareable state of the page."""
    texts = {
        "template": inputs.template_text,
        "prefix": inputs.prefix,
        "generation": inputs.generation,
        "tools": inputs.tools_text,
        "test_cases": test_cases_text,
    }
    position = session.replay.position if session.replay is not None else 0
    return PageState(
        sample_id or "",
        template_choice or "",
        {k: v or "" for k, v in texts.items()},
        chunking_param(inputs.chunking, inputs.chunk_size, inputs.chunk_seed, inputs.split_points),
        tab or "paste",
        position,
    )


@produces("code_snippet", "share_warning")
def copy_as_code(inputs: ReplayInputs) -> dict:
    """Copy as code: the template and input as a runnable `parse_response` / `ResponseParser`
    snippet (the page copies it to the clipboard)."""
    snippet, error = code_snippet_or_error(*inputs)
    if error:
        return {"code_snippet": "", "share_warning": error_html(error)}
    return {"code_snippet": snippet, "share_warning": ""}


@produces("share_link", "share_warning", "state_file")
def share(
    sample_id, template_choice, inputs: ReplayInputs, test_cases_text, session: Session
) -> dict:
    """Share: the link to this state (the page adds the address), a warning when it does not carry
    everything, and the state file to download."""
    state = page_state(sample_id, template_choice, inputs, test_cases_text, session.tab, session)
    query, warning = share_link(state)
    path = write_download("playground-state.json", state_file_text(state), "The state file")
    shown = (
        f'<div class="rt-status rt-status-warn" id="share-warning">△ {escape(warning)}</div>'
        if warning
        else ""
    )
    return {"share_link": query, "share_warning": shown, "state_file": str(path)}


OPEN_OUTPUTS = (*SAMPLE_OUTPUTS, *CHUNKING_INPUTS, *MODEL_PARAMETERS, "modes")


def _apply_state(state: PageState, session: Session, problems: list[str]) -> dict:
    """The page outputs for a `PageState` (from a link or a file)."""
    sample_id = state.sample_id if state.sample_id in samples_by_id() else DEFAULT_SAMPLE
    outputs = _sample_outputs(sample_id, session)
    if state.template_choice in template_names() and "template" not in state.texts:
        text = shipped_template_text(state.template_choice)
        cases = cases_text(cases_for_template(state.template_choice))
        outputs.update(
            template_text=text, template_choice=state.template_choice, test_cases_text=cases
        )
        session.reset_text, session.template_origin = text, state.template_choice
    for key, name in (
        ("template", "template_text"),
        ("prefix", "prefix"),
        ("generation", "generation"),
        ("tools", "tools_text"),
        ("test_cases", "test_cases_text"),
    ):
        if key in state.texts:
            outputs[name] = state.texts[key]
    if "template" in state.texts:
        outputs["template_choice"] = template_choice_for(
            state.texts["template"], outputs["template_choice"]
        )
    session.test_cases_text = outputs["test_cases_text"]
    chunking = parse_chunking_param(state.chunking)
    defaults = {"how": "chars", "size": 1, "seed": 0, "points": ""}
    outputs.update(
        {
            name: chunking.get(key, defaults[key])
            for name, key in zip(CHUNKING_INPUTS, ("how", "size", "seed", "points"))
        }
    )
    if state.tab:  # a plain visit leaves the visitor's tab alone
        outputs["modes"] = Update(selected=state.tab)
        session.tab = state.tab
    if state.chunk:
        inputs = ReplayInputs(*(outputs[name] for name in ReplayInputs._fields))
        outputs.update(_at(session, state.chunk, inputs))
    elif state.texts or state.template_choice:
        workspace = WorkspaceInputs(*(outputs[name] for name in WorkspaceInputs._fields))
        outputs.update(_parsed(workspace, session))
    outputs["test_results"] = _tests(outputs["template_text"], outputs["test_cases_text"])
    if problems:
        lines = "".join(
            f'<div class="rt-status rt-status-warn rt-link-problem">△ The link: {escape(p)}.</div>'
            for p in problems
        )
        outputs["status"] = lines + outputs.get("status", "")
    return outputs


@produces(*OPEN_OUTPUTS)
def open_page(params: dict, session: Session) -> dict:
    """Page load: apply ?sample=, ?template=, ?state=, ?chunking=, ?tab= and ?chunk= (see docs/app.md);
    bad parameters are named in the status, and the rest still applies.

    A plain visit changes no text on the page (it already shows the first sample), so text
    typed while the page loads is never replaced; the session learns what is on screen, and
    the scrubber gets its range (one chunk a character), so a chunk typed before any replay
    is taken.
    """
    if not params:
        return {"scrubber": _sample_outputs(DEFAULT_SAMPLE, session)["scrubber"]}
    problems = link_problems(params)
    model = {
        name: params[name]
        for name in MODEL_PARAMETERS
        if name in params and len(params[name]) <= MODEL_PARAMETER_CHARS
    }
    texts: dict[str, str] = {}
    if "state" in params:
        try:
            decoded = decode_state(params["state"])
            texts = {key: value for key, value in decoded.items() if isinstance(value, str)}
        except InputError as error:
            problems.append(str(error).rstrip("."))
    chunk = params.get("chunk", "0")
    tab = params.get("tab") or (
        "model"
        if model.get("chat_template_model")
        else "paste"
        if params.get("sample") or params.get("template") or texts
        else ""
    )
    state = PageState(
        params.get("sample", ""),
        params.get("template", ""),
        texts,
        params.get("chunking", "chars:1"),
        tab,
        int(chunk) if chunk.isdigit() and len(chunk) <= CHUNK_DIGITS else 0,
    )
    # ?chat_template_model= fills the Start from a model tab (the page script then presses Infer).
    return {**_apply_state(state, session, problems), **model}


@produces(*OPEN_OUTPUTS)
def upload_state(state_upload: str | None, session: Session) -> dict:
    """A state file was uploaded: restore everything it holds."""
    if not state_upload:
        return {}
    try:
        size = Path(state_upload).stat().st_size
        if size > MAX_STATE_FILE:
            raise InputError(
                f"The state file is too large: {size:,} bytes (limit {MAX_STATE_FILE:,})."
            )
        state = read_state_file(Path(state_upload).read_bytes())
    except OSError:
        return {"status": error_html("The uploaded state file cannot be read: upload it again.")}
    except InputError as error:
        return {"status": error_html(str(error))}
    finally:
        remove_upload(state_upload)
    return _apply_state(state, session, [])
