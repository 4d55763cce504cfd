"""Share's handlers: Copy as code, share links, state files, and the page opened from a link."""

from __future__ import annotations

from pathlib import Path

from ..authoring.share import (
    CHUNK_DIGITS,
    MAX_STATE_FILE,
    MODEL_PARAMETER_CHARS,
    MODEL_PARAMETERS,
    PageState,
    decode_state,
    link_problems,
    read_state_file,
    share_link,
    state_file_text,
)
from ..authoring.test_cases import (
    cases_for_template,
    cases_text,
)
from ..catalog import (
    DEFAULT_SAMPLE,
    samples_by_id,
    shipped_template_text,
    template_choice_for,
    template_names,
)
from ..outputs import (
    CHUNKING_INPUTS,
    OPEN_OUTPUTS,
    Update,
    produces,
)
from ..panels.code_snippet import code_snippet_or_error
from ..panels.notes import warnings_html
from ..panels.status import error_html
from ..parse.chunking import chunking_param, parse_chunking_param
from ..parse.replay import ReplayInputs
from ..parse.session import Session
from ..parse.workspace import WorkspaceInputs
from ..server.downloads import remove_upload, write_download
from ..server.input_readers import InputError
from .front_door import sample_outputs
from .replay import (
    replay_at,
)
from .workspace import (
    parsed_workspace,
    tests_panel,
)


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
    shown = warnings_html([warning], element_id="share-warning")
    return {"share_link": query, "share_warning": shown, "state_file": str(path)}


def _apply_state(state: PageState, session: Session, problems: list[str]) -> dict:
    """The page outputs for a `PageState` (from a link or a file)."""
    sample_id = state.sample_id if state.sample_id in samples_by_id() else DEFAULT_SAMPLE
    outputs = sample_outputs(sample_id, session)
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
        outputs.update(replay_at(session, state.chunk, inputs))
    elif state.texts or state.template_choice:
        workspace = WorkspaceInputs(*(outputs[name] for name in WorkspaceInputs._fields))
        outputs.update(parsed_workspace(workspace, session))
    outputs["test_results"] = tests_panel(
        outputs["template_text"], outputs["test_cases_text"], session
    )
    if problems:
        lines = warnings_html([f"The link: {p}." for p in problems], css="rt-link-problem")
        outputs["status"] = lines + outputs.get("status", "")
    return outputs


@produces(*OPEN_OUTPUTS)
def open_page(params: dict, session: Session) -> dict:
    """Page load: apply ?sample=, ?template=, ?state=, ?chunking=, ?tab= and ?chunk= (see docs/app.md);
    bad parameters are named in the status, and the rest still applies.

    A plain visit changes no text on the page (it already shows the first sample), so text
    typed while the page loads is never replaced, and nothing in the session either: the app's
    sessions start knowing the first sample (a parse or a replay the visitor started before
    this landed stays theirs); a session that knows nothing yet learns what is on screen. The
    scrubber gets its range (one chunk a character), so a chunk typed before any replay is
    taken. Gradio's own parameters (``?__theme=dark``) are the page's, not a link's.
    """
    params = {name: value for name, value in params.items() if not name.startswith("__")}
    if not params:
        if session.view is None and not session.sample_id:
            sample_outputs(DEFAULT_SAMPLE, session)
        # Its range only: a chunk typed in the box before this lands stays (and seeks on Enter).
        maximum = max(1, len(samples_by_id()[DEFAULT_SAMPLE].generation))
        return {"scrubber": Update(maximum=maximum)}
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
        int(chunk) if chunk.isdecimal() and len(chunk) <= CHUNK_DIGITS else 0,
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
