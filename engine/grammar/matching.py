"""Running a derived grammar: compile it with xgrammar or llguidance, mask a model's logits with
it, or walk it at random (for tests and benchmarks).

`compile_grammar(derived, tokenizer, engine=..., form=...)` gives a `CompiledGrammar`; its
`matcher()` is one `Matcher` (one output): which tokens may come next, accept one, may the
output end here. `GrammarLogitsProcessor` is a `transformers` logits processor built on one
(make one per `generate` call). `random_walk` draws one output token by token, each token
chosen among those the grammar allows.

Engines (``pip install .[grammar]``): xgrammar reads the structural tag and the GBNF (as its
EBNF), llguidance reads the Lark. Both are imported only when used.

llguidance bounds what one grammar may cost with its parser limits (`LLParserLimits`): pass
`parser_limits` (a dict of its fields) to `compile_grammar` for grammars from input a server
does not trust; `SERVING_PARSER_LIMITS` are values no grammar of a real template needs more
than. A matcher that passes a limit while generating stops the output
(`GrammarLogitsProcessor.problem` says why).

Raises (every function): ImportError naming the extra when the engine is not installed.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

ENGINES = ("xgrammar", "llguidance")
FORMS = ("structural-tag", "gbnf", "lark")
_INSTALL = "pip install 'response-templates[grammar]'"

# llguidance's parser limits for grammars a server derives from its visitors' templates and tools
# (`compile_grammar(parser_limits=...)`). What real templates need was measured with
# `python scripts/bench_grammar.py --parser-limits`: every shipped template with the test tools
# and with 46 realistic tools (62 KB of JSON), compiled and walked at random; the figure after
# each value is the most any of them needed (llguidance's own default in brackets).
SERVING_PARSER_LIMITS = {
    # Symbols in the grammar's productions: 7,362 needed (500,000).
    "max_grammar_size": 100_000,
    # Work building the lexer when compiling, about 50 per microsecond: 316,372 (1,000,000),
    # mistral-v11's grammar for the 46 tools (one llguidance JSON schema per tool).
    "initial_lexer_fuel": 1_000_000,
    # Lexer states built while generating, 1-2 kB each (this bounds the memory): 313 (250,000).
    "max_lexer_states": 20_000,
    # Lexer work for one token's mask, about 14 per microsecond: 29,251 (200,000).
    "step_lexer_fuel": 200_000,
    # Earley items for one token's mask, about 20 per microsecond: 920 (50,000).
    "step_max_items": 20_000,
    # Items in one row of the Earley parser: never reached by the walks (2,000).
    "max_items_in_row": 2_000,
    # Error messages without the grammar's text (a refusal names the limit, not the grammar).
    "verbose_errors": False,
}


def _xgrammar():
    try:
        import xgrammar
    except ImportError as error:
        raise ImportError(f"xgrammar is not installed ({_INSTALL}): {error}") from None
    return xgrammar


def _llguidance():
    try:
        import llguidance
        import llguidance.hf
        import llguidance.numpy
    except ImportError as error:
        raise ImportError(f"llguidance is not installed ({_INSTALL}): {error}") from None
    return llguidance


def special_tokens(tokenizer) -> dict[str, int]:
    """The tokenizer's special tokens (text -> id), as `DerivedGrammar.lark` takes them."""
    found = {}
    for token_id, token in getattr(tokenizer, "added_tokens_decoder", {}).items():
        if getattr(token, "special", False) and token.content:
            found[token.content] = token_id
    return found


def stop_token_ids(tokenizer) -> list[int]:
    """The ids that end generation: the tokenizer's EOS token(s)."""
    eos = tokenizer.eos_token_id
    return list(eos) if isinstance(eos, (list, tuple)) else [eos] if eos is not None else []


_TOKENIZER_CACHE: dict[tuple[int, str], Any] = {}


# Words of llguidance's errors for a limit passed (not for a token the grammar does not allow).
_LIMIT_WORDS = ("too many", "too big", "limit", "fuel")


def passed_limit(message: str) -> bool:
    """Whether an llguidance error (a refusal by `compile_grammar`, a `Matcher.problem`) is a
    parser limit passed, not a grammar error."""
    return any(word in message.lower() for word in _LIMIT_WORDS)


def parser_limits_of(limits: dict | None):
    """`limits` (field -> value) as `llguidance.LLParserLimits`, or None (llguidance's defaults).

    Raises:
        ValueError: a field llguidance does not know (the message lists those it does).
    """
    if limits is None:
        return None
    llg = _llguidance()
    try:
        return llg.LLParserLimits(**limits)
    except TypeError:
        known = ", ".join(sorted(SERVING_PARSER_LIMITS))
        raise ValueError(f"parser limits are {known}; got {sorted(limits)}") from None


def _engine_tokenizer(tokenizer, engine: str, vocab_size: int):
    key = (id(tokenizer), engine, vocab_size)
    if key not in _TOKENIZER_CACHE:
        if engine == "xgrammar":
            xgr = _xgrammar()
            info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size)
            _TOKENIZER_CACHE[key] = (tokenizer, xgr.GrammarCompiler(info, cache_enabled=False))
        else:
            llg = _llguidance()
            _TOKENIZER_CACHE[key] = (
                tokenizer,
                llg.hf.from_tokenizer(tokenizer, n_vocab=vocab_size),
            )
    return _TOKENIZER_CACHE[key][1]


@dataclass
class CompiledGrammar:
    """A grammar compiled for one tokenizer.

    Attributes:
        engine: ``"xgrammar"`` or ``"llguidance"``.
        form: ``"structural-tag"``, ``"gbnf"`` or ``"lark"``.
        text: what was compiled (the JSON of the structural tag, the GBNF or the Lark).
        compiled: the engine's compiled grammar.
        vocab_size: the size of the masks.
        stop_ids: token ids that end the output.
        engine_tokenizer: llguidance's tokenizer (None for xgrammar).
        parser_limits: the `llguidance.LLParserLimits` every matcher gets (None: its defaults).
    """

    engine: str
    form: str
    text: str
    compiled: Any
    vocab_size: int
    stop_ids: list[int]
    engine_tokenizer: Any = None
    parser_limits: Any = None

    def matcher(self) -> "Matcher":
        """A fresh matcher at the start of the output."""
        if self.engine == "xgrammar":
            return _XgrammarMatcher(self)
        return _LlguidanceMatcher(self)


def compile_grammar(
    derived,
    tokenizer,
    engine: str = "xgrammar",
    form: str | None = None,
    vocab_size: int | None = None,
    parser_limits: dict | None = None,
) -> CompiledGrammar:
    """Compile `derived` (a `DerivedGrammar`) for `tokenizer` (a Hugging Face tokenizer).

    Args:
        engine: ``"xgrammar"`` (forms ``"structural-tag"``, the default, and ``"gbnf"``) or
            ``"llguidance"`` (form ``"lark"``).
        vocab_size: the model's vocabulary size (masks are this long); default: the tokenizer's.
        parser_limits: llguidance's parser limits (field -> value, `SERVING_PARSER_LIMITS` for
            untrusted input) for compiling and for every matcher; None: llguidance's defaults.
            xgrammar has no such limits: giving them with xgrammar is a ValueError.

    Raises:
        ValueError: an unknown engine or form, a form the engine does not read, parser limits
            with xgrammar, or a grammar the engine refuses (the message is the engine's; a
            grammar past a parser limit names the limit).
        Unconstrainable: `derived` has no grammar.
        GrammarTooLarge: writing the grammar spent `derived.budget`.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if parser_limits is not None and engine != "llguidance":
        raise ValueError("parser limits are llguidance's; xgrammar has none")
    form = form or ("structural-tag" if engine == "xgrammar" else "lark")
    if (engine, form) not in (
        ("xgrammar", "structural-tag"),
        ("xgrammar", "gbnf"),
        ("llguidance", "lark"),
        ("llguidance", "gbnf"),
    ):
        raise ValueError(f"{engine} does not read the {form} form")
    vocab_size = vocab_size or len(tokenizer)
    engine_tokenizer = _engine_tokenizer(tokenizer, engine, vocab_size)
    stops = stop_token_ids(tokenizer)
    if engine == "xgrammar":
        xgr = _xgrammar()
        try:
            if form == "structural-tag":
                text = json.dumps(derived.structural_tag(), ensure_ascii=False)
                compiled = engine_tokenizer.compile_structural_tag(text)
            else:
                text = derived.gbnf()
                compiled = engine_tokenizer.compile_grammar(xgr.Grammar.from_ebnf(text))
        except RuntimeError as error:
            raise ValueError(f"xgrammar refused the {form}: {error}") from None
        return CompiledGrammar(engine, form, text, compiled, vocab_size, stops)
    llg = _llguidance()
    limits = parser_limits_of(parser_limits)
    text = derived.lark(special_tokens(tokenizer)) if form == "lark" else derived.gbnf()
    grammar = llg.grammar_from("lark" if form == "lark" else "gbnf", text)
    problem = llg.LLMatcher.validate_grammar(grammar, engine_tokenizer, limits=limits)
    if problem:
        raise ValueError(f"llguidance refused the {form}: {problem.strip()}")
    return CompiledGrammar(engine, form, text, grammar, vocab_size, stops, engine_tokenizer, limits)


class Matcher:
    """One output's position in a compiled grammar."""

    def allowed_mask(self):
        """The packed bitmask (int32 numpy array, one bit per token) of tokens allowed next."""
        raise NotImplementedError

    def accept(self, token_id: int) -> bool:
        """Move past `token_id`; False when the grammar does not allow it (nothing moves)."""
        raise NotImplementedError

    def can_end(self) -> bool:
        """True when the output may end here."""
        raise NotImplementedError

    def problem(self) -> str:
        """Why the matcher can go no further though the grammar would (an engine limit
        passed), or "" (a token the grammar does not allow is not a problem)."""
        return ""

    def allowed_ids(self):
        """The ids of the tokens allowed next (numpy array)."""
        import numpy

        mask = self.allowed_mask().view(numpy.uint32)
        bits = numpy.unpackbits(mask.view(numpy.uint8), bitorder="little")
        return numpy.flatnonzero(bits[: self.vocab_size])


class _XgrammarMatcher(Matcher):
    def __init__(self, compiled: CompiledGrammar):
        xgr = _xgrammar()
        self.vocab_size = compiled.vocab_size
        self.matcher = xgr.GrammarMatcher(
            compiled.compiled, override_stop_tokens=compiled.stop_ids or None
        )
        self.bitmask = xgr.allocate_token_bitmask(1, compiled.vocab_size)
        self.stop_ids = compiled.stop_ids
        self.mask = None  # the mask of the current position, once filled

    def allowed_mask(self):
        if self.mask is None:
            self.matcher.fill_next_token_bitmask(self.bitmask)
            self.mask = self.bitmask[0].numpy()
        return self.mask

    def accept(self, token_id: int) -> bool:
        accepted = self.matcher.accept_token(int(token_id))
        if accepted:
            self.mask = None
        return accepted

    def can_end(self) -> bool:
        if self.matcher.is_terminated():
            return True
        mask = self.allowed_mask()
        return any((int(mask[stop // 32]) >> (stop % 32)) & 1 for stop in self.stop_ids)


class _LlguidanceMatcher(Matcher):
    def __init__(self, compiled: CompiledGrammar):
        llg = _llguidance()
        self.vocab_size = compiled.vocab_size
        self.matcher = llg.LLMatcher(
            compiled.engine_tokenizer,
            compiled.compiled,
            log_level=0,
            limits=compiled.parser_limits,
        )
        self.bitmask = llg.numpy.allocate_token_bitmask(1, compiled.vocab_size)
        self.llg = llg

        self.mask = None

    def allowed_mask(self):
        if self.mask is None:
            self.llg.numpy.fill_next_token_bitmask(self.matcher, self.bitmask, 0)
            self.mask = self.bitmask[0]
        return self.mask

    def accept(self, token_id: int) -> bool:
        if self.matcher.is_error():
            return False
        self.mask = None
        return bool(self.matcher.consume_token(int(token_id))) and not self.matcher.is_error()

    def can_end(self) -> bool:
        return self.matcher.is_accepting()

    def problem(self) -> str:
        if not self.matcher.is_error():
            return ""
        lines = self.matcher.get_error().strip().splitlines()
        error = lines[0].strip() if lines else "an error"
        return f"llguidance: {error}" if passed_limit(error) else ""


class GrammarLogitsProcessor:
    """A `transformers` logits processor: tokens the grammar does not allow get -inf.

    Make one per `generate` call (it follows one output per batch row from the first step).
    After the output ends (the grammar accepted a stop token), only stop tokens are allowed.
    A matcher that passed an engine limit (`Matcher.problem`) allows only stop tokens too: the
    output ends there, and `problem` says why (with the number of tokens generated before).

    Attributes:
        problem: "" or why a row's output was ended by an engine limit.
        seconds: time spent inside the processor, for measurements.
    """

    def __init__(self, compiled: CompiledGrammar):
        self.compiled = compiled
        self.matchers: list[Matcher] | None = None
        self.prompt_length = 0
        self.seconds = 0.0
        self.problem = ""

    def __call__(self, input_ids, scores):
        import time

        import numpy
        import torch

        started = time.perf_counter()
        if self.matchers is None:
            self.matchers = [self.compiled.matcher() for _ in range(input_ids.shape[0])]
            self.prompt_length = input_ids.shape[1]
        elif input_ids.shape[1] > self.prompt_length:
            for row, matcher in enumerate(self.matchers):
                matcher.accept(int(input_ids[row, -1]))
        vocab = scores.shape[-1]
        stops = [i for i in self.compiled.stop_ids if i < vocab]
        for row, matcher in enumerate(self.matchers):
            mask = numpy.zeros(vocab, dtype=bool)
            ids = matcher.allowed_ids()
            ids = ids[ids < vocab]
            mask[ids] = True
            problem = matcher.problem()
            if problem:
                mask[:] = False
                self.problem = self.problem or (
                    f"{problem} (after {input_ids.shape[1] - self.prompt_length} tokens)"
                )
            if problem or matcher.can_end():
                mask[stops] = True
            scores[row] = scores[row].masked_fill(
                ~torch.from_numpy(mask).to(scores.device), float("-inf")
            )
        self.seconds += time.perf_counter() - started
        return scores


def random_walk(
    compiled: CompiledGrammar,
    tokenizer,
    rng: random.Random,
    steering: list[list[int]] = (),
    max_tokens: int = 400,
) -> list[int] | None:
    """Draw one output of `compiled` token by token, each token among those allowed next.

    Tokens are picked so that walks end and reach the structure: the end is taken with
    probability 0.3 once allowed (after at least 8 tokens); with probability 0.25 a
    `steering` sequence (the tokens of a delimiter of the grammar) is fed as far as the
    grammar allows it; with probability 0.3 a one-character token; otherwise any allowed token.

    Returns:
        The token ids (without the stop token), or None when the walk did not end within
        `max_tokens` tokens or the matcher passed an engine limit (`Matcher.problem`).

    Raises:
        DeadEnd: the grammar reached a state from which no token continues and where the
            output may not end, or the engine refused a token its own mask allowed: a grammar
            that contradicts itself for this tokenizer (a failure, not a long walk).
    """
    import numpy

    matcher = compiled.matcher()
    out: list[int] = []
    short = _one_character_mask(tokenizer, compiled.vocab_size)
    stops = [i for i in compiled.stop_ids if i < compiled.vocab_size]
    while len(out) < max_tokens:
        if len(out) >= 8 and matcher.can_end() and rng.random() < 0.3:
            return out
        allowed = numpy.zeros(compiled.vocab_size, dtype=bool)
        allowed[matcher.allowed_ids()] = True
        allowed[stops] = False
        if not allowed.any():
            if matcher.can_end() or matcher.problem():
                return out if matcher.can_end() else None
            raise DeadEnd(out, "no token continues and the output may not end here")
        roll = rng.random()
        if roll < 0.25 and steering:
            candidates = [tokens for tokens in steering if tokens and allowed[tokens[0]]]
            if candidates:
                for token in rng.choice(candidates):
                    if len(out) >= max_tokens or not _allows(matcher, token):
                        break
                    if not matcher.accept(token):
                        return _refused(matcher, out, token)
                    out.append(token)
                continue
        pool = numpy.flatnonzero(allowed & short) if roll < 0.55 else ()
        if not len(pool):
            pool = numpy.flatnonzero(allowed)
        token = int(pool[rng.randrange(len(pool))])
        if not matcher.accept(token):
            return _refused(matcher, out, token)
        out.append(token)
    return None


class DeadEnd(ValueError):
    """A random walk reached a state no token leaves though the output may not end there, or
    the engine refused a token its mask allowed.

    Attributes:
        ids: the tokens drawn before it.
        reason: what happened.
    """

    def __init__(self, ids: list[int], reason: str):
        super().__init__(f"dead end after {len(ids)} tokens: {reason}")
        self.ids = list(ids)
        self.reason = reason


def _refused(matcher: Matcher, out: list[int], token: int) -> None:
    """None when the matcher passed an engine limit; otherwise raises DeadEnd (the mask
    allowed `token`, the matcher refused it)."""
    if matcher.problem():
        return None
    raise DeadEnd(out, f"the engine refused token {token}, which its mask allowed")


def _allows(matcher: Matcher, token: int) -> bool:
    mask = matcher.allowed_mask()
    return bool((int(mask[token // 32]) >> (token % 32)) & 1)


_SHORT_CACHE: dict[tuple[int, int], Any] = {}


def _one_character_mask(tokenizer, vocab_size: int):
    """A boolean array: which token ids decode to one character."""
    import numpy

    key = (id(tokenizer), vocab_size)
    if key not in _SHORT_CACHE:
        mask = numpy.zeros(vocab_size, dtype=bool)
        for index in range(min(vocab_size, len(tokenizer))):
            if len(tokenizer.decode([index], clean_up_tokenization_spaces=False)) == 1:
                mask[index] = True
        _SHORT_CACHE[key] = mask
    return _SHORT_CACHE[key]


def steering_sequences(derived, tokenizer) -> list[list[int]]:
    """Token sequences of the grammar's literals (delimiters, keys, closing quotes), for
    `random_walk`'s steering."""
    from .ir import Alt as _Alt
    from .ir import Lit, Repeat, Seq, Text, Token

    found: set[str] = set()

    def visit(node) -> None:
        if isinstance(node, Lit):
            if node.text.strip():
                found.add(node.text)
        elif isinstance(node, (Seq, _Alt)):
            for item in node.items:
                visit(item)
        elif isinstance(node, Repeat):
            visit(node.item)
        elif isinstance(node, Token):
            visit(node.node)
        elif isinstance(node, Text):
            pass

    for body in derived.grammar.rules.values():
        visit(body)
    found |= {'"', "}", "]", ")", "\n"}
    return [tokenizer.encode(text, add_special_tokens=False) for text in sorted(found)]
