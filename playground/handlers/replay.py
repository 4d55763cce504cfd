"""The replay bar's handlers: Step, Back, the scrubber, Play and Stop, and the stream check."""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice

from engine import TemplateError

from ..authoring.output_evidence import with_output_evidence
from ..authoring.stream_check import stream_check
from ..outputs import (
    REPLAY_OUTPUTS,
    Update,
    failed,
    produces,
    render,
)
from ..panels.status import region_cut_by_stop
from ..panels.stream_report import report_html
from ..parse.replay import Replay, ReplayInputs, paced_feed, prepare_replay, seek
from ..parse.session import Session
from ..parse.workspace import WorkspaceInputs
from ..server import limits
from ..server.input_readers import InputError

# Above this many characters a running replay draws only the end of the map (MAP_TAIL).
FULL_MAP_CHARS = 50_000


MAP_TAIL = 20_000


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
    workspace: WorkspaceInputs | None = None,
) -> dict:
    """The replay's panels, with `note` under the status (`stopped`: the replay was stopped
    before its end and finalized there; the note then also names a region the stop cut). At the
    end of the replay of `workspace`, a near miss the page's evidence confirms is named as the
    output's misspelling, as a parse of the same output names it (`with_output_evidence`)."""
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
    if workspace is not None and view.finished:
        view = with_output_evidence(view, session, workspace, session.test_cases_text)
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


def replay_at(
    session: Session, position: int | Callable[[Replay], int], inputs: ReplayInputs
) -> dict:
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
    return _replay_view(session, check=check, workspace=inputs.workspace)


@produces(*REPLAY_OUTPUTS)
def replay_step(inputs: ReplayInputs, session: Session) -> dict:
    """Step: feed one more chunk; after the last one, finalize and run the stream checks;
    one more press starts over."""

    def forward(replay):
        return 0 if replay.at_end and replay.position else replay.position + 1

    return replay_at(session, forward, inputs)


@produces(*REPLAY_OUTPUTS)
def replay_back(inputs: ReplayInputs, session: Session) -> dict:
    """Step back: the parse one chunk earlier."""
    return replay_at(session, lambda replay: replay.position - 1, inputs)


@produces(*REPLAY_OUTPUTS)
def replay_seek(scrubber: float, inputs: ReplayInputs, session: Session) -> dict:
    """The scrubber was let go: jump to chunk N."""
    return replay_at(session, int(scrubber or 0), inputs)


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
    too). Stop (`generate_live.request_stop`) ends the replay at the next chunk with a finalized parse;
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
    yield _replay_view(session, check=check, workspace=inputs.workspace)
