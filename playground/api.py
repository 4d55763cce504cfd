"""The public API: stable, JSON-in JSON-out endpoints for scripts and `gradio_client`.

`app.py` publishes each function with `gr.api` under its own name (`/parse`,
`/replay`, `/generate`, `/lint`, `/export`, `/load_sample`, `/conformance`); the page's own
listeners are private. Every endpoint takes the page's inputs by the same
names (`template_text`, `prefix`, `generation`, `tools_text`) and never
raises for bad input: the result's `error` says what was wrong.

    from gradio_client import Client
    client = Client("http://127.0.0.1:7860/")
    result = client.predict(template_text, prefix, generation, "", api_name="/parse")
    result["message"]
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import time
from collections.abc import Callable, Iterator

from engine import TemplateError, load_template

from .authoring.chat_template_check import check_from_page
from .authoring.diagnostics import findings
from .authoring.export import check_config_size, config_pieces, for_target, merged_config
from .authoring.stream_check import stream_check
from .catalog import samples_by_id, template_names, template_text_of
from .panels.status import parse_judgement
from .parse.chunking import make_chunks, parse_chunking_param
from .parse.parse_view import LiveParse, ParseView, traced_view
from .server import limits
from .server.admission import make_way
from .server.downloads import answer_text
from .server.input_readers import (
    InputError,
    check_text_sizes,
    check_unicode,
    read_template,
    read_tools,
)
from .server.limits import json_kind
from .server.redact import redact

# A replay looks at its time budget every this many chunks.
DEADLINE_EVERY = 1024
# Events a result carries at most (the first ones); `events_total` says how many there were.
EVENTS_RETURNED = 100_000


def _events(view: ParseView) -> dict:
    """The result's events: the first EVENTS_RETURNED, and how many there are in all."""
    events = view.events
    return {
        "events": [logged.event for logged in events[:EVENTS_RETURNED]],
        "events_total": len(events),
    }


# What each parameter is, for the message when a client sends the wrong type.
_LABELS = {
    "template_text": "The template",
    "prefix": "The prefix",
    "generation": "The generation",
    "tools_text": "The tools JSON",
    "chunking": "The chunking",
    "sample_id": "The sample id",
    "tokenizer_config_text": "The tokenizer_config.json text",
    "user": "The user message",
    "model_name": "The model name",
    "system": "The system message",
    "messages_text": "The messages JSON",
}


def _coerced(name: str, kind: str, value):
    """`value` of parameter `name` as its annotation `kind` says, or InputError naming it."""
    if kind == "str":
        if value is None:
            return ""
        if not isinstance(value, str):
            raise InputError(f"{_LABELS.get(name, name)} must be text, got {json_kind(value)}.")
        check_unicode(value, _LABELS.get(name, name))
        return value
    if kind == "bool":
        return bool(value)
    if kind in ("int", "float"):
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = None
        if (
            isinstance(value, bool)
            or number is None
            or number != number
            or number in (float("inf"), float("-inf"))
        ):
            what = "a whole number" if kind == "int" else "a number"
            raise InputError(
                f"{name} must be {what}, got {json.dumps(value)[:40] if not isinstance(value, str) else repr(value[:40])}."
            )
        if kind == "int":
            if number != int(number):
                raise InputError(f"{name} must be a whole number, got {value}.")
            return int(number)
        return number
    return value


def _endpoint(error_result: Callable[[str], object]):
    """Make a public function safe for any client: arguments of the wrong type get a message
    naming the parameter, and an unexpected failure becomes an error result (the traceback
    goes to the server log), never a bare exception. `error_result(message)` is the
    endpoint's answer for an error; a generator endpoint yields it."""

    def decorate(function):
        signature = inspect.signature(function)

        def coerced(args, kwargs) -> dict:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return {
                name: _coerced(name, str(signature.parameters[name].annotation), value)
                for name, value in bound.arguments.items()
            }

        def unexpected(error: Exception):
            logging.getLogger(__name__).exception("the %s endpoint failed", function.__name__)
            return error_result(
                f"unexpected error in {function.__name__} (the server log has the details)"
            )

        if inspect.isgeneratorfunction(function):

            @functools.wraps(function)
            def run_generator(*args, **kwargs):
                try:
                    arguments = coerced(args, kwargs)
                except (InputError, TypeError) as error:
                    yield error_result(redact(str(error)))
                    return
                try:
                    yield from function(**arguments)
                except Exception as error:
                    yield unexpected(error)

            return run_generator

        @functools.wraps(function)
        def run(*args, **kwargs):
            try:
                return function(**coerced(args, kwargs))
            except (InputError, TypeError) as error:
                return error_result(redact(str(error)))
            except Exception as error:
                return unexpected(error)

        return run

    return decorate


def _parse_error(message: str) -> dict:
    message = redact(message)
    return {"status": message, "message": None, "error": message}


def _replay_error(message: str) -> dict:
    return {"chunks": 0, "message": None, "error": redact(message)}


def _generate_error(message: str) -> dict:
    return {"generation": "", "message": None, "error": message, "finished": True, "prefix": ""}


def _status(view: ParseView) -> str:
    """The first error, or the page status line's judgement (`parse_judgement`): "Parsed: <keys>",
    "Parsed, but text was probably lost (<why>): <keys>", "Does not fit: <why>"."""
    if view.error:
        return redact(view.error)
    return redact(parse_judgement(view)[1])


def _result(view: ParseView) -> dict:
    return {
        "status": _status(view),
        "message": view.message,
        "error": redact(view.error) if view.error else None,
        "errors": [
            {
                "message": redact(e.message),
                "field": e.field,
                "key": e.key,
                "start": e.start,
                "end": e.end,
                "position": e.position,
            }
            for e in view.errors
        ],
        "warnings": [str(w) for w in view.warnings],
        "initial_events": view.initial_events,
        **_events(view),
        "spans": [
            {
                "start": s.stream_start,
                "end": s.stream_end,
                "kind": s.kind,
                "field": s.field,
                "region": s.region,
            }
            for s in view.spans
        ],
    }


@_endpoint(_parse_error)
def parse(template_text: str, prefix: str, generation: str, tools_text: str = "") -> dict:
    """Parse a generation with a response template.

    Args:
        template_text: the response template, as JSON text.
        prefix: the prompt text sent before the generation ("" for none).
        generation: the raw model output.
        tools_text: tool schemas as JSON text (a list), or "".

    Returns:
        {"status", "message", "error", "errors", "warnings", "initial_events", "events", "events_total", "spans"}:
        `status` is the first error, or the page status line's judgement ("Parsed: <keys>",
        "Parsed, but text was probably lost (<why>): <keys>" when a region was probably lost,
        "Does not fit: <why>"); `message` is None and `error` says why when the input or the
        parse fails; events
        carry stream offsets (the first 100,000; `events_total` counts them all); spans tile
        the stream (prefix tail, then the generation).
    """
    try:
        template = read_template(template_text)
        tools = read_tools(tools_text)
        check_text_sizes(prefix or "", generation or "")
        return _result(traced_view(template, prefix or "", generation or "", tools))
    except (InputError, TemplateError, ValueError) as error:
        return _parse_error(str(error))


@_endpoint(_replay_error)
def replay(
    template_text: str,
    prefix: str,
    generation: str,
    tools_text: str = "",
    chunking: str = "chars:1",
) -> dict:
    """Feed the generation chunk by chunk and check streaming against one-shot parsing.

    Args:
        template_text, prefix, generation, tools_text: as for `/parse`.
        chunking: `chars:N`, `random:SEED`, `points:5,9` or `tokens`.

    Returns:
        {"chunks", "message", "error", "events", "events_total", "stream_check": {"passed", "label", "findings"}}:
        `events` are the first 100,000 (`events_total` counts them all).
    """
    try:
        template = read_template(template_text)
        tools = read_tools(tools_text)
        check_text_sizes(prefix or "", generation or "")
        settings = parse_chunking_param(chunking)
        if "problem" in settings:
            raise InputError(settings["problem"])
        chunks = make_chunks(
            generation or "",
            settings["how"],
            settings.get("size", 1),
            settings.get("seed", 0),
            settings.get("points", ""),
        )
        ends = limits.deadline("replay_seconds")
        live = LiveParse(template, prefix or "", tools, deadline=ends)
        for number, chunk in enumerate(chunks):
            if not number % DEADLINE_EVERY:
                if time.perf_counter() > ends:
                    raise InputError(
                        limits.over_budget(
                            "replay_seconds", f"The replay (at chunk {number:,} of {len(chunks):,})"
                        )
                    )
                make_way()
            live.feed(chunk)
        live.finalize()
        view = live.view()
        checked = stream_check(
            template, prefix or "", generation or "", tools, chunks, deadline=ends
        )
    except (InputError, TemplateError, ValueError) as error:
        return _replay_error(str(error))
    return {
        "chunks": len(chunks),
        "message": view.message,
        "error": redact(view.error) if view.error else None,
        **_events(view),
        "stream_check": {
            "passed": checked.passed,
            "label": checked.label,
            "findings": [{"severity": f.severity, "text": f.text} for f in checked.findings],
        },
    }


@_endpoint(
    lambda message: [
        {
            "severity": "error",
            "code": "input",
            "json_path": "",
            "message": message,
            "suggestion": "",
            "fix": "",
            "fixed_template": None,
        }
    ]
)
def lint(template_text: str) -> list[dict]:
    """The template's diagnostics, errors first: validation (with "did you mean"), then lint.

    Returns:
        [{"severity", "code", "json_path", "message", "suggestion", "fix", "fixed_template"}]: `json_path`
        is where in the template (a key named "path" would make gradio_client take each finding for
        a file to download); `fix` says what the one-click fix does ("" for none) and `fixed_template`
        is the template with it applied.
    """
    return [
        {
            "severity": f.severity,
            "code": f.code,
            "json_path": f.path,
            "message": f.message,
            "suggestion": f.suggestion,
            "fix": f.fix_label,
            "fixed_template": f.fixed,
        }
        for f in findings(template_text)
    ]


@_endpoint(lambda message: {"error": message})
def export(
    template_text: str, tokenizer_config_text: str = "", target: str = "transformers"
) -> dict:
    """The template as file texts, merged into a tokenizer_config.json when one is given.

    Args:
        template_text: the response template, as JSON text.
        tokenizer_config_text: the model's tokenizer_config.json text; its other keys are kept.
        target: the runtime to write for: ``transformers`` (as is), ``vllm``, ``sglang``
            (``reasoning_content`` renamed ``thinking``) or ``vllm-rust``.

    Returns:
        {"response_template.json", "tokenizer_config.json", "changes", "refused", "error"}:
        `changes` lists what was rewritten, `refused` what the runtime still refuses.
    """
    try:
        check_config_size(len(tokenizer_config_text))
        template = read_template(template_text)
        load_template(template)
        template, changes, remaining = for_target(template, target or "transformers")
        config = merged_config(
            template, tokenizer_config_text if tokenizer_config_text.strip() else None
        )
        config_text = answer_text(config_pieces(config), "The exported tokenizer_config.json")
    except (InputError, TemplateError) as error:
        return {"error": redact(str(error))}
    return {
        "response_template.json": template_text_of(template) + "\n",
        "tokenizer_config.json": config_text,
        "changes": changes,
        "refused": [f"{f.path}: {f.message}" for f in remaining if f.severity == "error"],
        "error": None,
    }


@_endpoint(lambda message: {"error": message})
def load_sample(sample_id: str) -> dict:
    """One shipped sample case and its parse.

    Returns:
        {"sample_id", "template_text", "template_name", "prefix", "generation", "tools_text",
        "status", "message", "error", ...the `/parse` keys}; an unknown id gives only `error`.
    """
    sample = samples_by_id().get(sample_id)
    if sample is None:
        return {
            "error": f"No sample {sample_id!r}; known samples: {', '.join(list(samples_by_id())[:5])}, ..."
        }
    view = traced_view(sample.template, sample.prefix, sample.generation, sample.tools)
    return {
        "sample_id": sample.id,
        "template_text": template_text_of(sample.template),
        "template_name": sample.template_name if sample.template_name in template_names() else None,
        "prefix": sample.prefix,
        "generation": sample.generation,
        "tools_text": template_text_of(sample.tools) if sample.tools else "",
        **_result(view),
    }


@_endpoint(lambda message: {"passed": False, "error": message, "situations": []})
def conformance(
    template_text: str,
    chat_template_text: str = "",
    chat_template_model: str = "",
    bos_token: str = "",
    eos_token: str = "",
) -> dict:
    """Check a response template against a chat template: every conversation situation.

    Args:
        template_text: the response template, as JSON text.
        chat_template_text: the chat template's Jinja text; or "" and
        chat_template_model: a local folder or a hub id whose tokenizer holds it (tokenizer
            files only; without network a hub id fails in seconds). The pasted text wins.
        bos_token, eos_token: what the chat template writes as bos_token / eos_token ("": none
            for a pasted template, the tokenizer's own for a model).

    Returns:
        {"passed", "counts": {"passed", "failed", "not_renderable"}, "thinking_switch", "diagnostics",
        "situations": [{"name", "passed", "renderable", "detail", "expected", "got", "prompt", "generation",
        "normalisations"}], "error", "cut_off", "seconds", "source", "notes"}: `error` says why there is
        no report; `cut_off` is True when the check ran past its time limit and was stopped.
    """
    return check_from_page(
        template_text, chat_template_text, chat_template_model, bos_token, eos_token
    ).to_dict()


@_endpoint(_generate_error)
def generate(
    user: str,
    model_name: str = "",
    system: str = "",
    messages_text: str = "",
    tools_text: str = "",
    enable_thinking: bool = False,
    max_new_tokens: int = 200,
    temperature: float = 0.7,
    top_p: float = 0.9,
    seed: int = 0,
    template_text: str = "",
) -> Iterator[dict]:
    """Generate with a model (default: the bundled demo model) and parse its token ids as they
    arrive, read with its tokenizer (a control token is a delimiter only as its id).

    Args:
        user: the user message (or give `messages_text`, a messages JSON list, which wins).
        template_text: a response template; "" uses the model's own (its tokenizer's, else templates/).

    Yields:
        {"generation", "message", "error", "finished", "prefix"} after each update; the
        last has `finished` True and the message.
    """
    from .handlers.generate_live import (
        capped_prompt,
        checked_max_new_tokens,
        conversation,
        feed_piece,
        generation_slots,
        live_parse,
        sampled_stream,
    )
    from .model import generation as models
    from .model.loaded import get_model

    try:
        messages = conversation(system, user, messages_text)
        tools = read_tools(tools_text)
        max_new_tokens = checked_max_new_tokens(max_new_tokens)
        template = read_template(template_text) if template_text.strip() else None
        loaded = get_model(model_name)
        if template is None:
            template, _ = models.choose_template(loaded)
        prompt = capped_prompt(loaded, messages, tools, enable_thinking)
        live = live_parse(loaded, template, prompt, tools, plain=False)
    except (InputError, TemplateError, LookupError, ValueError) as error:
        yield _generate_error(redact(str(error)))
        return
    pieces = sampled_stream(loaded, prompt, max_new_tokens, temperature, top_p, seed)
    ends = time.perf_counter() + limits.current().generate_seconds
    try:
        with generation_slots:  # one generation at a time over the server, as for the page
            for piece in pieces:
                feed_piece(live, piece)
                yield {
                    "generation": live.generation,
                    "message": None,
                    "error": None,
                    "finished": False,
                    "prefix": prompt.text,
                }
                if time.perf_counter() > ends:
                    break
    finally:
        pieces.close()
    live.finalize()
    view = live.view()
    error = view.error
    if error is None and time.perf_counter() > ends:
        error = limits.over_budget("generate_seconds", "The generation")
    yield {
        "generation": live.generation,
        "message": view.message,
        "error": error,
        "finished": True,
        "prefix": prompt.text,
    }
