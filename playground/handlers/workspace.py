"""Paste & parse's handlers: Parse, "Read as", the template dropdown, Which template fits?
and Use best; and the parse of the workspace every other room's handlers draw with (`parsed_workspace`,
`parsed_page`, `show`).
"""

from __future__ import annotations

import json

from engine import TemplateError

from ..authoring.fit import family_note, rank_templates
from ..authoring.output_evidence import with_output_evidence
from ..authoring.template_editor import shipped_template
from ..authoring.test_cases import (
    cases_for_template,
    cases_text,
    read_cases,
    run_cases,
)
from ..catalog import (
    EDITED_TEMPLATE,
    template_choice_for,
)
from ..model.loaded import loaded_tokenizer
from ..outputs import (
    TEMPLATE_OUTPUTS,
    USE_TEMPLATE_OUTPUTS,
    Update,
    derived_views,
    editor_replaced,
    failed,
    produces,
    render,
)
from ..panels.diagnostics_panel import check_template
from ..panels.notes import fits_table
from ..panels.status import error_html
from ..panels.test_results import results_html
from ..parse.derived import remember_derived
from ..parse.parse_view import ParseView, traced_view
from ..parse.session import Session
from ..parse.token_reading import READ_LOADED, reading_for
from ..parse.workspace import WorkspaceInputs
from ..server import limits
from ..server.input_readers import InputError, check_text_sizes, read_template, read_tools


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


def parsed_workspace(
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


def tests_panel(template_text: str, test_cases_text: str, session: Session | None = None) -> str:
    """The test results panel for the editor's template (HTML); with a `session`, remembered as
    what the page's Tests panel shows (see `parsed_page`)."""
    if session is not None:
        session.tests_shown = (template_text, test_cases_text)
    try:
        cases = read_cases(test_cases_text)
        template = read_template(template_text)
    except InputError as error:
        return results_html([], 0, str(error))
    return results_html(run_cases(template, cases), len(cases))


def parsed_page(
    workspace: WorkspaceInputs, test_cases_text, session: Session, note: str = ""
) -> dict:
    """The parse panels, the test results, and whether the editor still holds a templates/ file."""
    choice = template_choice_for(workspace.template_text, session.template_origin or None)
    if choice != EDITED_TEMPLATE:
        session.template_origin = choice
    parsed = parsed_workspace(workspace, session, note, test_cases_text)
    result = {
        "template_choice": choice,
        "scrubber": scrubber_before_replay(session, workspace.generation),
        **derived_views(session, workspace),
        **parsed,
    }
    # The test cases the server last wrote or read (a case added while this parse ran is among
    # them; the page's copy sent with this parse is not). A parse of a new output leaves the
    # Tests panel alone: its results depend on the template and the cases only, and a panel
    # drawn from the copy sent with the parse would hide a case added meanwhile.
    cases = session.test_cases_text or test_cases_text or ""
    if session.tests_shown != (workspace.template_text, cases):
        result["test_results"] = tests_panel(workspace.template_text, cases, session)
    return result


def scrubber_before_replay(session: Session, generation: str) -> Update:
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
    result = parsed_page(workspace, test_cases_text, session)
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


def editor_template(template_text: str) -> dict | None:
    """The editor's text as a template dict, or None while it is not valid JSON."""
    try:
        template = json.loads(template_text or "")
    except (ValueError, RecursionError):
        return None
    return template if isinstance(template, dict) else None


def use_template(name: str, workspace: WorkspaceInputs, session: Session) -> dict:
    """Load templates/ file `name` into the editor (its text before kept for Restore), with its
    test cases, and parse the workspace with it; {} for a choice that names no file."""
    text = shipped_template(name)
    if text is None:
        return {}  # "(edited...)" or "(inline...)": nothing to load
    session.reset_text, session.template_origin = text, name
    cases = cases_text(cases_for_template(name))
    session.test_cases_text = cases
    return {
        **editor_replaced(session, workspace.template_text, text, f"loading {name}"),
        "template_text": text,
        "test_cases_text": cases,
        "test_results": tests_panel(text, cases, session),
        "start_from": name,
        **derived_views(session, workspace.with_template(text)),
        **parsed_workspace(workspace.with_template(text), session),
    }


@produces(*USE_TEMPLATE_OUTPUTS)
def choose_template(template_choice: str, workspace: WorkspaceInputs, session: Session) -> dict:
    """The template dropdown: load that templates/ file into the editor, with its test cases, and parse."""
    return use_template(template_choice, workspace, session)


def near_misses_of(session: Session, template_text: str) -> list:
    """The near misses of the parse on screen when it was made with the editor's template (a
    one-click fix must not copy a delimiter text the output shows is wrong)."""
    view = session.view
    if view is None or not view.finished or view.template != editor_template(template_text):
        return []
    return [d for d in view.diagnoses if d.code == "near-miss"]


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
    table = fits_table(ranked, family_note(ranked, prefix or ""))
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
    result = use_template(best, WorkspaceInputs("", prefix, generation, tools_text), session)
    return {**result, "template_choice": best} if result else result
