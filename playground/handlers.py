"""The page's event handlers: plain functions from named inputs to named outputs.

Each parameter is named after the page component it reads (`template_text`,
`prefix`, `generation`, `tools_text`, ...; `session` is the visitor's
`Session`), and each handler returns a dict keyed by the output names it
declares with `@produces` (see `playground.outputs`). Tests call them
directly; `app.py` binds them to the layout by those names.
"""

from __future__ import annotations

import time

from engine import TemplateError

from . import limits
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
from .chunking import parse_chunking_param
from .export import export_files
from .limits import InputError, check_text_sizes, read_template, read_tools
from .outputs import PARSE_VIEWS, failed, produces, render
from .parse_view import ParseView, traced_view
from .replay import Replay, prepare_replay, replay_parse
from .session import Session
from .share import decode_state, share_query
from .status import badge, diagnostics_html
from .stream_check import stream_check
from .template_editor import check_template, format_template, shipped_template

# Seconds between page updates while playing a replay (at most ~10 a second).
UPDATE_INTERVAL = 0.1
SAMPLE_INPUTS = ("sample_id", "template_text", "prefix", "generation", "tools_text", "template_choice")
REPLAY_OUTPUTS = (*PARSE_VIEWS, "stream_check", "stream_check_details")


# ---------------------------------------------------------------------------
# Paste & parse
# ---------------------------------------------------------------------------


def parse_inputs(template_text: str, prefix: str, generation: str, tools_text: str) -> ParseView:
    """Check the caps, then parse a pasted generation. Raises InputError / TemplateError."""
    template = read_template(template_text)
    tools = read_tools(tools_text)
    check_text_sizes(prefix or "", generation or "")
    return traced_view(template, prefix or "", generation or "", tools)


def _parsed(template_text, prefix, generation, tools_text, hide_chunks, session: Session) -> dict:
    """The parse panels for these inputs, remembering the parse in the session."""
    try:
        view = parse_inputs(template_text, prefix, generation, tools_text)
    except (InputError, TemplateError, ValueError) as error:
        session.view = None
        shown = generation if generation and len(generation) <= limits.current().generation_chars else ""
        return failed(str(error), shown)
    session.view = view
    return render(view, hide_chunks)


@produces(*PARSE_VIEWS)
def parse(template_text: str, prefix: str, generation: str, tools_text: str, hide_chunks: bool, session: Session) -> dict:
    """Parse button: the parse panels of the pasted input."""
    return _parsed(template_text, prefix, generation, tools_text, hide_chunks, session)


@produces(*PARSE_VIEWS)
def rerender(hide_chunks: bool, session: Session) -> dict:
    """Re-draw the parse on screen (a view option changed)."""
    if session.view is None:
        return {}
    return render(session.view, hide_chunks)


# ---------------------------------------------------------------------------
# Samples and templates
# ---------------------------------------------------------------------------


@produces(*SAMPLE_INPUTS, *PARSE_VIEWS)
def load_sample(sample_id: str, hide_chunks: bool, session: Session) -> dict:
    """Load one sample case, template and all, and parse it."""
    sample = samples_by_id().get(sample_id)
    if sample is None:
        return failed(f"No sample {sample_id!r}; pick one from the Samples tab.")
    text = template_text_of(sample.template)
    tools_text = template_text_of(sample.tools) if sample.tools else ""
    view = traced_view(sample.template, sample.prefix, sample.generation, sample.tools)
    note = f"Sample {sample.id}: {sample.description}"
    if sample.expected_error:
        note += f" (expected to fail with: {sample.expected_error})"
    choice = sample.template_name if sample.template_name in template_names() else INLINE_TEMPLATE
    session.view, session.reset_text, session.replay = view, text, None
    if choice != INLINE_TEMPLATE:
        session.template_origin = choice
    return {
        "sample_id": sample.id, "template_text": text, "prefix": sample.prefix, "generation": sample.generation,
        "tools_text": tools_text, "template_choice": choice, **render(view, hide_chunks, note),
    }


@produces(*SAMPLE_INPUTS, *PARSE_VIEWS)
def load_sample_at(sample_rows: int, hide_chunks: bool, session: Session) -> dict:
    """One click on a row of the samples table (`sample_rows` is the row index)."""
    return load_sample(list(samples_by_id())[int(sample_rows)], hide_chunks, session)


@produces("template_text", *PARSE_VIEWS)
def choose_template(template_choice: str, prefix: str, generation: str, tools_text: str, hide_chunks: bool, session: Session) -> dict:
    """The template dropdown (or "Start from"): load that templates/ file into the editor and parse."""
    text = shipped_template(template_choice)
    if text is None:
        return {}  # "(edited...)" or "(inline...)": nothing to load
    session.reset_text, session.template_origin = text, template_choice
    return {"template_text": text, **_parsed(text, prefix, generation, tools_text, hide_chunks, session)}


@produces("template_text", "template_choice", *PARSE_VIEWS)
def start_from(start_from: str, prefix: str, generation: str, tools_text: str, hide_chunks: bool, session: Session) -> dict:
    """The Template tab's "Start from templates/": like the dropdown, and the dropdown follows."""
    result = choose_template(start_from, prefix, generation, tools_text, hide_chunks, session)
    return {**result, "template_choice": start_from} if "template_text" in result else result


@produces("template_choice", *PARSE_VIEWS)
def edit_template(template_text: str, prefix: str, generation: str, tools_text: str, hide_chunks: bool, session: Session) -> dict:
    """Typing in the template editor: re-parse, and say whether it still holds a templates/ file."""
    choice = template_choice_for(template_text, session.template_origin or None)
    if choice != EDITED_TEMPLATE:
        session.template_origin = choice
    return {"template_choice": choice, **_parsed(template_text, prefix, generation, tools_text, hide_chunks, session)}


@produces("diagnostics")
def diagnose(template_text: str) -> dict:
    """The editor's diagnostics (validation, then lint), as the text changes."""
    return {"diagnostics": check_template(template_text)}


@produces("template_text", "diagnostics")
def format_editor(template_text: str) -> dict:
    """Format button: pretty-print the template (invalid JSON stays as typed)."""
    pretty, diagnostics = format_template(template_text)
    return {"diagnostics": diagnostics} if pretty is None else {"template_text": pretty, "diagnostics": diagnostics}


@produces("template_text", "template_choice", *PARSE_VIEWS)
def reset_template(prefix: str, generation: str, tools_text: str, hide_chunks: bool, session: Session) -> dict:
    """Reset button: put back the template the editor started from, and parse."""
    text = session.reset_text
    choice = template_choice_for(text, session.template_origin or None, INLINE_TEMPLATE)
    return {"template_text": text, "template_choice": choice, **_parsed(text, prefix, generation, tools_text, hide_chunks, session)}


@produces("template_file", "tokenizer_config_file", "diagnostics")
def export_template(template_text: str) -> dict:
    """Download / export: the template file, the tokenizer_config.json fragment, and the diagnostics."""
    try:
        template_path, config_path = export_files(template_text)
    except (InputError, TemplateError) as error:
        return {
            "template_file": None, "tokenizer_config_file": None,
            "diagnostics": diagnostics_html([("error", getattr(error, "path", ""), str(error), "")]),
        }
    return {"template_file": template_path, "tokenizer_config_file": config_path, "diagnostics": check_template(template_text)}


# ---------------------------------------------------------------------------
# Replay and stream checks
# ---------------------------------------------------------------------------


def _replay_outputs(live, replay: Replay, hide_chunks: bool, checks: tuple | None, session: Session) -> dict:
    view = live.view([("chunk", f"{replay.position} / {len(replay.chunks)}"), ("events", str(len(live.events)))])
    session.view, session.replay = view, replay
    if checks is None:
        check_badge, details = badge(None, "finish the replay to check it against one-shot parsing"), ""
    else:
        check_badge, details = badge(checks[0], checks[1]), checks[2]
    return {**render(view, hide_chunks, replay.how_note), "stream_check": check_badge, "stream_check_details": details}


@produces(*REPLAY_OUTPUTS)
def replay_step(
    template_text, prefix, generation, tools_text, chunking, chunk_size, chunk_seed, split_points, hide_chunks, session: Session,
) -> dict:
    """Step button: feed one more chunk; after the last one, finalize and run the stream checks;
    one more press starts over."""
    try:
        template, tools, replay = prepare_replay(
            template_text, prefix, generation, tools_text, chunking, chunk_size, chunk_seed, split_points, session.replay
        )
    except (InputError, TemplateError, ValueError) as error:
        session.replay = None
        return {**failed(str(error)), "stream_check": badge(None, ""), "stream_check_details": ""}
    if replay.position > len(replay.chunks) or (replay.position == len(replay.chunks) and replay.position):
        replay = Replay(replay.key, replay.chunks, 0, replay.how_note)
    else:
        replay = Replay(replay.key, replay.chunks, replay.position + 1, replay.how_note)
    live = replay_parse(template, prefix, tools, replay)
    checks = None
    if replay.position >= len(replay.chunks):
        checks = stream_check(template, prefix or "", generation or "", tools, replay.chunks)
    return _replay_outputs(live, replay, hide_chunks, checks, session)


@produces(*REPLAY_OUTPUTS)
def replay_play(
    template_text, prefix, generation, tools_text, chunking, chunk_size, chunk_seed, split_points, speed, hide_chunks,
    session: Session,
):
    """Play button: feed every chunk at `speed` chunks per second (0: as fast as possible),
    updating the page at most every UPDATE_INTERVAL seconds; ends with the stream check."""
    try:
        template, tools, replay = prepare_replay(
            template_text, prefix, generation, tools_text, chunking, chunk_size, chunk_seed, split_points, None
        )
    except (InputError, TemplateError, ValueError) as error:
        yield {**failed(str(error)), "stream_check": badge(None, ""), "stream_check_details": ""}
        return
    live = replay_parse(template, prefix, tools, replay)
    delay = 1.0 / float(speed) if speed else 0.0
    last = 0.0
    for i, chunk in enumerate(replay.chunks):
        live.feed(chunk)
        replay.position = i + 1
        now = time.perf_counter()
        if now - last >= UPDATE_INTERVAL:
            last = now
            yield _replay_outputs(live, replay, hide_chunks, None, session)
        if delay:
            time.sleep(delay)
    live.finalize()
    checks = stream_check(template, prefix or "", generation or "", tools, replay.chunks)
    yield _replay_outputs(live, replay, hide_chunks, checks, session)


# ---------------------------------------------------------------------------
# Share links and deep links
# ---------------------------------------------------------------------------


@produces("share_link")
def share(sample_id, template_choice, chunking, chunk_size, chunk_seed, split_points, template_text, prefix, generation, tools_text) -> dict:
    """Share button: the query string of a link to the current state."""
    query = share_query(
        sample_id, template_choice, chunking, chunk_size, chunk_seed, split_points, template_text, prefix, generation, tools_text
    )
    return {"share_link": query}


CHUNKING_INPUTS = ("chunking", "chunk_size", "chunk_seed", "split_points")


@produces(*SAMPLE_INPUTS, *PARSE_VIEWS, *CHUNKING_INPUTS, "modes")
def open_page(params: dict, hide_chunks: bool, session: Session) -> dict:
    """Page load: apply ?sample=, ?template=, ?state= and ?chunking= (default: the first sample)."""
    outputs = dict(load_sample(params.get("sample") or DEFAULT_SAMPLE, hide_chunks, session))
    if "chunking" in params:
        chunking = parse_chunking_param(params["chunking"])
        outputs.update({name: chunking[key] for name, key in zip(CHUNKING_INPUTS, ("how", "size", "seed", "points")) if key in chunking})
    if "state" in params or "sample" in params or "template" in params:
        outputs["modes"] = "paste"
    try:
        if "template" in params and params["template"] in template_names():
            text = shipped_template_text(params["template"])
            outputs.update(template_text=text, template_choice=params["template"])
            session.reset_text, session.template_origin = text, params["template"]
        if "state" in params:
            state = decode_state(params["state"])
            for name, key in (("template_text", "template"), ("prefix", "prefix"), ("generation", "generation"), ("tools_text", "tools")):
                if isinstance(state.get(key), str):
                    outputs[name] = state[key]
            if isinstance(state.get("template"), str) and state["template"] != session.reset_text:
                outputs["template_choice"] = template_choice_for(state["template"], outputs["template_choice"])
        if "template" in params or "state" in params:
            text = outputs["template_text"] if isinstance(outputs.get("template_text"), str) else ""
            outputs.update(_parsed(text, outputs["prefix"], outputs["generation"], outputs["tools_text"], hide_chunks, session))
    except InputError as error:
        outputs["status"] = failed(str(error))["status"]
    return outputs
