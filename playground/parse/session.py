"""Per-session state: everything the page remembers about one visitor, in one object.

`app.py` keeps one `Session` per browser session in a `gr.State`; handlers
receive it as `session` and update it in place (Gradio hands every listener of
a session the same object, so Stop, running with no queue, reaches a running
replay or generation through it). Whatever a session holds is reachable from
here, so bounding or freeing it is done in one place.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields

from ..server import limits
from .parse_view import ParseView
from .replay import Replay
from .weight import plain_weight

# Editor texts a session keeps for Restore at most (and for going back after Restore).
RESTORES_KEPT = 10


@dataclass
class Display:
    """How the parse panels are drawn, as the visitor set them.

    Attributes:
        hide_chunks: leave `region_chunk` events out of the event log.
        show_whitespace: draw spaces, tabs and newlines in the region map.
        show_tokens: the Tokens view: for a parse of token ids, the tokens, their ids and
            which delimiters control tokens matched; for a parse of text, after a run, still
            mark where its chunks ended (while streaming they are always marked).
        log_search, log_field, log_page: the event log's search text, field filter and page.
        selected_event: the event-log row highlighted (from #explain), or None.
        selection: what #explain explains (a span index, "anchor", "cut", "e0"...), or None.
        results_tab: the results tab shown (the OpenAI stream is only computed while it is).
        group_by_token: in a parse of token ids, the event log puts the events of each token
            under a row naming it.
    """

    hide_chunks: bool = False
    show_whitespace: bool = False
    show_tokens: bool = False
    log_search: str = ""
    log_field: str = ""
    log_page: int = 1
    selected_event: int | None = None
    selection: str | None = None
    results_tab: str = "message"
    group_by_token: bool = False


@dataclass
class Session:
    """One visitor's state.

    Attributes:
        view: the parse on screen, or None.
        last_good: the last parse of a valid template and input (shown, marked stale,
            while the input is invalid).
        replay: the replay transport (chunks, position, the parse so far), or None.
        display: the panel options.
        reset_text: the template text Reset puts back.
        template_origin: the template dropdown's last choice other than "edited".
        sample_id: the sample loaded last ("" when none).
        test_cases_text: the per-template test cases (JSON text).
        tab: the input tab shown ("samples", "paste", "live", "template").
        best_template: the templates/ file "Which template fits?" ranked first ("" before it ran).
        stop_requested: Stop was pressed; the running replay or generation ends at its next chunk.
        check_rows: the rows of the last chat-template check (``ConformanceReport.to_dict()``'s
            situations), which a click loads into Paste & parse.
        check_template: the template text that check ran with.
        inference: the last template inferred from a chat template (``InferredTemplate.to_dict()``:
            its findings explain the delimiters clicked in the editor or on the map), or None.
        outputs_for: which chat template the author's outputs and test cases were made for (a
            digest, `playground.handlers.start_from_model.chat_template_owner`; "" before the first Infer): Infer
            with another one starts fresh instead of sending them.
        generated: the last Generate live's generation and the offsets between the pieces the
            model streamed (a replay with "tokens" chunking of that text replays those pieces),
            or None.
        live_output: the last Generate live's output as an example for inference (``{"prefix",
            "output", "tools"?}``: the prompt, what the model wrote, the tools it was given), what
            "Use as example" adds to Tests; None before a generation.
        derived: the views derived from the input on demand ("reference", "fits",
            "conformance"): name -> (the inputs they were made from, their HTML, marked stale).
        heavy_jobs: heavy jobs (replays, generations, checks, inferences...) of this session
            running now (see `heavy_job`); running_jobs: their kinds of work.
        replaced: editor texts a handler replaced (a sample loaded, Infer, Generate live with the
            model's template...), as (what replaced it, the text), the latest last: the Template
            tab's Restore puts them back.
        restored: editor texts Restore replaced, as (what first replaced the text Restore put
            back, the text), the latest last: *Back to the text Restore replaced* puts them back;
            emptied by any other replacement.
        read_as: how Paste & parse reads the output: as text, or as the ids of a tokenizer
            (`playground.parse.token_reading.READ_CHOICES`).
        spelled_text: the "Spelled out" box: ranges of the generation written with ordinary
            tokens when the output is read as ids (`token_reading.spelled_ranges`).
    """

    view: ParseView | None = None
    last_good: ParseView | None = None
    replay: Replay | None = None
    display: Display = field(default_factory=Display)
    reset_text: str = ""
    template_origin: str = ""
    sample_id: str = ""
    test_cases_text: str = ""
    tab: str = "samples"
    best_template: str = ""
    stop_requested: bool = False
    check_rows: list[dict] = field(default_factory=list)
    check_template: str = ""
    inference: dict | None = None
    outputs_for: str = ""
    derived: dict[str, tuple[tuple, str, bool]] = field(default_factory=dict)
    generated: tuple[str, list[int]] | None = None
    live_output: dict | None = None
    heavy_jobs: int = 0
    running_jobs: list[str] = field(default_factory=list)
    replaced: list[tuple[str, str]] = field(default_factory=list)
    restored: list[tuple[str, str]] = field(default_factory=list)
    read_as: str = "text"
    spelled_text: str = ""
    # (template text, test cases text) the Tests panel last drawn shows results for.
    tests_shown: tuple[str, str] | None = None

    def release(self) -> None:
        """Drop everything that takes memory: the parses, the replay, the derived views, the
        inference, the Restore stacks, the texts kept for Reset and the tests; the page options
        stay. Gradio keeps the (now small) object until its own cap drops the page's state, so
        what is not dropped here is not freed."""
        self.view = self.last_good = self.replay = None
        self.check_rows = []
        self.check_template = ""
        self.inference = None
        self.derived = {}
        self.generated = None
        self.live_output = None
        self.replaced = []
        self.restored = []
        self.test_cases_text = ""
        self.tests_shown = None
        self.reset_text = ""
        self.display.log_search = ""
        self.display.selection = None
        self.__dict__.pop("_weights", None)
        self.stop_requested = True  # a replay or generation still running ends at its next chunk

    def replacing(self, old: str, new: str, why: str) -> None:
        """The editor's text `old` is being replaced by `new` (by `why`: "loading a sample",
        "Infer"): keep it for Restore (unless it is empty or the same), and forget the texts
        Restore replaced (a new step)."""
        if old != new:
            keep_text(self.replaced, why, old)
        self.restored.clear()

    def restore(self, current: str) -> str | None:
        """Restore: the editor text the last replacement took away (None when none did); the
        editor's `current` text is kept for *Back* under what replaced it."""
        if not self.replaced:
            return None
        why, text = self.replaced.pop()
        keep_text(self.restored, why, current)
        return text

    def restore_back(self, current: str) -> str | None:
        """Back: the text the last Restore replaced (None after none); the editor's `current`
        text goes back on Restore's stack, so Restore works again."""
        if not self.restored:
            return None
        why, text = self.restored.pop()
        keep_text(self.replaced, why, current)
        return text

    @property
    def weight(self) -> int:
        """About the bytes this session keeps between requests: every field, by its weight (a parse
        and the replay by their estimates, everything else by `plain_weight`). The parses are
        estimated in O(1) per part; the inference and the check rows, assigned whole, are walked
        once and remembered by identity."""
        views = {id(view): view for view in (self.view, self.last_good) if view is not None}
        replay = self.replay if isinstance(self.replay, Replay) else None
        live = replay.live if replay is not None else None
        total = replay.weight if replay is not None else 0
        for view in views.values():
            if not isinstance(view, ParseView):
                total += plain_weight(view)
            elif live is not None and getattr(view.events, "store", None) is live.events:
                total += 2 * sys.getsizeof(view.stream)  # its events and spans are the replay's
            else:
                total += view.weight
        if self.replay is not None and replay is None:
            total += plain_weight(self.replay)
        for one in fields(self):
            if one.name in _PARSES:
                continue
            value = getattr(self, one.name)
            if one.name in _ASSIGNED_WHOLE:
                total += self._remembered(one.name, value)
            else:
                total += plain_weight(value)
        return total

    def _remembered(self, name: str, value) -> int:
        """`plain_weight(value)` of field `name`, walked again only when the field holds another object."""
        memo = self.__dict__.setdefault("_weights", {})
        known = memo.get(name)
        if known is not None and known[0] is value:
            return known[1]
        weight = plain_weight(value)
        memo[name] = (value, weight)
        return weight

    def trim(self, cap: int) -> bool:
        """Keep at most about `cap` bytes: drop the last good parse, then the replay, then the parse on
        screen, then the derived views, the check rows, the inference, the last generation, the
        tests, and the texts Back and Restore would put back (oldest first), until under it. Returns
        whether anything was dropped (#explain and the event log then ask for a new parse)."""
        dropped = False
        for names in _TRIM_ORDER:
            if self.weight <= cap:
                break
            if names == ("last_good",) and self.last_good is self.view:
                continue
            if names in (("restored",), ("replaced",)):
                stack = getattr(self, names[0])
                while stack and self.weight > cap:
                    del stack[0]
                    dropped = True
                continue
            for name in names:
                setattr(self, name, _EMPTY.get(name))
            dropped = True
        return dropped


# The fields holding parses (`Session.weight` counts them by their estimates, shared parts once).
_PARSES = ("view", "last_good", "replay")
# Fields only ever assigned a new object (never changed in place): weighed once per object.
_ASSIGNED_WHOLE = ("inference", "check_rows", "live_output")
# What `Session.trim` drops, in order (a field name gets its empty value from `_EMPTY`, or None).
_TRIM_ORDER = (
    ("last_good",),
    ("replay",),
    ("view", "last_good"),
    ("derived",),
    ("check_rows", "check_template"),
    ("inference",),
    ("generated", "live_output"),
    ("test_cases_text",),
    ("restored",),
    ("replaced",),
)
_EMPTY = {"derived": {}, "check_rows": [], "check_template": "", "test_cases_text": ""}


_jobs_lock = threading.Lock()

# The heavy jobs by their kind of work (the page's listeners name it), as the refusal names them.
JOB_NAMES = {
    "replay": "a replay",
    "model": "a generation",
    "export": "an export",
    "conformance": "a chat-template check",
    "infer": "a template inference",
    "reference": "a comparison with transformers' parser",
    "fit": "a template fit",
}
# The kinds a Stop button ends (Play's Stop, Generate's Stop).
STOPPABLE_JOBS = ("replay", "model")


@contextmanager
def heavy_job(session: Session, cap: int, kind: str = "") -> Iterator[str | None]:
    """Count a heavy job of `kind` (a key of `JOB_NAMES`; "" when unknown) against the
    session's cap of `cap` running at once.

    Yields None when the job may run (it counts until the block ends), else the message
    to show instead: it names the jobs running, and says "press Stop" only when a Stop button
    ends every one of them.
    """
    with _jobs_lock:
        running = list(session.running_jobs)
        refused = session.heavy_jobs >= cap
        if not refused:
            session.heavy_jobs += 1
            session.running_jobs.append(kind)
    if refused:
        yield _refusal(running, session.heavy_jobs, cap)
        return
    try:
        yield None
    finally:
        with _jobs_lock:
            session.heavy_jobs -= 1
            if kind in session.running_jobs:
                session.running_jobs.remove(kind)


def _refusal(running: list[str], count: int, cap: int) -> str:
    """The refusal of one more job while `count` jobs of kinds `running` run."""
    named = [JOB_NAMES[kind] for kind in running if kind in JOB_NAMES]
    if named and len(named) == count:
        what = " and ".join(named)
    else:
        what = f"{count} job{'s' if count != 1 else ''} (a replay, generation, check or inference)"
    it = "it" if count == 1 else "them"
    stop = "press Stop or " if running and all(kind in STOPPABLE_JOBS for kind in running) else ""
    return (
        f"This page is already running {what} (at most {cap} at once, PLAYGROUND_LIMITS "
        f"session_jobs): {stop}wait for {it} to end."
    )


def keep_text(stack: list[tuple[str, str]], why: str, text: str) -> None:
    """Push (why, text) on a stack of editor texts, unless it is blank, the text on top, or longer
    than PLAYGROUND_LIMITS `template_chars`; keep the last RESTORES_KEPT."""
    if len(text or "") > limits.current().template_chars:
        return  # no template: the door refuses such an editor text, and it would outweigh the stack
    if (text or "").strip() and (not stack or stack[-1][1] != text):
        stack.append((why, text))
        del stack[:-RESTORES_KEPT]


class OpenSessions:
    """The sessions of open pages by Gradio session id, least recently used first.

    A page that closes, or the least recently used past `capacity`, has its session released
    (`Session.release`), so its parses are freed at once rather than when Gradio drops its state.
    After each request its session's weight is charged (`charge`): a session over its cap is
    trimmed, and past the total cap the least recently used sessions are released.
    """

    def __init__(self) -> None:
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._weights: dict[str, int] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    @property
    def weight(self) -> int:
        """The bytes all open sessions keep, as last charged."""
        with self._lock:
            return sum(self._weights.values())

    def charge(self, session_id: str, session: Session, session_cap: int, total_cap: int) -> None:
        """After a request of `session_id`: trim its session to `session_cap` bytes, then release the
        least recently used other sessions while all of them keep more than `total_cap` bytes."""
        session.trim(session_cap)
        weight = session.weight
        with self._lock:
            if session_id in self._sessions:
                self._weights[session_id] = weight
            total = sum(self._weights.values())
            dropped = []
            for other in list(self._sessions):
                if total <= total_cap:
                    break
                if other == session_id:
                    continue
                total -= self._weights.pop(other, 0)
                dropped.append(self._sessions.pop(other))
        for old in dropped:
            old.release()

    def seen(self, session_id: str, session: Session, capacity: int) -> None:
        """`session` is the state of Gradio session `session_id`, in use now."""
        with self._lock:
            self._sessions[session_id] = session
            self._sessions.move_to_end(session_id)
            dropped = []
            for _ in range(len(self._sessions) - capacity):
                old_id, old = self._sessions.popitem(last=False)
                self._weights.pop(old_id, None)
                dropped.append(old)
        for old in dropped:
            old.release()

    def closed(self, session_id: str) -> None:
        """The page of `session_id` was closed: release its session."""
        with self._lock:
            session = self._sessions.pop(session_id, None)
            self._weights.pop(session_id, None)
        if session is not None:
            session.release()
