"""Live generation: load a chat model, render a prompt, stream its output.

The only module of the project that imports torch and transformers' models;
the engine never needs them. Built for a UI that drives one generation at a
time:

    loaded = load_model(DEFAULT_MODEL_PATH)
    template, reason = choose_template(loaded)
    prompt = render_prompt(loaded, messages, tools, enable_thinking=True)
    parser = ResponseParser(template, prefix=prompt.text, tools=tools)
    for piece in stream_generation(loaded, prompt, max_new_tokens=200, seed=0):
        events = parser.feed(piece.text)

`prompt.text` is the exact text the model was given (special tokens kept),
which is what the parser needs as its prefix: chat templates may pre-write
part of the answer, such as an opening `<think>`.

torch and transformers are imported by the first `load_model`, not by
importing this module: together they take a few seconds, which a UI can
spend in the background while it already shows a page
(`playground.model.background.BackgroundLoad`).

`ModelLoadError` (a model or tokenizer that cannot be loaded or cannot chat; the message
says what to do) is the engine's own (`engine.chat_templates.render`), so the page
catches one class whether a check or a Generate failed to load.
"""

from __future__ import annotations

import queue
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.chat_templates.render import ModelLoadError
from engine.tokenizer import IncrementalDecoder

from ..parse.token_reading import DEMO_MODEL_PATH

if TYPE_CHECKING:
    import torch

DEFAULT_MODEL_PATH = DEMO_MODEL_PATH

# Tokens decoded together with each new one, so tokenizers that render a
# token differently at the start of a string (SentencePiece's leading space)
# still give the right text: the piece is the difference of two decodes.
_DECODE_CONTEXT = 4


class PromptRenderError(ValueError):
    """The chat template refused or failed to render a conversation; the message is the template's."""


@dataclass(frozen=True)
class LoadedModel:
    """A model ready to generate.

    - `name`: what was asked for (local folder or hub id), as a string.
    - `model`: the transformers causal LM, in eval mode.
    - `tokenizer`: its tokenizer; it has a chat template.
    - `device`: where the inputs go (`torch.device`).
    - `load_seconds`: wall-clock time the load took, in seconds (the first
      load in a process includes importing torch and transformers).
    - `stage_seconds`: that time per stage, as (stage, seconds) pairs in
      order (the stages of LOAD_STAGES that ran).
    - `chosen`: the response template chosen for it and why (`choose_template`), once asked.
    """

    name: str
    model: Any
    tokenizer: Any
    device: torch.device
    load_seconds: float
    stage_seconds: tuple[tuple[str, float], ...] = ()
    chosen: list[tuple[dict, str]] = field(
        default_factory=list, compare=False, repr=False
    )  # `choose_template`'s answer


# What load_model does, in order; progress reports name the current one.
LOAD_STAGES = (
    "Importing torch and transformers",
    "Loading the tokenizer",
    "Loading the weights",
)


@dataclass(frozen=True)
class LoadProgress:
    """How far a model load is.

    - `fraction`: stages finished over all stages, in [0, 1] (1.0 only when
      the load ended, successfully or not);
    - `stage`: what is happening now, a short phrase for the user (one of
      LOAD_STAGES, then "Ready" or "Failed");
    - `seconds`: wall-clock time since the load began;
    - `done`: the load ended;
    - `error`: the ModelLoadError message when it failed, else None.
    """

    fraction: float
    stage: str
    seconds: float
    done: bool = False
    error: str | None = None


@dataclass(frozen=True)
class Prompt:
    """The exact prompt given to the model.

    - `text`: the rendered chat template, special tokens included; pass it as
      the parser's `prefix`.
    - `ids`: its token ids (list of int), as fed to the model.
    """

    text: str
    ids: list[int]


@dataclass(frozen=True)
class GeneratedPiece:
    """A stretch of generated output: `ids` (tuple of token ids, possibly
    several when a character spans tokens) and `text`, their decoded text
    (str, never a split character; special tokens kept)."""

    ids: tuple[int, ...]
    text: str


def _looks_like_path(name: str) -> bool:
    """Hub ids are `name` or `owner/name`; anything else is meant as a folder."""
    return name.startswith((".", "~")) or not re.fullmatch(r"[\w.-]+(/[\w.-]+)?", name)


def load_model(
    name: str | Path = DEFAULT_MODEL_PATH, *, progress: Callable[[LoadProgress], None] | None = None
) -> LoadedModel:
    """Load a causal LM and its tokenizer from a local folder or a hub id.

    With CUDA available the weights are placed by accelerate
    (`device_map="auto"`), otherwise they stay on the CPU; `dtype="auto"`
    keeps the dtype the checkpoint was saved in (16-bit for the demo model).

    Args:
        name: a folder holding `config.json`, weights and tokenizer files, or
            a Hugging Face hub id such as "HuggingFaceTB/SmolLM3-3B".
        progress: called with a `LoadProgress` as each stage of LOAD_STAGES
            begins, from the loading thread (keep it quick; it must not
            raise). It is not called once the load ends: the return value
            or the exception says how it ended.

    Returns:
        A `LoadedModel`.

    Raises:
        ModelLoadError: the folder does not exist or is not a model folder;
            the hub id cannot be fetched (unknown id, no network, offline
            mode); the tokenizer has no chat template.
    """
    name = str(name)
    folder, source = _model_source(name)
    started = time.perf_counter()
    stage_starts: list[float] = []

    def begin(index: int) -> None:  # index == len(LOAD_STAGES): all done
        stage_starts.append(time.perf_counter())
        if index < len(LOAD_STAGES) and progress is not None:
            progress(
                LoadProgress(
                    index / len(LOAD_STAGES), LOAD_STAGES[index], stage_starts[-1] - started
                )
            )

    begin(0)
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    placement = {"device_map": "auto"} if torch.cuda.is_available() else {}
    try:
        begin(1)
        tokenizer = AutoTokenizer.from_pretrained(source)
        if not getattr(tokenizer, "chat_template", None):
            raise ModelLoadError(
                f"{name!r} has no chat template, so conversations cannot be rendered into a prompt. Use an "
                "instruct/chat variant of the model, or set `chat_template` in its tokenizer_config.json."
            )
        begin(2)
        model = AutoModelForCausalLM.from_pretrained(source, dtype="auto", **placement)
        begin(3)
    except OSError as error:  # missing files, unknown repo, no network
        raise _unreadable(name, folder, error) from error
    except ValueError as error:  # e.g. an architecture this transformers version does not know
        raise ModelLoadError(
            f"{name!r} is not a causal language model this transformers version can load: {error}\n"
            "Pick a text-generation (causal LM) checkpoint, or upgrade transformers."
        ) from error
    model.eval()
    return LoadedModel(
        name=name,
        model=model,
        tokenizer=tokenizer,
        device=model.device,
        load_seconds=time.perf_counter() - started,
        stage_seconds=tuple(
            (stage, end - start)
            for stage, start, end in zip(LOAD_STAGES, stage_starts, stage_starts[1:])
        ),
    )


def _model_source(name: str) -> tuple[Path, str]:
    """`(folder, what from_pretrained reads)` for a model name: a model folder, or a hub id
    (checked to fail in seconds when the Hub is out of reach, `playground.model.hub`).

    Raises ModelLoadError: a folder without config.json, a path to no folder, a hub id that
    cannot be fetched."""
    folder = Path(name).expanduser()
    if folder.exists():
        if not (folder / "config.json").is_file():
            raise ModelLoadError(
                f"{name!r} is not a model folder (no config.json). Point at the folder that holds config.json, "
                "the weights and the tokenizer files, e.g. samples/demo-model."
            )
    elif _looks_like_path(name):
        raise ModelLoadError(
            f"no folder {name!r}. Check the path, or leave the field empty to use the bundled demo model "
            "(samples/demo-model)."
        )
    else:
        from .hub import HubError, check_hub_id

        try:
            folder = check_hub_id(name) or folder
        except HubError as error:
            raise ModelLoadError(str(error)) from None
    return folder, str(folder) if folder.exists() else name


def _unreadable(name: str, folder: Path, error: OSError) -> ModelLoadError:
    """The error for files transformers could not read (missing files, unknown repo, no
    network), with what to do about it."""
    if folder.exists():
        advice = "Check that the folder holds complete weights and tokenizer files (save them with save_pretrained)."
    else:
        advice = (
            "Check the id's spelling and the network (this machine may have none; HF_HUB_OFFLINE=1 forbids "
            "downloads). Without network, download the model elsewhere, copy its folder here and give the "
            "path. The bundled demo model needs no network: samples/demo-model."
        )
    where = f"the folder {name!r}" if folder.exists() else "the Hugging Face Hub"
    return ModelLoadError(f"could not load {name!r} from {where}: {error}\n{advice}")


def render_prompt(
    loaded: LoadedModel,
    messages: Sequence[dict],
    tools: Sequence[dict] | None = None,
    *,
    enable_thinking: bool = False,
    seconds: float | None = None,
    max_tokens: int | None = None,
) -> Prompt:
    """Render a conversation with the tokenizer's chat template (sandboxed Jinja).

    Args:
        loaded: from `load_model`.
        messages: chat messages, `{"role": ..., "content": ...}` dicts (assistant
            turns may carry `tool_calls` and `reasoning_content`).
        tools: JSON-schema tool dicts (or None), as for `apply_chat_template`.
        enable_thinking: passed to the template; templates that know it may
            pre-write an opening reasoning tag into the generation prompt.
        seconds: render in a worker process killed after this long (`playground.server.workers`:
            a model's chat template is code from its repository and may loop), or None to
            render here.
        max_tokens: the longest prompt allowed (tokens), or None.

    Returns:
        The `Prompt` (text and ids) with the generation prompt appended.

    Raises:
        PromptRenderError: the template fails to render these messages (its
            message is included), runs past `seconds`, or the prompt is over `max_tokens`.
    """
    tokenizer = loaded.tokenizer
    if seconds is not None:
        text = _render_in_worker(loaded, messages, tools, enable_thinking, seconds)
    else:
        try:
            text = tokenizer.apply_chat_template(
                list(messages),
                tools=list(tools) if tools else None,
                tokenize=False,
                add_generation_prompt=True,
                enable_thinking=enable_thinking,
            )
        except (
            Exception
        ) as error:  # Jinja errors of any kind, including the template's own raise_exception
            raise PromptRenderError(
                f"the chat template of {loaded.name!r} could not render this conversation: {error}"
            ) from error
    # The template already wrote any BOS token; adding special tokens again would double it.
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    if max_tokens is not None and len(ids) > max_tokens:
        raise PromptRenderError(
            f"the prompt is {len(ids):,} tokens long (limit {max_tokens:,}, PLAYGROUND_LIMITS prompt_tokens): "
            "shorten the messages or the tools."
        )
    return Prompt(text=text, ids=list(ids))


def render_job(payload: dict) -> dict:
    """`render_prompt` in a worker process: transformers' sandboxed `render_jinja_template`, as
    `apply_chat_template` calls it, on the chat template and keywords the server sent; returns {"text"}."""
    from transformers.utils.chat_template_utils import render_jinja_template

    from ..server.workers import JobError

    try:
        rendered, _ = render_jinja_template(
            conversations=[payload["messages"]],
            tools=payload["tools"],
            documents=None,
            chat_template=payload["chat_template"],
            return_assistant_tokens_mask=False,
            continue_final_message=False,
            add_generation_prompt=True,
            **payload["keywords"],
        )
    except MemoryError:
        raise
    except (
        Exception
    ) as error:  # Jinja errors of any kind, including the template's own raise_exception
        from ..server.redact import redact

        raise JobError(redact(str(error)) or "the chat template raised an error") from None
    return {"text": rendered[0]}


def _render_in_worker(
    loaded: LoadedModel,
    messages: Sequence[dict],
    tools: Sequence[dict] | None,
    enable_thinking: bool,
    seconds: float,
) -> str:
    """What `apply_chat_template` renders, in a worker: the tokenizer picks the chat template and
    gives its special tokens here; the messages lose their None values, as it does."""
    from ..server.folders import shown
    from ..server.workers import run_job

    tokenizer = loaded.tokenizer
    tools = list(tools) if tools else None
    payload = {
        "chat_template": tokenizer.get_chat_template(None, tools),
        "keywords": {**tokenizer.special_tokens_map, "enable_thinking": bool(enable_thinking)},
        "messages": [
            {key: value for key, value in message.items() if value is not None}
            for message in messages
        ],
        "tools": tools,
    }
    outcome = run_job("chat_template", payload, seconds=seconds)
    name = shown(loaded.name)
    if outcome.cut_off:
        raise PromptRenderError(
            f"the chat template of {name!r} was stopped after {seconds:g} s (the time budget PLAYGROUND_LIMITS "
            "chat_template_seconds): it takes too long to render this conversation, or loops"
        )
    if outcome.error:
        raise PromptRenderError(
            f"the chat template of {name!r} could not render this conversation: {outcome.error}"
        )
    return outcome.result["text"]


class _CancelCriteria:
    """Stops `generate` after the current step once any of `events` is set
    (a transformers StoppingCriteria, by its call signature)."""

    def __init__(self, events: Sequence[threading.Event]):
        self.events = events

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs) -> torch.BoolTensor:
        cancelled = any(event.is_set() for event in self.events)
        return input_ids.new_full((input_ids.shape[0],), cancelled).bool()


class _TokenQueue:
    """Receives token ids from `generate` (the first call is the prompt,
    skipped); a transformers streamer, by its `put`/`end` methods."""

    _END = object()

    def __init__(self) -> None:
        self.tokens: queue.Queue = queue.Queue()
        self._prompt_seen = False

    def put(self, value: torch.Tensor) -> None:
        if not self._prompt_seen:
            self._prompt_seen = True
            return
        for token_id in value.reshape(-1).tolist():
            self.tokens.put(token_id)

    def end(self) -> None:
        self.tokens.put(self._END)


def stream_generation(
    loaded: LoadedModel,
    prompt: Prompt,
    *,
    max_new_tokens: int = 256,
    temperature: float = 0.7,
    top_p: float = 0.9,
    seed: int | None = None,
    stop_strings: Sequence[str] = (),
    cancel: threading.Event | None = None,
    logits_processors: Sequence[Callable] = (),
) -> Iterator[GeneratedPiece]:
    """Generate in a background thread and yield the output as it arrives.

    Args:
        loaded: from `load_model`.
        prompt: from `render_prompt`.
        max_new_tokens: at most this many tokens are generated (int >= 1).
        temperature: sampling temperature; 0 means greedy decoding.
        top_p: nucleus sampling mass in (0, 1]. Top-k filtering is off,
            whatever the model's generation_config says, so that these two
            knobs alone decide the sampling.
        seed: seeds torch's global RNG before sampling (reproducible output
            for one generation at a time), or None.
        stop_strings: generation ends once the text contains one of these;
            the stop string is part of the output.
        cancel: set this event (from any thread) to stop mid-way; the thread
            stops after the token being computed.
        logits_processors: logits processors for this generation (`constrained_processor`).

    Yields:
        `GeneratedPiece`s. Their texts concatenate to the decoded generation
        (special tokens kept, the EOS token included when the model wrote
        it). A multi-byte character split across tokens is held back until
        it is complete.

    Raises:
        ValueError: `max_new_tokens` < 1, or `temperature` < 0.
        Any error `generate` raised in the thread is re-raised here.

    Closing the iterator early (break, `.close()`) also stops the thread.
    """
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    import torch  # already imported by load_model
    from transformers import LogitsProcessorList, StoppingCriteriaList

    stop = threading.Event()
    streamer = _TokenQueue()
    failure: list[BaseException] = []
    criteria = StoppingCriteriaList([_CancelCriteria([stop] if cancel is None else [stop, cancel])])
    sampling = {"do_sample": True, "temperature": temperature, "top_p": top_p}
    sampling = sampling if temperature > 0 else {"do_sample": False}
    processors = LogitsProcessorList(logits_processors) if logits_processors else None
    model = loaded.model
    input_ids = torch.tensor([prompt.ids], device=loaded.device)

    def run() -> None:
        try:
            if seed is not None:
                torch.manual_seed(seed)
            with torch.inference_mode():
                model.generate(
                    input_ids=input_ids,
                    attention_mask=torch.ones_like(input_ids),
                    max_new_tokens=max_new_tokens,
                    stopping_criteria=criteria,
                    stop_strings=list(stop_strings) or None,
                    tokenizer=loaded.tokenizer if stop_strings else None,
                    streamer=streamer,
                    top_k=None,
                    logits_processor=processors,
                    **sampling,
                )
        except BaseException as error:  # handed to the consumer, which re-raises it
            failure.append(error)
            streamer.end()

    thread = threading.Thread(target=run, name="generation", daemon=True)
    thread.start()
    try:
        yield from _decode_stream(loaded.tokenizer, prompt.ids[-_DECODE_CONTEXT:], streamer)
        if failure:
            raise failure[0]
    finally:
        stop.set()  # the consumer left early: end the thread too
        thread.join()


def _decode_stream(
    tokenizer, context_ids: list[int], streamer: _TokenQueue
) -> Iterator[GeneratedPiece]:
    """Turn the streamed token ids into text pieces that never split a character.

    Ids whose text is still incomplete wait for the next token (see
    `engine.tokenizer.IncrementalDecoder`); the end flushes whatever is left.
    """
    decoder = IncrementalDecoder(tokenizer, context=context_ids, context_tokens=_DECODE_CONTEXT)
    pending: list[int] = []
    while (token_id := streamer.tokens.get()) is not _TokenQueue._END:
        pending.append(token_id)
        text = decoder.push([token_id])
        if text:
            yield GeneratedPiece(ids=tuple(pending), text=text)
            pending = []
    if pending:
        yield GeneratedPiece(ids=tuple(pending), text=decoder.flush())


# The engine that constrains generation (measured on this project's CPU machine with the demo
# model: scripts/bench_grammar.py --generation; docs/serving.md gives the figures).
GRAMMAR_ENGINE = "llguidance"


def constrained_processor(
    loaded: LoadedModel,
    template: dict,
    tools: Sequence[dict] | None,
    prompt: Prompt,
    *,
    tool_choice: Any = "auto",
    parallel_tool_calls: bool = True,
    engine: str = GRAMMAR_ENGINE,
    budget=None,
    parser_limits: dict | None = None,
):
    """A logits processor that keeps the output inside the grammar of `template`.

    Args:
        loaded: from `load_model`.
        template: the response template the output is read with.
        tools: the tools offered in the prompt (their schemas constrain the arguments).
        prompt: the rendered prompt (what it pre-wrote decides where the grammar starts).
        tool_choice, parallel_tool_calls: as a chat-completion request gives them.
        engine: ``"llguidance"`` (the Lark form) or ``"xgrammar"`` (the structural tag).
        budget: an `engine.grammar.GrammarBudget` for deriving and writing the grammar (the
            server's: a visitor's template and tools), or None.
        parser_limits: llguidance's parser limits for compiling and matching (llguidance only;
            `engine.grammar.matching.SERVING_PARSER_LIMITS` for a visitor's grammar), or None.

    Returns:
        `(processor, derived)`: a `engine.grammar.matching.GrammarLogitsProcessor` for one
        `stream_generation` call, or None when no grammar honours the request (also when
        deriving it spent `budget`: `derived.too_large`); and the
        `engine.grammar.DerivedGrammar` (its `notes` and `unconstrainable` say what and why).

    Raises:
        ImportError: the grammar engine is not installed (``pip install .[grammar]``).
        ValueError: a malformed tool or tool choice, or a grammar the engine refuses (past a
            parser limit, the message names the limit).
        engine.grammar.GrammarTooLarge: writing the grammar spent `budget`.
    """
    from engine.grammar import derive_grammar
    from engine.grammar.matching import GrammarLogitsProcessor, compile_grammar

    derived = derive_grammar(
        template,
        list(tools or []),
        tool_choice,
        parallel_tool_calls,
        prefix=prompt.text,
        budget=budget,
    )
    if not derived.ok:
        return None, derived
    vocab = getattr(loaded.model.config, "vocab_size", None)
    compiled = compile_grammar(
        derived, loaded.tokenizer, engine, vocab_size=vocab, parser_limits=parser_limits
    )
    return GrammarLogitsProcessor(compiled), derived


def choose_template(loaded: LoadedModel) -> tuple[dict, str]:
    """The response template to parse this model's output with, and why.

    The tokenizer's own `response_template` when it has one; else `engine.choose_template` on
    its chat template, in a worker (a chat template is code, and a hub model's may loop): a
    `templates/` file that passes the conformance check against it (those whose `models` list
    this model, then the family rules' proposal, then any whose start anchor is in its
    prompts), else the template inferred from the chat template. Chosen once a load.

    Returns:
        (response template dict, reason: one sentence for the user).

    Raises:
        LookupError: nothing fits (the chat template renders nothing, or the worker ran out of
            time); the message says why.
    """
    own = getattr(loaded.tokenizer, "response_template", None)
    if own:
        return own, "its tokenizer_config.json ships a response_template, used as it is"
    if loaded.chosen:
        return loaded.chosen[0]
    from ..server import limits
    from ..server.folders import shown
    from ..server.workers import run_job

    chat_template = loaded.tokenizer.chat_template or ""
    if isinstance(
        chat_template, dict
    ):  # several named templates: the default one, as apply_chat_template uses
        chat_template = chat_template.get("default") or next(iter(chat_template.values()), "")
    payload = {
        "chat_template": chat_template,
        "bos_token": loaded.tokenizer.bos_token or "",
        "eos_token": loaded.tokenizer.eos_token or "",
        "model_name": loaded.name,
        "model_type": getattr(loaded.model.config, "model_type", "") or "",
        "seconds": limits.current().conformance_seconds,
    }
    outcome = run_job("choose", payload, seconds=payload["seconds"])
    if outcome.result is None:
        raise LookupError(
            f"no response template for {shown(loaded.name)}: its tokenizer has none, and choosing one from "
            f"its chat template failed ({outcome.error}). Write one in the template editor, or pick a file by hand."
        )
    loaded.chosen.append((outcome.result["template"], outcome.result["reason"]))
    return loaded.chosen[0]


def choose_job(payload: dict) -> dict:
    """`engine.choose_template` in a worker: {"template", "reason"} for the chat template of `payload`."""
    from engine.chat_templates.infer import InferenceError, choose_template

    from ..server.redact import redact
    from ..server.workers import JobError

    try:
        template, reason = choose_template(
            payload["chat_template"],
            bos_token=payload["bos_token"],
            eos_token=payload["eos_token"],
            model_name=payload["model_name"],
            model_type=payload["model_type"],
            time_budget=payload["seconds"],
        )
    except (InferenceError, ValueError) as error:
        raise JobError(redact(str(error))) from None
    return {"template": template, "reason": reason}
