"""The Template tab's handlers: diagnostics, a Fix, Format, Reset, Restore and Back, Start from
templates/.
"""

from __future__ import annotations

from ..authoring.diagnostics import apply_fix
from ..authoring.template_editor import format_template
from ..catalog import (
    INLINE_TEMPLATE,
    template_choice_for,
)
from ..outputs import (
    RESTORE_BUTTONS,
    TEMPLATE_OUTPUTS,
    USE_TEMPLATE_OUTPUTS,
    editor_replaced,
    produces,
    restore_buttons,
)
from ..panels.diagnostics_panel import check_template, diagnostics_html
from ..panels.status import error_html
from ..parse.session import Session
from ..parse.workspace import WorkspaceInputs
from .event_data import event_number
from .workspace import (
    near_misses_of,
    parse,
    reading_tokenizer,
    use_template,
)


@produces(*USE_TEMPLATE_OUTPUTS)
def start_from(start_from: str, workspace: WorkspaceInputs, session: Session) -> dict:
    """The Template tab's "Start from templates/": like the dropdown, and the dropdown follows."""
    result = use_template(start_from, workspace, session)
    return {**result, "template_choice": start_from} if result else result


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
        **editor_replaced(session, template_text, fixed, "the Fix"),
        **parse(workspace.with_template(fixed), test_cases_text, session),
    }


@produces("template_text", "diagnostics")
def format_editor(template_text: str) -> dict:
    """Format button: pretty-print the template (invalid JSON stays as typed)."""
    pretty, found = format_template(template_text)
    diagnostics = diagnostics_html(found, pretty or "")
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
    restore = editor_replaced(session, workspace.template_text, text, "Reset")
    return {"template_text": text, **restore, **result}


@produces("template_text", "diagnostics", *RESTORE_BUTTONS, *TEMPLATE_OUTPUTS)
def restore_template(workspace: WorkspaceInputs, test_cases_text: str, session: Session) -> dict:
    """Restore: put back the editor text the last replacement took away, and parse; the text
    it replaces (`workspace.template_text`) is kept for *Back*."""
    text = session.restore(workspace.template_text)
    if text is None:
        return restore_buttons(session)
    return _put_back(workspace.with_template(text), test_cases_text, session)


@produces("template_text", "diagnostics", *RESTORE_BUTTONS, *TEMPLATE_OUTPUTS)
def restore_back(workspace: WorkspaceInputs, test_cases_text: str, session: Session) -> dict:
    """Back: undo the last Restore, putting back the text it replaced, and parse; the text there
    now goes back on Restore's stack (under what replaced it first), so Restore works again."""
    text = session.restore_back(workspace.template_text)
    if text is None:
        return restore_buttons(session)
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
