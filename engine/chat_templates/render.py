"""Chat templates: render them with transformers, and read them from tokenizers.

`ChatTemplateRenderer` renders conversations with transformers' own
`render_jinja_template` (the sandbox `apply_chat_template` uses) and learns the
few conventions a template expects that the message format leaves open: whether
a tool-calling turn without text has content ``""`` or None, whether tool-call
arguments are a dict or JSON text, and what the template writes after every
conversation. `load_chat_template` takes the chat template from a tokenizer (a
local folder or a hub id), reading tokenizer files only and failing in seconds
when the Hub cannot be reached. Templates render in `bounded_sandbox()`, jinja2's
sandbox refusing to build strings and lists past `MAX_BUILT` by multiplication or
padding (a memory bomb of one line), installed into transformers by `render_function`.

transformers is imported only inside these functions, so `import engine` stays
light; without it they raise `ImportError` naming what to install.
"""

from __future__ import annotations

import contextvars
import copy
import functools
import json
import socket
import threading
import unicodedata
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlparse

import regex

# Chat-template keywords that switch reasoning, with the values that turn it on and off, in the
# order they are tried (a level such as reasoning_effort: its highest and lowest values).
THINKING_SWITCHES: tuple[tuple[str, Any, Any], ...] = (
    ("enable_thinking", True, False),
    ("thinking", True, False),
    ("reasoning", True, False),
    ("reasoning_effort", "high", "low"),
)
# Seconds the Hub may take to answer a connection before a hub id gives up on it.
HUB_CONNECT_TIMEOUT = 3.0

# The one tool every check that needs a tool call describes: `call_style` calls it, and it heads
# the conformance matrix's tools. Every parameter has a description (some chat templates read
# one for each).
WEATHER_TOOL: dict = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather forecast for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city."},
                "days": {"type": "integer", "description": "How many days."},
            },
            "required": ["city"],
        },
    },
}


# A variable a template reads that no caller passes, as jinja2 names it.
_UNDEFINED = regex.compile(r"^UndefinedError: '(\w+)' is undefined")
# What a template that iterates `tools` says when there are none.
_NOT_ITERABLE = "'NoneType' object is not iterable"
# How many such variables a render may fill before the template's error stands.
_MAX_FILLED = 8


# The longest string or list a chat template may build by multiplying one (characters or items),
# the widest a string may be padded to, and the most bits a power may have: past them jinja2's
# sandbox refuses, before the memory is asked for (`'x' * 2000000000` would take 2 GB).
MAX_BUILT = 1_000_000
# The longest string or list a chat template may build by joining (``+`` and ``~``): a prompt is
# far shorter, and a loop doubling a string reaches it in a few steps.
MAX_JOINED = 16 * MAX_BUILT
# Whether the render under way may change the lists and dicts the chat template builds (see
# `ChatTemplateRenderer.allow_mutation`): set around one render, read by the sandbox.
_MUTATION_ALLOWED: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "chat_template_mutation_allowed", default=False
)
# The errors jinja2's immutable sandbox raises for a method that changes a list or dict.
MUTATION_REFUSED = regex.compile(
    r"SecurityError: access to attribute '\w+' of '(?:list|dict)' object is unsafe"
)
# Methods of str that pad to a width given as an argument.
_PADDING_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs"})
# A printf width or precision written in a format string ("%2000000000s").
_PRINTF_WIDTH = regex.compile(r"%[-#0 +]*(\d+|\*)(?:\.(\d+|\*))?")


def _built_size(operator: str, left: Any, right: Any) -> int:
    """How large `left <operator> right` would be (characters, items or bits) when it builds a
    sequence or a big number; 0 for anything else."""
    sequences = (str, list, tuple, bytes)
    if operator == "*":
        for sequence, times in ((left, right), (right, left)):
            if isinstance(sequence, sequences) and isinstance(times, int):
                return len(sequence) * max(times, 0)
    if operator == "+" and isinstance(left, sequences) and isinstance(right, sequences):
        return len(left) + len(right)
    if operator == "**" and isinstance(left, int) and isinstance(right, int) and right > 0:
        return abs(left).bit_length() * right if abs(left) > 1 else 0
    if operator == "%" and isinstance(left, str):
        values = right if isinstance(right, tuple) else (right,)
        widths = [
            int(size)
            for found in _PRINTF_WIDTH.finditer(left)
            for size in found.groups()
            if size and size != "*"
        ]
        if "*" in left:
            widths += [value for value in values if isinstance(value, int)]
        return max(widths, default=0)
    return 0


def _padded_width(method: Any, args: tuple, kwargs: dict) -> int:
    """The width a padding method of str (`_PADDING_METHODS`) is asked for; 0 for another call."""
    if not (
        isinstance(getattr(method, "__self__", None), str) and method.__name__ in _PADDING_METHODS
    ):
        return 0
    sizes = [value for value in (*args, *kwargs.values()) if isinstance(value, int)]
    if method.__name__ == "expandtabs":
        return method.__self__.count("\t") * max(sizes, default=8)
    return max(sizes, default=0)


@functools.cache
def bounded_sandbox():
    """jinja2's immutable sandbox (what transformers renders chat templates in) that refuses to
    build a string, list or number past MAX_BUILT: ``*`` of a sequence, ``**``, ``%`` with a
    width, the padding methods of str and the `center` and `indent` filters; and a join past
    MAX_JOINED (``+`` before it is built, ``~`` once built, so a doubling loop stops at twice
    that). A refusal is jinja2's `SecurityError`, saying what was asked for.

    While `_MUTATION_ALLOWED` is set (one render of `ChatTemplateRenderer` with
    `allow_mutation`), a list or dict may be changed in place as jinja2's mutable sandbox
    allows, up to MAX_BUILT items."""
    from jinja2.compiler import CodeGenerator
    from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEnvironment, SecurityError

    def refuse(what: str, size: int, bound: int = MAX_BUILT) -> None:
        raise SecurityError(
            f"the chat template {what} {size:,} (at most {bound:,} in this sandbox)"
        )

    class BoundedCode(CodeGenerator):
        """jinja2's code generator with every ``~`` join checked by `bounded_concat`."""

        def visit_Concat(self, node, frame) -> None:
            self.write("environment.bounded_concat(")
            super().visit_Concat(node, frame)
            self.write(")")

    class BoundedSandbox(ImmutableSandboxedEnvironment):
        intercepted_binops = frozenset({"*", "**", "%", "+"})
        code_generator_class = BoundedCode

        def bounded_concat(self, joined: str) -> str:
            if len(joined) > MAX_JOINED:
                refuse("joins strings into one of", len(joined), MAX_JOINED)
            return joined

        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            for name in ("center", "indent"):
                self.filters[name] = self._bounded_filter(self.filters[name])

        @staticmethod
        def _bounded_filter(apply):
            @functools.wraps(apply)
            def bounded(value, width=80, *args, **kwargs):
                if isinstance(width, int) and width > MAX_BUILT:
                    refuse("pads a string to a width of", width)
                return apply(value, width, *args, **kwargs)

            return bounded

        def call_binop(self, context, operator: str, left: Any, right: Any) -> Any:
            bound = MAX_JOINED if operator == "+" else MAX_BUILT
            if (size := _built_size(operator, left, right)) > bound:
                refuse(
                    f"builds with {operator!r} a value (characters, items or bits) of", size, bound
                )
            return super().call_binop(context, operator, left, right)

        def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
            if _MUTATION_ALLOWED.get() and isinstance(obj, (list, dict)):
                return SandboxedEnvironment.is_safe_attribute(self, obj, attr, value)
            return super().is_safe_attribute(obj, attr, value)

        def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 - jinja2's own names
            if (width := _padded_width(__obj, args, kwargs)) > MAX_BUILT:
                refuse("pads a string to a width of", width)
            result = super().call(__context, __obj, *args, **kwargs)
            changed = getattr(__obj, "__self__", None)
            if isinstance(changed, (list, dict)) and len(changed) > MAX_BUILT:
                refuse("grows a list or dict in place to", len(changed))
            return result

    return BoundedSandbox


def install_bounded_sandbox() -> None:
    """Make transformers render chat templates in `bounded_sandbox()` (its compile cache is
    emptied, so no template compiled before keeps the unbounded sandbox). Idempotent."""
    from transformers.utils import chat_template_utils

    if chat_template_utils.ImmutableSandboxedEnvironment is not bounded_sandbox():
        chat_template_utils.ImmutableSandboxedEnvironment = bounded_sandbox()
        chat_template_utils._compile_jinja_template.cache_clear()


class ChatTemplateRenderError(Exception):
    """The chat template refused to render; the message is its own error, prefixed by its type."""


def render_function():
    """transformers' function that renders a chat template (imported on first use; calling this
    early moves the import's seconds out of a time budget that starts later).

    Raises:
        ImportError: transformers (or jinja2) is not installed; the message says what to install.
    """
    try:
        from transformers.utils.chat_template_utils import render_jinja_template
    except ImportError as error:
        raise ImportError(
            "rendering a chat template needs transformers (and jinja2): pip install transformers jinja2, "
            "or pip install -r requirements.txt"
        ) from error
    install_bounded_sandbox()
    return render_jinja_template


def token_boundary(text: str, at: int) -> bool:
    """Whether offset `at` of `text` falls between two markup tokens: after ``>``, ``]``, a closing
    bracket or quote of any script (``»``, ``⟫``) or a blank, or before ``<``, ``[``, an opening
    one (``«``, ``⟪``) or a blank (``0 < at < len(text)``)."""
    before, after = text[at - 1], text[at]
    return (
        before in ">]\n \t"
        or after in "<[\n \t"
        or unicodedata.category(before) in ("Pe", "Pf")
        or unicodedata.category(after) in ("Ps", "Pi")
    )


def _first_token(text: str) -> str:
    """The first marker of `text` (a generation prompt): a tag, a bracketed name, or its first word."""
    found = regex.match(r"\s*(<<[^<>]*>>|<[^<>]*>|\[[^\[\]]*\]|\S+)", text)
    return found.group(1) if found else ""


def common_suffix_length(a: str, b: str) -> int:
    """How many characters `a` and `b` share at their end."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[-1 - i] == b[-1 - i]:
        i += 1
    return i


@dataclass
class ChatTemplateRenderer:
    """Renders conversations with one chat template, its special tokens and a thinking mode.

    Attributes:
        chat_template: the Jinja text.
        bos_token, eos_token: what the template writes as ``bos_token`` / ``eos_token``.
        switch: the keyword that switches reasoning (``enable_thinking``), or None.
        thinking: the value passed for `switch` (None: not passed): True or False, or a level
            for a level switch (``"high"``, ``"low"``).
        allow_mutation: render allowing the chat template to change the lists and dicts it
            builds (``ids.append(...)``), which transformers' immutable sandbox refuses. Only
            inference sets it, after such a refusal, to see what the chat template means to
            write; the conformance check renders as transformers does.
        values_as_text: write every tool-call argument value that is not a string as its JSON
            text (``73519`` as ``"73519"``), for a chat template that joins values to strings
            with ``+`` and so refuses a number. Only inference sets it, after such a refusal.
    """

    chat_template: str
    bos_token: str = ""
    eos_token: str = ""
    switch: str | None = None
    thinking: Any = None
    allow_mutation: bool = False
    values_as_text: bool = False

    def __post_init__(self):
        self._render = render_function()
        # Variables the chat template reads that no caller passes, rendered empty (see `_call`).
        self.filled: dict[str, str] = {}
        # Whether the chat template needs `tools` to be a list even when none are given.
        self.empty_tools = False

    def render(
        self,
        messages: list[dict],
        *,
        tools: list[dict] | None = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool = False,
    ) -> str:
        """The rendered text, with tool-calling turns adapted to the template's `call_style`.

        Raises:
            ChatTemplateRenderError: the template raised (``raise_exception``, a type error,
                a sandbox refusal).
        """
        empty_content, arguments_as_text = self.call_style
        messages = copy.deepcopy(messages)
        for message in messages:
            if message.get("tool_calls") and message.get("content") == "":
                message["content"] = empty_content
            if self.values_as_text:
                for call in message.get("tool_calls") or ():
                    arguments = call["function"]["arguments"]
                    if not isinstance(arguments, dict):
                        continue
                    call["function"]["arguments"] = {
                        key: value if isinstance(value, str) else json.dumps(value)
                        for key, value in arguments.items()
                    }
            if arguments_as_text:
                for call in message.get("tool_calls") or ():
                    call["function"]["arguments"] = json.dumps(
                        call["function"]["arguments"], ensure_ascii=False
                    )
        return self._call(messages, tools, add_generation_prompt, continue_final_message)

    @cached_property
    def call_style(self) -> tuple[str | None, bool]:
        """How this template wants a tool-calling turn: (its empty content, ``""`` or None;
        whether arguments are JSON text rather than a dict). Some templates skip the calls of
        a turn whose content is not None, some concatenate the arguments as strings; the
        first style whose render shows the call wins (default ``("", False)``)."""
        for as_text in (False, True):
            for empty in ("", None):
                arguments: Any = {"city": "Oslo"}
                if as_text:
                    arguments = json.dumps(arguments)
                call = {
                    "id": "call00099",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": arguments},
                }
                probe = [
                    {"role": "user", "content": "Oslo?"},
                    {"role": "assistant", "content": empty, "tool_calls": [call]},
                ]
                try:
                    rendered = self._call(probe, [copy.deepcopy(WEATHER_TOOL)], False, False)
                except ChatTemplateRenderError:
                    continue
                if "Oslo" in rendered.split("Oslo?", 1)[-1]:
                    return empty, as_text
        return "", False

    @cached_property
    def trailer(self) -> str:
        """What the template writes after every conversation, whatever its last message ("" for most).

        A template that writes its generation prompt even without ``add_generation_prompt``
        ends every finished conversation with the next turn's header, which no model writes;
        one that appends a turn of its own after the last message (instructions in a system
        turn) ends every conversation with that turn, which no model writes either. The
        second is told apart from a turn's own end by starting with the marker the generation
        prompt starts a turn with.
        """
        ask = [{"role": "user", "content": "Hi"}]
        try:
            asked = self._call(ask, None, False, False)
            prompted = self._call(ask, None, True, False)
            answered = self._call(
                ask + [{"role": "assistant", "content": "Yo"}], None, False, False
            )
        except ChatTemplateRenderError:
            return ""
        start = len(asked) - common_suffix_length(asked, answered)
        while start < len(asked) and not token_boundary(asked, start):
            start += 1
        shared = asked[start:]
        if asked == prompted:
            return shared if shared.strip() else ""
        opening = _first_token(prompted[len(asked) :] if prompted.startswith(asked) else "")
        at = shared.find(opening) if opening.strip() else -1
        # A turn of its own: after the last message's end (not blanks), starting as turns start.
        if at <= 0 or not shared[:at].strip() or "Hi" in shared:
            return ""
        return shared[at:]

    def _call(
        self,
        messages: list[dict],
        tools: list[dict] | None,
        add_generation_prompt: bool,
        continue_final_message: bool,
    ) -> str:
        """The render, made robust to what the template needs and no caller passes.

        A template that reads a variable nobody passes (``'functions' is undefined``) is
        rendered again with it empty, and keeps it for every later render (`filled`); one
        that iterates `tools` even when there are none gets an empty list (`empty_tools`).
        Any other error is the template's own.
        """
        for _ in range(_MAX_FILLED + 1):
            try:
                return self._call_once(
                    messages,
                    [] if tools is None and self.empty_tools else tools,
                    add_generation_prompt,
                    continue_final_message,
                )
            except ChatTemplateRenderError as error:
                missing = _UNDEFINED.search(str(error))
                if missing and missing.group(1) not in self.filled:
                    self.filled[missing.group(1)] = ""
                elif tools is None and not self.empty_tools and _NOT_ITERABLE in str(error):
                    self.empty_tools = True
                else:
                    raise
        raise ChatTemplateRenderError(
            f"UndefinedError: the template reads more than {_MAX_FILLED} variables no caller passes "
            f"({', '.join(self.filled)})"
        )

    def _call_once(
        self,
        messages: list[dict],
        tools: list[dict] | None,
        add_generation_prompt: bool,
        continue_final_message: bool,
    ) -> str:
        """One render of `messages` (with `tools`), with the variables filled so far, the
        bos/eos tokens and the thinking switch, as text.

        Raises:
            ChatTemplateRenderError: the chat template's own error (its type name first), or a
                MemoryError said in words.
        """
        options: dict[str, Any] = {
            **self.filled,
            "bos_token": self.bos_token,
            "eos_token": self.eos_token,
        }
        if self.switch is not None and self.thinking is not None:
            options[self.switch] = self.thinking
        allowed = _MUTATION_ALLOWED.set(self.allow_mutation)
        try:
            rendered, _ = self._render(
                [messages],
                tools=copy.deepcopy(tools),
                chat_template=self.chat_template,
                add_generation_prompt=add_generation_prompt,
                continue_final_message=continue_final_message,
                **options,
            )
        except MemoryError as error:  # str(MemoryError()) is empty: say what happened
            raise ChatTemplateRenderError(
                "MemoryError: rendering needed more memory than this process may use"
            ) from error
        except Exception as error:  # the template's own error, whatever its type
            raise ChatTemplateRenderError(f"{type(error).__name__}: {error}") from error
        finally:
            _MUTATION_ALLOWED.reset(allowed)
        return rendered[0]


def find_thinking_switch(
    chat_template: str,
    *,
    bos_token: str = "",
    eos_token: str = "",
    before_each_render: Callable[[], None] | None = None,
) -> str | None:
    """The keyword that switches the chat template's reasoning on and off, or None.

    A keyword counts when its on and off values (`THINKING_SWITCHES`) give two different
    renders: of the prompt for a first user turn (``enable_thinking`` for Qwen3, GLM,
    SmolLM3; ``thinking`` for Granite 3.x), or of a finished turn with reasoning (a chat
    template whose generation prompt is the same in both modes but that writes the
    reasoning only when it is on). Keywords are tried in `THINKING_SWITCHES` order.

    `before_each_render` is called before each render (up to 16: four keywords, two values, two
    conversations): a caller with a time budget raises there once it is spent, which this
    function lets through.
    """
    before_render = before_each_render or (lambda: None)
    ask = [{"role": "user", "content": "Hi"}]
    answered = ask + [
        {
            "role": "assistant",
            "content": "Hello.",
            "reasoning_content": "Greet back.",
            "reasoning": "Greet back.",
            "thinking": "Greet back.",
        }
    ]
    for switch, on, off in THINKING_SWITCHES:
        renders = set()
        for value in (on, off):
            renderer = ChatTemplateRenderer(chat_template, bos_token, eos_token, switch, value)
            try:
                before_render()
                prompt = renderer.render(ask, add_generation_prompt=True)
                before_render()
                renders.add((prompt, renderer.render(answered)))
            except ChatTemplateRenderError:
                break
        if len(renders) == 2:
            return switch
    return None


def thinking_values(switch: str) -> tuple[Any, Any]:
    """The values of `switch` (a keyword of `THINKING_SWITCHES`) that turn reasoning on and off."""
    return next((on, off) for name, on, off in THINKING_SWITCHES if name == switch)


class ModelLoadError(ValueError):
    """A tokenizer (and its chat template) could not be loaded; the message says what to do.

    Attributes:
        hint: what a caller may offer instead, for it to name in its own terms (a command-line
            option, a box of a page): ``"chat_template"``, the chat template's own text; ""
            when nothing else would do.
    """

    def __init__(self, message: str, *, hint: str = ""):
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True)
class ChatTemplateSource:
    """A chat template taken from a tokenizer: its text and the tokens it writes."""

    chat_template: str
    bos_token: str
    eos_token: str
    source: str


def hub_reachable(timeout: float = HUB_CONNECT_TIMEOUT) -> tuple[bool, str]:
    """Whether the Hugging Face Hub answers a TCP connection within `timeout` seconds, and if not, why.

    Returns (True, "") or (False, a reason in words: "HF_HUB_OFFLINE is set", "the name
    huggingface.co cannot be looked up", "cannot connect to huggingface.co:443 (Connection
    refused)", "no answer from huggingface.co:443 within 3 s"). Honours HF_ENDPOINT and HF_HUB_OFFLINE.
    Takes at most `timeout` + 0.5 s, even when the name lookup hangs.
    """
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return False, "HF_HUB_OFFLINE is set"
    endpoint = urlparse(constants.ENDPOINT)
    host = endpoint.hostname or "huggingface.co"
    port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
    outcome: list[str] = []

    def connect() -> None:
        """Try a connection to the Hub's host; append "" or why it failed to `outcome`."""
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            outcome.append("")
        except socket.gaierror:
            outcome.append(f"the name {host} cannot be looked up")
        except TimeoutError:
            outcome.append(f"no answer from {host}:{port} within {timeout:g} s")
        except OSError as error:  # in words, without the error number
            outcome.append(f"cannot connect to {host}:{port} ({error.strerror or error})")

    # The name lookup has no timeout of its own, so the attempt runs in a thread we stop waiting for.
    attempt = threading.Thread(target=connect, daemon=True)
    attempt.start()
    attempt.join(timeout + 0.5)
    if not outcome:
        return False, f"no answer from {host}:{port} within {timeout:g} s"
    return not outcome[0], outcome[0]


@functools.lru_cache(maxsize=4)
def load_tokenizer(model: str) -> tuple[Any, str]:
    """A model's tokenizer, and where it was read (a folder, or ``hub:ID``): a local folder, or a
    hub id (tokenizer files only, never weights).

    A hub id is tried only when the Hub answers within `HUB_CONNECT_TIMEOUT` seconds;
    otherwise only the local Hugging Face cache is consulted, so an offline machine fails in
    seconds rather than after transformers' retry loop. The last few are kept (inference and
    its check read the same one).

    Raises:
        ModelLoadError: no such folder, a folder without tokenizer files, or an unreachable
            Hub with the id not cached.
        ImportError: transformers is not installed.
    """
    try:
        from transformers import AutoTokenizer
    except ImportError as error:
        raise ImportError(
            "--model reads the tokenizer with transformers: pip install transformers"
        ) from error
    folder = Path(model).expanduser()
    if folder.is_dir():
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(folder))
        except (OSError, ValueError) as error:
            raise ModelLoadError(
                f"{folder} holds no tokenizer AutoTokenizer can load: {error}"
            ) from error
        where = str(folder)
    elif model.startswith((".", "/", "~")) or model.count("/") > 1:
        raise ModelLoadError(
            f"no folder {folder}: give a folder that holds the tokenizer files, or a hub id"
        )
    else:
        reachable, why = hub_reachable()
        try:
            tokenizer = AutoTokenizer.from_pretrained(model, local_files_only=not reachable)
        except (OSError, ValueError) as error:
            if reachable:
                raise ModelLoadError(
                    f"could not load the tokenizer of {model!r} from the Hugging Face Hub: {error}"
                ) from error
            raise ModelLoadError(
                f"the Hugging Face Hub is not reachable ({why}) and {model!r} is not in the local cache. "
                "Download the tokenizer files elsewhere (tokenizer_config.json, tokenizer.json, chat_template.jinja) "
                "and give their folder, or paste the chat template instead.",
                hint="chat_template",
            ) from error
        where = f"hub:{model}"
    return tokenizer, where


def load_chat_template(model: str) -> ChatTemplateSource:
    """The chat template of a model's tokenizer (`load_tokenizer`): a local folder, or a hub id.

    Raises:
        ModelLoadError: no such folder, a folder without tokenizer files, an
            unreachable Hub with the id not cached, or a tokenizer without a chat template.
        ImportError: transformers is not installed.
    """
    tokenizer, where = load_tokenizer(model)
    chat_template = getattr(tokenizer, "chat_template", None)
    if isinstance(chat_template, dict):
        chat_template = chat_template.get("default") or next(iter(chat_template.values()), None)
    if not chat_template:
        raise ModelLoadError(f"{model!r} has no chat template in its tokenizer files")
    return ChatTemplateSource(
        chat_template, tokenizer.bos_token or "", tokenizer.eos_token or "", where
    )
