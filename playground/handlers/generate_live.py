"""Generate live's handlers: run a model and parse its output as the tokens arrive, Stop, Use
the model's template, Use as example.

The model code is `playground.model.generation` (imported lazily: it imports torch) and the
models kept loaded are `playground.model.loaded`'s; this module builds the conversation from
the page's boxes, and streams `ParseView`s while generating.
"""

from __future__ import annotations

import threading
import time

from engine import TemplateError
from engine.errors import ResponseParseError

from ..authoring.test_cases import author_cases, cases_text, read_cases, unverified_note
from ..catalog import is_authors_template, template_choice_for, template_text_of
from ..model.loaded import get_model, load_status, start_loading, waiting_for
from ..outputs import (
    PARSE_VIEWS,
    RESTORE_BUTTONS,
    TEMPLATE_OUTPUTS,
    Update,
    derived_views,
    editor_replaced,
    produces,
    render,
)
from ..panels.status import error_html, region_cut_by_stop, status_html
from ..panels.test_results import results_html
from ..parse.derived import DERIVED_VIEWS
from ..parse.parse_view import LiveParse, ParseView
from ..parse.replay import PacedEnd, paced_feed
from ..parse.session import Session
from ..parse.workspace import WorkspaceInputs
from ..server import limits, queues
from ..server.folders import FolderError, shown
from ..server.input_readers import InputError, read_json, read_template, read_tools
from ..server.redact import redact
from .checks import wrong_parse_reasons
from .workspace import parse, tests_panel

# Teaching pace: tokens shown per second, each in an update of its own (the model runs ahead).
TEACHING_TOKENS_PER_SECOND = 4
# Seconds between two status updates while Generate waits for a load.
LOAD_POLL = 0.25
# Generations running at once over the server (on 2 CPU cores one is as fast as two); a
# Generate waits for a slot, and Stop ends the wait.
generation_slots = threading.BoundedSemaphore(queues.GENERATIONS_AT_ONCE)


def conversation(system: str, user: str, messages_text: str) -> list[dict]:
    """The messages to render: the messages JSON when given, else system + user turns."""
    if messages_text and messages_text.strip():
        messages = read_json(messages_text, "The messages JSON", limits.current().tools_chars)
        if not isinstance(messages, list) or not all(
            isinstance(m, dict) and "role" in m for m in messages
        ):
            raise InputError(
                'The messages JSON must be a list like [{"role": "user", "content": "Hi"}].'
            )
        return messages
    if not (user or "").strip():
        raise InputError("Write a user message (or a messages JSON) first.")
    cap = limits.current().message_chars
    for what, text in (("user", user), ("system", system or "")):
        if len(text) > cap:
            raise InputError(
                f"The {what} message is too long: {len(text):,} characters (limit {cap:,}, PLAYGROUND_LIMITS message_chars)."
            )
    turns = [{"role": "system", "content": system}] if (system or "").strip() else []
    return turns + [{"role": "user", "content": user}]


def checked_max_new_tokens(value) -> int:
    """`value` as a token count a generation may ask for: 1 to PLAYGROUND_LIMITS `max_new_tokens`.

    Raises InputError for a count out of that range, ValueError for one that is no number."""
    cap = limits.current().max_new_tokens
    count = int(value)
    if not 1 <= count <= cap:
        raise InputError(f"max_new_tokens must be between 1 and {cap}.")
    return count


def capped_prompt(loaded, messages: list[dict], tools: list | None, enable_thinking):
    """The prompt a generation on this server starts from (`generation.Prompt`): `messages` and
    `tools` rendered with the model's chat template in a worker killed after PLAYGROUND_LIMITS
    `chat_template_seconds` (a chat template is code from the model's repository), refusing a
    prompt over `prompt_tokens` tokens. `loaded`: a `generation.LoadedModel`.

    Raises generation.PromptRenderError (a ValueError) when the template fails, runs too long or
    writes too long a prompt."""
    from ..model import generation

    caps = limits.current()
    return generation.render_prompt(
        loaded,
        messages,
        tools,
        enable_thinking=bool(enable_thinking),
        seconds=caps.chat_template_seconds,
        max_tokens=caps.prompt_tokens,
    )


def sampled_stream(
    loaded, prompt, max_new_tokens: int, temperature, top_p, seed, logits_processors=()
):
    """`generation.stream_generation` with the sampling settings as the page's fields and the API
    give them: `temperature` and `top_p` numbers or numeric text, `seed` a whole number, or None
    or "" for an unseeded generation. Raises ValueError for a setting that is no number."""
    from ..model import generation

    return generation.stream_generation(
        loaded,
        prompt,
        max_new_tokens=max_new_tokens,
        temperature=float(temperature),
        top_p=float(top_p),
        seed=None if seed is None or seed == "" else int(seed),
        logits_processors=logits_processors,
    )


def per_token_figures(live: LiveParse, tokens: int) -> list[tuple[str, str]]:
    """The per-token figures: a plain parser's time (the path library users get) and the
    tracing the page's views need, each divided by the tokens fed."""
    if not tokens:
        return [
            ("parse per token (plain parser)", "–"),
            ("tracing per token (extra, for the views)", "–"),
        ]
    plain = live.plain
    if plain is None:
        parse = "–"
    else:  # a parser that raised was timed up to its error
        parse = f"{plain.seconds / tokens * 1000:.3f} ms" + (
            " (up to its error)" if plain.stopped else ""
        )
    return [
        ("parse per token (plain parser)", parse),
        (
            "tracing per token (extra, for the views)",
            f"{live.parse_seconds / tokens * 1000:.3f} ms",
        ),
    ]


# The tool choices "Constrain to the template" offers besides the tools' own names.
TOOL_CHOICES = ("auto", "auto, no parallel", "required", "required, no parallel", "none")


# Which PLAYGROUND_LIMITS key each bound of a grammar's budget comes from.
GRAMMAR_LIMIT_KEYS = {
    "seconds": "grammar_seconds",
    "nodes": "grammar_nodes",
    "chars": "grammar_chars",
}


def grammar_refused(detail: str, limit: str) -> str:
    """The model note for a grammar refused as too large: `detail` says what passed `limit`."""
    return (
        f"not constrained: the template's grammar is too large ({detail}; limit {limit}); "
        "the model generates without it"
    )


def constrained(loaded, template, tools, prompt, constrain, tool_choice):
    """`(logits processors, note)` for Generate live's "Constrain to the template": none and ""
    when off. Constrained, every token is one the template's grammar (`engine.grammar`)
    allows under `tool_choice` (``auto``, ``required``, ``none``, a tool's name; with ``, no
    parallel`` at most one call), so the output parses; the note says what the grammar does
    not enforce, or why it cannot be built.

    The grammar comes from the visitor's template and tools, and is built in the server's
    process: deriving and writing it is bounded by `grammar_seconds`, `grammar_nodes` and
    `grammar_chars` (an `engine.grammar.GrammarBudget`), compiling it and each token's mask by
    llguidance's parser limits (`SERVING_PARSER_LIMITS`). A grammar past a bound is refused with a note
    naming it, and the model generates unconstrained.

    Raises:
        LookupError: the tool choice names no offered tool (the message lists them).
    """
    from engine.grammar import GrammarBudget, GrammarTooLarge
    from engine.grammar.matching import SERVING_PARSER_LIMITS, passed_limit

    from ..model import generation

    if not constrain:
        return [], ""
    choice = (tool_choice or "auto").strip()
    parallel = not choice.endswith(", no parallel")
    choice = choice.removesuffix(", no parallel")
    names = [
        tool.get("function", tool).get("name") for tool in tools or [] if isinstance(tool, dict)
    ]
    if choice not in ("auto", "required", "none") and choice not in names:
        raise LookupError(
            f"tool choice {choice!r} names no offered tool (offered: {', '.join(map(str, names)) or 'none'})."
        )
    caps = limits.current()
    budget = GrammarBudget(caps.grammar_seconds, caps.grammar_nodes, caps.grammar_chars)
    try:
        processor, derived = generation.constrained_processor(
            loaded,
            template,
            tools,
            prompt,
            tool_choice=choice,
            parallel_tool_calls=parallel,
            budget=budget,
            parser_limits=SERVING_PARSER_LIMITS,
        )
    except GrammarTooLarge as error:
        return [], _too_large(error)
    except (ImportError, ValueError) as error:
        first = str(error).strip().splitlines()[0]
        if passed_limit(first):
            return [], grammar_refused(first, "a parser limit of this server")
        return [], f"not constrained: {error}"
    if processor is None:
        if derived.too_large is not None:
            return [], _too_large(derived.too_large)
        return [], "not constrained: " + "; ".join(derived.unconstrainable)
    note = f"constrained to the template's grammar (tool choice {tool_choice or 'auto'})"
    notes = derived.notes_for("lark")  # the form llguidance reads
    if notes:
        note += "; not enforced: " + "; ".join(notes[:3])
    return [processor], note


def _too_large(error) -> str:
    """The note for an `engine.grammar.GrammarTooLarge`, naming the PLAYGROUND_LIMITS key."""
    key = GRAMMAR_LIMIT_KEYS[error.bound]
    return grammar_refused(error.detail, f"PLAYGROUND_LIMITS {key}")


@produces("status")
def request_stop(session: Session) -> dict:
    """Stop: end this session's replay or live generation at its next chunk."""
    session.stop_requested = True
    return {}


@produces(
    *PARSE_VIEWS,
    "template_text",
    "template_choice",
    "prefix",
    "generation",
    "model_note",
    "chunking",
    "scrubber",
    *RESTORE_BUTTONS,
    "use_model_button",
    *DERIVED_VIEWS,
)
def generate(
    model_name,
    system,
    user,
    messages_text,
    live_tools_text,
    enable_thinking,
    max_new_tokens,
    temperature,
    top_p,
    seed,
    use_model_template,
    template_text,
    session: Session,
    teaching_pace: bool = False,
    constrain: bool = False,
    tool_choice: str = "auto",
):
    """Generate with a model and parse as tokens arrive.

    Yields the parse panels, and at the end the template (when the model's own is used),
    the prompt as prefix and the generation: updates are coalesced by the paced loop Play
    runs too (`playground.parse.replay.paced_feed`), plus one at the end; each update
    outlines the text and events added since the one before.

    `use_model_template`: the model's replaces the editor's template unless that is the author's.
    With `teaching_pace`, tokens are shown TEACHING_TOKENS_PER_SECOND a second, one update
    each. Stop (`request_stop`) ends it at the next token; what was generated is then
    finalized like a finished generation.

    The "parse per token" figure times a plain parser (`PlainParse`: the path library users
    get), fed alongside the traced one; "tracing per token" is the traced parser's time.
    """
    from ..model import generation

    session.stop_requested = False
    try:
        messages = conversation(system, user, messages_text)
        tools = read_tools(live_tools_text)
        max_new_tokens = checked_max_new_tokens(max_new_tokens)
        kept, template = _run_template(use_model_template, template_text)
        key = start_loading(model_name)
    except (InputError, ValueError) as error:  # FolderError included
        yield not_started(str(error))
        return
    with waiting_for(key):
        if not (yield from _wait_for_load(model_name, session)):
            return
        try:
            loaded = get_model(model_name)
            template, template_note = (
                generation.choose_template(loaded) if template is None else (template, "")
            )
            yield preparing(key, "rendering the prompt with its chat template")
            prompt = capped_prompt(loaded, messages, tools, enable_thinking)
            live = live_parse(loaded, template, prompt, tools)
            processors, note = constrained(loaded, template, tools, prompt, constrain, tool_choice)
        except (
            generation.ModelLoadError,
            generation.PromptRenderError,  # the chat template failed, looped or ran too long
            LookupError,
            TemplateError,
            ResponseParseError,
            FolderError,
        ) as error:
            yield not_started(redact(str(error)))
            return
    run = _LiveRun(live, session, loaded, (template_note, note), teaching_pace, processors)
    run.editor(kept, use_model_template, template, template_text)
    if not (yield from _wait_for_slot(session)):
        return
    yield preparing(key, "generating, its first token is on its way")
    pieces = sampled_stream(
        loaded, prompt, max_new_tokens, temperature, top_p, seed, logits_processors=processors
    )
    end = yield from run.stream(pieces, teaching_pace)
    yield run.finished(end, prompt.text, template_text, live_tools_text)


def live_parse(
    loaded, template: dict, prompt, tools: list | None, *, plain: bool = True
) -> LiveParse:
    """The parse a generation is fed to: the model's token ids read with its tokenizer (the
    parse transformers 5.25 gives with that tokenizer: a control token is a delimiter only
    when generated as its id), from the prompt's ids on. A tokenizer that cannot read ids
    (a slow one, with no ``backend_tokenizer``) leaves the parse reading the decoded text.

    `plain`: also time a plain parser (the page's "parse per token" figure).

    Raises TemplateError for a template that does not load."""
    tokenizer = loaded.tokenizer
    if getattr(tokenizer, "backend_tokenizer", None) is None:
        return LiveParse(template, prompt.text, tools, plain=plain)
    return LiveParse(
        template,
        list(prompt.ids),
        tools,
        plain=plain,
        tokenizer=tokenizer,
        tokenizer_name="the model's tokenizer",
    )


def feed_piece(live: LiveParse, piece) -> None:
    """Feed one streamed piece (`generation.GeneratedPiece`) to a `live_parse`: its token ids,
    or its text when the parse reads text."""
    live.feed(list(piece.ids) if live.tokenizer_name else piece.text)


def live_example(prefix: str, output: str, tools_text: str) -> dict:
    """A generation as an example output for inference: ``{"prefix", "output", "tools"?}`` (the
    tools the prompt offered, left out when `tools_text` gives none or does not read)."""
    example: dict = {"prefix": prefix, "output": output}
    try:
        tools = read_tools(tools_text)
    except InputError:
        tools = None
    if tools:
        example["tools"] = tools
    return example


def not_started(message: str) -> dict:
    """Generate live's answer when no generation started (bad input, a model that cannot load or
    chat, Stop while waiting): `message` in the status line, every panel left showing the parse
    it showed, so a failed Generate costs the author nothing on screen."""
    return {"status": error_html(message)}


def _run_template(use_model_template: bool, template_text: str) -> tuple[bool, dict | None]:
    """(whether the editor's template is kept, the template to parse with: None for the model's).
    An edited or inferred template is the author's work: kept even when the model's is asked
    for (the note says so, and *Use the model's template* is offered). Raises InputError."""
    kept = bool(use_model_template) and is_authors_template(template_text or "")
    return kept, read_template(template_text) if not use_model_template or kept else None


@produces(
    "template_text",
    "diagnostics",
    "use_model_button",
    "model_note",
    *RESTORE_BUTTONS,
    *TEMPLATE_OUTPUTS,
)
def use_model_template_now(
    model_name: str, workspace: WorkspaceInputs, test_cases_text: str, session: Session
) -> dict:
    """*Use the model's template*, offered after a Generate that kept the author's template: the
    template Generate live chooses for the model goes into the editor (the edited text is kept
    for Restore), and the input is parsed with it."""
    from ..model import generation as model_code

    try:
        loaded = get_model(model_name)
        template, why = model_code.choose_template(loaded)
    except (model_code.ModelLoadError, LookupError, FolderError) as error:
        return {"model_note": redact(str(error))}
    text = template_text_of(template)
    return {
        "template_text": text,
        "use_model_button": Update(visible=False),
        "model_note": f"Model: {shown(loaded.name)} — {redact(why)}",
        **editor_replaced(session, workspace.template_text, text, "Use the model's template"),
        **parse(workspace.with_template(text), test_cases_text, session),
    }


def preparing(key: str, step: str) -> dict:
    """Generate's status while the model (`key`, as `playground.model.loaded.model_key` names
    it) prepares a generation: each slow step before the first token is said, so the panels
    that still show the last parse are never left under a bare "processing"."""
    return {"status": status_html(None, f"⏳ {shown(key)}: {step}…")}


def _wait_for_load(model_name: str, session: Session):
    """Show how far the model's load is until it ends (a generator of status updates); returns
    False when Stop came first (the load is then abandoned unless someone else waits for it)."""
    while True:
        loading, ended = load_status(model_name)
        if session.stop_requested:
            session.stop_requested = False
            yield not_started(
                "■ Stopped waiting for the model; its load is abandoned unless someone else waits for it."
            )
            return False
        if ended:
            return True
        yield {"status": status_html(None, loading)}
        time.sleep(LOAD_POLL)


def _wait_for_slot(session: Session):
    """Take a generation slot (`generation_slots`), saying so while another visitor's generation
    runs (a generator of status updates); returns False when Stop came first."""
    waited = time.perf_counter()
    while not generation_slots.acquire(timeout=LOAD_POLL):
        if session.stop_requested:
            session.stop_requested = False
            yield not_started("■ Stopped waiting for another generation to end.")
            return False
        yield {
            "status": status_html(
                None,
                f"⏳ Waiting for another visitor's generation to end… ({time.perf_counter() - waited:.0f} s)",
            )
        }
    return True


class _LiveRun:
    """One Generate's parse while its tokens arrive: the figures, each update, and the last one.

    Attributes:
        chosen: the template panel's new values when the model's own template is used, else {}.
        constraint: the `GrammarLogitsProcessor` of "Constrain to the template", or None.
    """

    def __init__(
        self, live: LiveParse, session: Session, loaded, notes: tuple, pace: bool, processors=()
    ):
        self.live, self.session = live, session
        self.model_note = f"Model: {shown(loaded.name)}" + "".join(
            f" — {redact(note)}" for note in notes if note
        )
        if pace:
            self.model_note += f" — teaching pace: {TEACHING_TOKENS_PER_SECOND} tokens a second, one update each (the model runs ahead)"
        self.chosen: dict = {}
        # The GrammarLogitsProcessor of "Constrain to the template" (None: unconstrained).
        self.constraint = processors[0] if processors else None
        self.started = time.perf_counter()
        self.tokens = 0
        self.shown_feeds = 0  # feeds drawn by the last update

    def choose(self, template: dict, editor: str) -> None:
        """The model's own template is used: the editor and the template choice show it, and the
        editor's text (`editor`) is kept for Restore."""
        text = template_text_of(template)
        self.chosen = {
            "template_text": text,
            "template_choice": template_choice_for(text, self.session.template_origin or None),
            **editor_replaced(self.session, editor, text, "Generate live"),
            "use_model_button": Update(visible=False),
        }

    def editor(self, kept: bool, model_template: bool, template: dict, text: str) -> None:
        """What the run does to the editor: keeps the author's template (`kept`), or shows the
        model's `template` in place of `text` when the model's is used."""
        if kept:
            self.keep_edit(edited=text != self.session.reset_text)
        elif model_template:
            self.choose(template, text)

    def keep_edit(self, edited: bool) -> None:
        """The editor holds the author's template: it parses this run, and the note says so;
        "edited" only when the author changed it (`edited`: it differs from the text the page
        itself last put there, such as an inferred template)."""
        what = "your edited template" if edited else "the editor's template"
        self.model_note += (
            f" — {what} was kept (the model's own was not used: "
            "“Use the model's template” puts it in the editor)"
        )
        self.chosen = {"use_model_button": Update(visible=True)}

    def view(self, fresh_feeds: int = 1) -> ParseView:
        elapsed = time.perf_counter() - self.started
        tokens = self.tokens
        return self.live.view(
            [
                ("tokens", str(tokens)),
                ("tokens/s", f"{tokens / elapsed:.1f}" if elapsed > 0 else "0"),
                *per_token_figures(self.live, tokens),
                ("elapsed", f"{elapsed:.1f} s"),
            ],
            fresh_feeds=fresh_feeds,
        )

    def stream(self, pieces, pace: bool):
        """Parse the model's pieces as they come (`paced_feed`: a generator of updates that returns
        its `PacedEnd`); then the generation slot is given back."""
        session = self.session
        try:
            return (
                yield from paced_feed(
                    pieces,
                    self.feed,
                    self.draw,
                    stop=lambda: session.stop_requested,
                    ends=time.perf_counter() + limits.current().generate_seconds,
                    seconds_per_piece=1 / TEACHING_TOKENS_PER_SECOND if pace else 0.0,
                    every_piece=pace,
                )
            )
        finally:
            pieces.close()
            generation_slots.release()
            session.stop_requested = False

    def feed(self, piece) -> None:
        """Parse one streamed piece: its token ids (its text when the parse reads text)."""
        self.tokens += len(piece.ids)
        feed_piece(self.live, piece)

    def draw(self) -> dict:
        """An update outlining the text and events added since the one before."""
        session, live = self.session, self.live
        session.view = view = self.view(live.feeds - self.shown_feeds)
        self.shown_feeds = live.feeds
        session.display.log_page = 10**9  # follow the newest events
        shown = render(view, session, note=self.model_note, progress=f"{self.tokens} tokens")
        return {**shown, **self.chosen, "model_note": self.model_note}

    def finished(self, end: PacedEnd, prefix: str, template_text: str, tools_text: str) -> dict:
        """Finalize the parse (also after Stop) and give the last update: the panels, the prompt
        as prefix, the generation, and a replay of it set to step through the model's tokens."""
        live, session = self.live, self.session
        live.finalize()
        session.view = session.last_good = view = self.view()
        note = self.model_note
        if end.stopped:
            seconds = limits.current().generate_seconds
            why = (
                f" (the time budget PLAYGROUND_LIMITS generate_seconds, {seconds:g} s)"
                if end.out_of_time
                else ""
            )
            cut = region_cut_by_stop(view)
            note = (
                f"■ Stopped after {self.tokens} tokens{why}; the text so far is parsed as if "
                f"generation had ended.{' ' + cut if cut else ''} {note}"
            )
        elif self.constraint is not None and self.constraint.problem:
            note = (
                "■ The constraint ended the output: its grammar passed a parser limit of this "
                f"server ({self.constraint.problem}); the text so far is parsed. {note}"
            )
        session.replay = None
        generated = live.generation
        cuts = [offset - live.tail_length for offset in live.chunk_ends[:-1]]
        session.generated = (generated, cuts)
        session.live_output = live_example(prefix, generated, tools_text)
        template_text = self.chosen.get("template_text", template_text)
        pieces = max(1, len(cuts) + 1)
        return {
            **render(view, session, note=note),
            **self.chosen,
            "prefix": prefix,
            "generation": generated,
            "model_note": note,
            "chunking": "tokens",  # a replay of this text steps through the model's own tokens
            # The scrubber at the end of this run's pieces (not a previous replay's position).
            "scrubber": Update(value=pieces, maximum=pieces),
            **derived_views(session, WorkspaceInputs(template_text, prefix, generated, tools_text)),
        }


@produces("test_cases_text", "test_results", "live_example_note")
def use_live_output(template_text: str, test_cases_text: str, session: Session) -> dict:
    """Use as example: the last output generated live (its prompt, what the model wrote, the
    tools it was given) becomes one of the author's test cases, so Infer sends it as an example.
    Its expected message is the parse shown; when that parse had errors or warnings (or is not
    of this output) the case is unverified (`unverified_note`): until the author confirms its
    message, inference gets the output and its tools only."""
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
    of_this_output = view is not None and view.stream.endswith(live["output"])
    message = view.message if of_this_output else None
    reasons = wrong_parse_reasons(view, session) if of_this_output else []
    if message is None:
        reasons.append("no parse of this output is shown")
    mine = author_cases(cases)
    case = {
        "name": f"live output {len(mine) + 1}",
        "source": "output",
        "prefix": live["prefix"],
        "generation": live["output"],
        "expected": message or {},
    }
    if note := unverified_note(reasons):
        case["check"] = note
    if live.get("tools"):
        case["tools"] = live["tools"]
    text = cases_text([*mine, case, *(c for c in cases if c not in mine)])
    session.test_cases_text = text
    sent = (
        "the output and the tools it was given (confirm its message in Tests to send that too)"
        if "check" in case
        else "the output, the tools it was given and the message it parsed to"
    )
    return {
        "test_cases_text": text,
        "test_results": tests_panel(template_text, text, session),
        "live_example_note": f"✔ Added to Tests as {case['name']!r}, one of your outputs: Infer "
        f"(Start from a model) sends it as an example, {sent}.",
    }
