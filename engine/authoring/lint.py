"""Lint: templates that load but are probably wrong.

`lint()` reads a template the way a reviewer would and returns diagnostics,
each naming the JSON path of the key at fault and a concrete fix. It never
parses a generation; the one dynamic check runs each pattern on short
adversarial probe strings under a time budget, to catch catastrophic
backtracking before a hosted playground meets it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import asdict, dataclass
from typing import Any

import regex

from ..delimiters import Delimiter
from ..errors import PatternTimeoutError, TemplateError
from ..pattern_shapes import match_start, pattern_literal
from ..template import FieldSpec, ResponseTemplate, load_template
from ..transform import placeholder_paths
from .portability import REASONING_NAME, TARGETS, target_diagnostics
from .suggested_patterns import close_or_lookahead, json_safe_close
from .time_budget import deadline_in_force, out_of_time, regex_timeout

SEVERITIES = ("error", "warning", "info")
# Seconds one probe may take before a pattern counts as backtracking catastrophically.
PROBE_BUDGET = 0.05
PROBE_REPEAT = 28
# Strings a zero-width match on which means the pattern can match the empty string.
_EMPTY_PROBES = ("", "x", " ", "\n", "}", "a b\n1")
_REASONING_WORDS = ("reason", "think", "thought", "analysis")
# An open that matches at the start of each of these catches any text.
_CATCH_ALL_PROBES = ("x", " ", "\n", "<", "{", "1")


@dataclass
class Diagnostic:
    """One lint finding.

    Attributes:
        severity: ``"error"`` (the template will misparse), ``"warning"`` (it probably
            will on some output) or ``"info"``.
        code: a stable name, e.g. ``open-never-fires``.
        path: JSON path of the key at fault (``fields.tool_calls.close``; ``""`` for the template).
        message: what is wrong and why it matters.
        suggestion: what to write instead (``""`` when there is nothing specific).
    """

    severity: str
    code: str
    path: str
    message: str
    suggestion: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def lint(
    template: dict | str | ResponseTemplate,
    *,
    probe_budget: float = PROBE_BUDGET,
    deadline: float | None = None,
    target: str | None = None,
) -> list[Diagnostic]:
    """Check a response template for likely mistakes.

    Args:
        template: the template (dict, JSON text or loaded).
        probe_budget: seconds one backtracking probe may take.
        deadline: a `time.perf_counter()` value all the checks must end by, or None. Each
            regex call gets at most what is left (`time_budget.regex_timeout`); past it lint
            stops, drops the check it was in (a probe cut short proves nothing) and ends with
            one ``"info"`` diagnostic, code ``lint-cut-off``.
        target: also check what a runtime that serves response templates refuses or reads
            differently: ``"transformers"``, ``"vllm"``, ``"sglang"`` or ``"vllm-rust"``
            (`engine.authoring.portability`; docs/serving.md lists the rules).

    Returns:
        Diagnostics, errors first, then in template order. A template that does not
        load gives exactly one ``"error"`` diagnostic (code ``template-error``) at the
        `TemplateError`'s path.

    Raises:
        ValueError: `target` is not one of the runtimes above. Nothing for bad templates.
    """
    if target is not None and target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    try:
        loaded = load_template(template)
    except TemplateError as error:
        return [Diagnostic("error", "template-error", error.path, error.detail, "")]
    fields = list(loaded.fields.values())
    checks = [
        functools.partial(check, loaded, fields)
        for check in (_shadowed_opens, _prefix_opens, _close_equals_open, _anchor_inside_delimiters)
    ]
    checks += [functools.partial(_field_checks, spec, target) for spec in fields]
    checks += [
        functools.partial(_tool_call_checks, fields),
        functools.partial(_tool_call_pattern_swallowed_by_reasoning, loaded, fields),
        functools.partial(_drops_text, loaded, fields),
    ]
    checks += [
        functools.partial(_pattern_checks, path, pattern, probe_budget)
        for path, pattern in _patterns(loaded)
    ]
    if target is not None:
        checks.append(functools.partial(_target_checks, loaded, target))
    found: list[Diagnostic] = []
    with deadline_in_force(deadline):
        for done, check in enumerate(checks):
            results = check()
            if out_of_time():
                found.append(_cut_off(len(checks) - done))
                break
            found += results
    order = {severity: i for i, severity in enumerate(SEVERITIES)}
    return sorted(found, key=lambda d: order[d.severity])


def _cut_off(left: int) -> Diagnostic:
    return Diagnostic(
        "info",
        "lint-cut-off",
        "",
        f"lint stopped at its time budget: {left} of its checks did not run (the template's "
        "patterns are slow on its probes)",
        "check the patterns the backtracking check names, or lint the template on its own",
    )


# -- what a serving runtime refuses (engine/authoring/portability.py) ---------------


def _target_checks(template: ResponseTemplate, target: str) -> list[Diagnostic]:
    found = [
        Diagnostic(
            finding.severity, finding.code, finding.path, finding.message, finding.suggestion
        )
        for finding in target_diagnostics(template, target)
    ]
    if target in ("vllm", "sglang"):
        found += _grammar_tokens(template)
    return found


# Delimiter text shaped like a tokenizer's markup token (`<name>`, `<|name|>`, `[NAME]`).
_TOKEN_SHAPED = re.compile(r"<\|?[^\s<>|]{1,40}\|?>|\[[A-Z_]{2,40}\]")


def _grammar_tokens(template: ResponseTemplate) -> list[Diagnostic]:
    """Constrained decoding (both runtimes can run llguidance on the Lark form) needs the
    model's tokenizer when a delimiter may be one of its special tokens: one ``info``."""
    shaped: dict[str, str] = {}
    for spec in template.fields.values():
        for key, delimiter in (("open", spec.open), ("close", spec.close)):
            if delimiter is None:
                continue
            source = re.sub(r"\(\?P?<[^>]*>", "(", delimiter.pattern.pattern)  # no group names
            texts = delimiter.literals or [source.replace("\\", "")]
            for text in texts:
                for found in _TOKEN_SHAPED.findall(text):
                    shaped.setdefault(found, f"{spec.path}.{key}")
    if not shaped:
        return []
    names = ", ".join(sorted(shaped))
    return [
        Diagnostic(
            "info",
            "grammar-special-tokens",
            next(iter(shaped.values())),
            f"the Lark grammar for constrained decoding writes the delimiters {names} as text "
            "unless it is given the model's tokenizer; llguidance never matches a special token "
            "against text, so for a tokenizer that has one of them as a special token the "
            "grammar written without it contradicts itself",
            "python -m engine grammar TEMPLATE --format lark --tokenizer MODEL_DIR "
            "(special tokens written as <[id]>)",
        )
    ]


# -- delimiters against each other ------------------------------------------------


def _opens(fields: list[FieldSpec]) -> list[tuple[FieldSpec, Delimiter]]:
    return [(spec, spec.open) for spec in fields if spec.open is not None]


def _shadowed_opens(template: ResponseTemplate, fields: list[FieldSpec]) -> list[Diagnostic]:
    """An open literal that another field's open matches in full at the same place and wins."""
    found = []
    for spec, delimiter in _opens(fields):
        if delimiter.literals is None:
            continue
        for literal in delimiter.literals:
            for other, other_open in _opens(fields):
                if other is spec:
                    continue
                try:
                    match = other_open.pattern.match(literal, timeout=regex_timeout(PROBE_BUDGET))
                except TimeoutError:
                    continue
                # Longest match wins at one position, then the field name: a full match
                # by a field that sorts first always takes this literal.
                if match is not None and match.end() == len(literal) and other.name < spec.name:
                    found.append(
                        Diagnostic(
                            "error",
                            "open-never-fires",
                            delimiter.path,
                            f"{literal!r} never opens {spec.name}: {other.name}'s open {other_open.source!r} "
                            f"matches the same text at the same place and wins the tie",
                            f"make {other.path}.{'open' if other_open.literals else 'open_pattern'} specific enough "
                            f"not to match {literal!r}",
                        )
                    )
                    break
    return found


def _prefix_opens(template: ResponseTemplate, fields: list[FieldSpec]) -> list[Diagnostic]:
    """An open literal that is a proper prefix of another field's open literal."""
    found = []
    for spec, delimiter in _opens(fields):
        for other, other_open in _opens(fields):
            if other is spec or delimiter.literals is None or other_open.literals is None:
                continue
            for short in delimiter.literals:
                longer = [x for x in other_open.literals if x != short and x.startswith(short)]
                if longer:
                    found.append(
                        Diagnostic(
                            "warning",
                            "open-prefix-of-other",
                            delimiter.path,
                            f"{spec.name}'s open {short!r} is a prefix of {other.name}'s open {longer[0]!r}: "
                            f"{other.name} only wins when its whole delimiter arrives, and any variant or "
                            f"truncation of it opens {spec.name} instead",
                            f"give {spec.name} a delimiter that is not the start of another",
                        )
                    )
    return found


def _close_equals_open(template: ResponseTemplate, fields: list[FieldSpec]) -> list[Diagnostic]:
    found = []
    for spec in fields:
        if spec.close is None:
            continue
        for other, other_open in _opens(fields):
            if other is spec:
                continue
            if spec.close.literals is not None and other_open.literals is not None:
                same = sorted(set(spec.close.literals) & set(other_open.literals))
            else:
                same = [spec.close.source] if spec.close.source == other_open.source else []
            if same:
                # A pattern shared by both is already pattern text; a literal is written as one.
                same_text = same[0] if spec.close.literals is None else pattern_literal(same[0])
                found.append(
                    Diagnostic(
                        "warning",
                        "close-equals-open",
                        spec.close.path,
                        f"{spec.name}'s close {same[0]!r} is also {other.name}'s open: it ends {spec.name} "
                        f"without opening {other.name} (inside a region only its close can fire), so "
                        f"{other.name} never follows {spec.name} directly",
                        f"close {spec.name} with a lookahead instead: close_pattern "
                        f"'(?={same_text})'",
                    )
                )
    return found


def _anchor_inside_delimiters(
    template: ResponseTemplate, fields: list[FieldSpec]
) -> list[Diagnostic]:
    anchor = template.start_anchor
    found = []
    for spec in fields:
        for delimiter in (spec.open, spec.close):
            if delimiter is None:
                continue
            if delimiter.literals is not None:
                # A delimiter that is the anchor itself is cut after, never in half.
                inside = [x for x in delimiter.literals if _anchor_inside(anchor, x)]
            else:
                # An alternative that is the anchor itself, like a literal that is, is never cut in half.
                inside = [
                    x
                    for x in anchor.literals or ()
                    if any(
                        form in delimiter.source
                        for form in (x, pattern_literal(x), regex.escape(x))
                    )
                    and not _matches_whole(delimiter, x)
                ]
            if inside:
                found.append(
                    Diagnostic(
                        "warning",
                        "anchor-inside-delimiter",
                        anchor.path,
                        f"the start anchor {anchor.source!r} also appears inside {delimiter.path} ({inside[0]!r}): "
                        "the prefix is cut after its last match, which can fall inside that delimiter and cut it in half",
                        "anchor on text that only the assistant header contains",
                    )
                )
    return found


def _drops_text(template: ResponseTemplate, fields: list[FieldSpec]) -> list[Diagnostic]:
    """No implicit field and no catch-all open: text outside every region is thrown away."""
    if template.implicit_field is not None:
        return []
    for spec in fields:
        try:
            if all(
                spec.open.pattern.match(probe, timeout=regex_timeout(PROBE_BUDGET))
                for probe in _CATCH_ALL_PROBES
            ):
                return []
        except TimeoutError:
            continue
    return [
        Diagnostic(
            "warning",
            "drops-unclaimed-text",
            "fields",
            "no field is implicit (none lacks an open delimiter) and no open matches any text, so text "
            "outside every region (unknown headers, a format variant the delimiters miss, the model "
            "answering without markers) is dropped without a trace",
            'add an implicit field such as "content": {"close": [...]} to keep it, and list the markers it '
            "should swallow as its closes",
        )
    ]


def _anchor_found(anchor: Delimiter, prompt: str) -> bool:
    try:
        return anchor.last_match_end(prompt, 1.0) is not None
    except PatternTimeoutError:
        return True  # too slow to tell; the backtracking check reports the pattern


def lint_prompts(template: dict | str | ResponseTemplate, prompts: list[str]) -> list[Diagnostic]:
    """Check a start anchor against prompts rendered from the family's chat template.

    Args:
        template: the response template.
        prompts: prompts exactly as the chat template renders them with
            ``add_generation_prompt=True`` (`engine.chat_templates.conformance.rendered_prompts` makes them).

    Returns:
        ``[]``, or one ``anchor-not-in-prompts`` warning when no prompt contains a match of
        the start anchor (the whole prompt, earlier turns included, is then parsed as part
        of the new message). A template that does not load gives its ``template-error``.
    """
    try:
        loaded = load_template(template)
    except TemplateError as error:
        return [Diagnostic("error", "template-error", error.path, error.detail, "")]
    anchor = loaded.start_anchor
    if not prompts or any(_anchor_found(anchor, prompt) for prompt in prompts):
        return []
    return [
        Diagnostic(
            "warning",
            "anchor-not-in-prompts",
            anchor.path,
            f"the start anchor {anchor.source!r} occurs in none of the {len(prompts)} rendered prompts, so every "
            f"prompt is parsed whole, earlier turns included (the first ends {prompts[0][-40:]!r})",
            "anchor on the assistant header the chat template's generation prompt writes",
        )
    ]


def _matches_whole(delimiter: Delimiter, text: str) -> bool:
    try:
        return delimiter.pattern.fullmatch(text, timeout=regex_timeout(PROBE_BUDGET)) is not None
    except TimeoutError:
        return False  # too slow to tell; the backtracking check reports the pattern


def _all_match_whole(delimiter: Delimiter, texts: tuple[str, ...]) -> bool:
    """Whether `delimiter` matches each of `texts` whole (False when too slow to tell)."""
    return all(_matches_whole(delimiter, text) for text in texts)


def _anchor_inside(anchor: Delimiter, literal: str) -> bool:
    try:
        found = anchor.pattern.search(literal, timeout=regex_timeout(PROBE_BUDGET))
    except TimeoutError:
        return False  # too slow to tell; the backtracking check reports the pattern
    return found is not None and not (found.start() == 0 and found.end() == len(literal))


# -- one field -------------------------------------------------------------------


def _looks_like_reasoning(spec: FieldSpec) -> bool:
    """A reasoning field by its name or its open delimiter (``<think>``); never the implicit field."""
    if spec.implicit or spec.name == "content":
        return False
    texts = [spec.name.lower(), spec.open.source.lower()]
    return any(word in text for word in _REASONING_WORDS for text in texts)


def _closed_reasoning_fields(fields: list[FieldSpec]) -> list[FieldSpec]:
    """The explicit fields of `fields` that look like reasoning, have a close, and are not tool
    calls (the regions a tool call or the message's end may cut short), in order."""
    return [
        spec
        for spec in fields
        if not spec.implicit
        and spec.close is not None
        and _looks_like_reasoning(spec)
        and not spec.is_tool_call
    ]


def _field_checks(spec: FieldSpec, target: str | None = None) -> list[Diagnostic]:
    """The checks of one field. With a `target` runtime, its own name for reasoning (``thinking``
    for vLLM and SGLang, which `export --for` writes) is not a name to change."""
    found = []
    if (
        spec.name != "reasoning_content"
        and spec.name != REASONING_NAME.get(target or "")
        and not spec.is_tool_call
        and spec.content == "text"
        and _looks_like_reasoning(spec)
    ):
        found.append(
            Diagnostic(
                "warning",
                "reasoning-field-name",
                spec.path,
                f"{spec.name!r} looks like a reasoning field; chat templates read reasoning from 'reasoning_content'",
                "rename the field to reasoning_content",
            )
        )
    if spec.implicit and spec.content == "text" and spec.name != "content":
        found.append(
            Diagnostic(
                "warning",
                "content-field-name",
                spec.path,
                f"the implicit text field is named {spec.name!r}; chat templates read the answer from 'content'",
                "rename the field to content",
            )
        )
    if spec.is_tool_call and spec.name != "tool_calls":
        found.append(
            Diagnostic(
                "warning",
                "tool-call-field-name",
                spec.path,
                f"{spec.name!r} produces tool calls; chat templates and APIs read them from 'tool_calls'",
                "rename the field to tool_calls",
            )
        )
    if spec.repeats and spec.join is None and spec.content == "text" and spec.transform is None:
        found.append(
            Diagnostic(
                "warning",
                "repeats-text-without-join",
                f"{spec.path}.repeats",
                f"{spec.name} repeats and is text, so its value is a list of strings; chat templates expect one string",
                'add "join": "\\n" to concatenate the regions',
            )
        )
    if spec.transform is not None:
        used = {path.split(".")[0] for path in placeholder_paths(spec.transform)}
        for delimiter in (spec.open, spec.close):
            if delimiter is None or delimiter.literals is not None:
                continue
            for group in delimiter.pattern.groupindex:
                if group not in used:
                    found.append(
                        Diagnostic(
                            "warning",
                            "unused-capture",
                            delimiter.path,
                            f"named group {group!r} is captured but the transform never uses it",
                            f'use "{{{group}}}" in {spec.path}.transform, or make the group unnamed (?:...)',
                        )
                    )
    return found


def _tool_call_checks(fields: list[FieldSpec]) -> list[Diagnostic]:
    found = []
    tool_fields = [spec for spec in fields if spec.is_tool_call and spec.open is not None]
    for spec in tool_fields:
        close = spec.close
        if spec.content == "json" and close is not None and close.literals is not None:
            found.append(
                Diagnostic(
                    "warning",
                    "json-close-literal",
                    close.path,
                    f"{spec.name} holds JSON closed by the literal {close.literals[0]!r}: the same text inside a "
                    "JSON string argument ends the region early and the call fails to parse",
                    f"use close_pattern {json_safe_close(close.literals[0])!r} (close only after a brace)",
                )
            )
    for spec in _closed_reasoning_fields(fields):
        for tool in tool_fields:
            samples = tool.open.literals or ()
            if not samples:
                continue
            try:
                safe = all(
                    spec.close.pattern.match(sample, timeout=regex_timeout(PROBE_BUDGET))
                    for sample in samples
                )
            except TimeoutError:
                safe = False
            if not safe:
                found.append(
                    Diagnostic(
                        "warning",
                        "tool-call-swallowed-by-reasoning",
                        spec.close.path,
                        f"tool-call open inside reasoning is swallowed: if the model writes {samples[0]!r} before "
                        f"closing {spec.name}, the call stays reasoning text",
                        f"use close_pattern {close_or_lookahead(spec.close, samples)!r}",
                    )
                )
    return found


def _tool_call_pattern_swallowed_by_reasoning(
    template: ResponseTemplate, fields: list[FieldSpec]
) -> list[Diagnostic]:
    """A tool call whose open is a pattern, written before the reasoning is closed.

    Models skip the reasoning's close before a call (GLM-4.7, Kimi-K2-Thinking): unless
    the reasoning's close can end there (a lookahead on the call's open), the call stays
    reasoning text. What a match of the open starts with (`pattern_shapes.match_start`)
    stands for the open; a close that could still match there once more text arrives
    (`(?=<tool_call>\\s*\\{)`) counts as ending there. A reasoning field closed by an
    end-of-message marker the implicit field closes on too (gpt-oss's `<|end|>`) is a
    message of its own, and a call never starts inside it. Literal opens are checked by
    `_tool_call_checks`.
    """
    implicit = template.implicit_field
    found = []
    for spec in _closed_reasoning_fields(fields):
        if (
            implicit is not None
            and implicit.close is not None
            and spec.close.literals is not None
            and _all_match_whole(implicit.close, spec.close.literals)
        ):
            continue
        for tool in fields:
            if not tool.is_tool_call or tool.open is None or tool.open.literals is not None:
                continue
            leads = match_start(tool.open.pattern).leads
            if not leads:
                continue
            try:
                missed = [
                    lead.text
                    for lead in leads
                    if spec.close.pattern.match(
                        lead.text, partial=True, timeout=regex_timeout(PROBE_BUDGET)
                    )
                    is None
                ]
            except TimeoutError:
                continue
            if not missed:
                continue
            found.append(
                Diagnostic(
                    "warning",
                    "tool-call-swallowed-by-reasoning",
                    spec.close.path,
                    f"tool-call open inside reasoning is swallowed: if the model writes {tool.name}'s open_pattern "
                    f"(which starts {missed[0]!r}) before closing {spec.name}, the call stays reasoning text",
                    f"use close_pattern {close_or_lookahead(spec.close, missed)!r}, narrowing the look-ahead to what follows "
                    "in a real call if the reasoning may mention it",
                )
            )
    return found


# -- patterns ---------------------------------------------------------------------


def _patterns(template: ResponseTemplate) -> list[tuple[str, regex.Pattern]]:
    found = []
    if template.start_anchor.literals is None:
        found.append((template.start_anchor.path, template.start_anchor.pattern))
    for spec in template.fields.values():
        for delimiter in (spec.open, spec.close):
            if delimiter is not None and delimiter.literals is None:
                found.append((delimiter.path, delimiter.pattern))
        tag = spec.content_args.get("_tag_re")
        if tag is not None:
            found.append((f"{spec.path}.content_args.tag_pattern", tag))
    return found


def _pattern_checks(path: str, pattern: regex.Pattern, budget: float) -> list[Diagnostic]:
    found = []
    if not path.endswith("tag_pattern") and _matches_empty(pattern):
        opens = path.endswith("open_pattern") or path == "start_anchor_pattern"
        found.append(
            Diagnostic(
                "error" if opens else "warning",
                "pattern-matches-empty",
                path,
                f"{pattern.pattern!r} can match the empty string, so it fires without any delimiter text"
                + (
                    " (a region opens at every position)"
                    if opens
                    else " (the region closes as soon as it opens)"
                ),
                "require at least one character, e.g. replace * with + or add the delimiter's literal text",
            )
        )
    for feature in discouraged_features(pattern.pattern):
        found.append(
            Diagnostic(
                "warning",
                "unportable-pattern",
                path,
                f"{pattern.pattern!r} uses {feature}, which other regex engines (serving stacks in Rust, C++, JS) "
                "do not support or treat differently",
                "rewrite it with plain groups, lookarounds and lazy quantifiers",
            )
        )
    slow = _backtracking_probe(pattern, budget)
    if slow is not None:
        found.append(
            Diagnostic(
                "error",
                "catastrophic-backtracking",
                path,
                f"{pattern.pattern!r} took over {budget * 1000:.0f} ms on a {len(slow)}-character probe "
                f"({slow[:12]!r}...): nested or overlapping quantifiers backtrack exponentially",
                "remove the nesting (e.g. (a+)+ -> a+) or make the alternatives mutually exclusive",
            )
        )
    return found


def _matches_empty(pattern: regex.Pattern) -> bool:
    for probe in _EMPTY_PROBES:
        try:
            for match in pattern.finditer(probe, timeout=regex_timeout(PROBE_BUDGET)):
                if match.start() == match.end():
                    return True
        except TimeoutError:
            return False
    return False


def discouraged_features(source: str) -> list[str]:
    """Regex features other regex engines lack (docs/serving.md, "Portability: what each runtime
    accepts"), as phrases, in order of appearance.

    Detects backreferences (``\\1``, ``\\k<n>``, ``(?P=n)``), atomic groups ``(?>...)``,
    possessive quantifiers (``a*+``) and recursion (``(?R)``, ``(?1)``, ``(?&n)``, ``(?P>n)``).
    """
    found: list[str] = []

    def note(feature: str) -> None:
        if feature not in found:
            found.append(feature)

    i, n = 0, len(source)
    previous_quantifier = False
    while i < n:
        char = source[i]
        if char == "\\" and i + 1 < n:
            following = source[i + 1]
            if following in "123456789" or (
                following in "kg" and i + 2 < n and source[i + 2] in "<{"
            ):
                note("a backreference")
            i += 2
            previous_quantifier = False
            continue
        if char == "[":
            i = _skip_class(source, i)
            previous_quantifier = False
            continue
        if char == "(" and source.startswith("(?", i):
            rest = source[i + 2 :]
            if rest.startswith(">"):
                note("an atomic group")
            elif rest.startswith("P="):
                note("a backreference")
            elif rest.startswith(("R)", "&", "P>")) or regex.match(r"[+-]?\d+\)", rest):
                note("recursion")
            i += 2
            previous_quantifier = False
            continue
        if char == "+" and previous_quantifier:
            note("a possessive quantifier")
            previous_quantifier = False
            i += 1
            continue
        if char in "*+?":
            previous_quantifier = True
        elif char == "}" and regex.search(r"\{\d*,?\d*$", source[:i]):
            previous_quantifier = True
        else:
            previous_quantifier = False
        i += 1
    return found


def _skip_class(source: str, i: int) -> int:
    """Index just after the character class starting at `source[i] == "["`."""
    i += 1
    if i < len(source) and source[i] == "^":
        i += 1
    if i < len(source) and source[i] == "]":
        i += 1
    while i < len(source) and source[i] != "]":
        i += 2 if source[i] == "\\" else 1
    return i + 1


def _probe_alphabet(pattern: str) -> list[str]:
    """Characters worth repeating: the pattern's own literal characters, then common classes."""
    own = [c for c in dict.fromkeys(pattern) if c.isalnum() or c in " <>/_-{}\"'=:"]
    return own[:16] + [c for c in ("a", "1", " ", "\n", "<", "x") if c not in own]


def _backtracking_probe(pattern: regex.Pattern, budget: float) -> str | None:
    """A probe string on which `pattern` exceeds `budget` seconds, or None."""
    for char in _probe_alphabet(pattern.pattern):
        for probe in (char * PROBE_REPEAT + "\x00", char * PROBE_REPEAT):
            try:
                pattern.search(probe, timeout=regex_timeout(budget))
                pattern.search(probe, partial=True, timeout=regex_timeout(budget))
            except TimeoutError:
                return None if out_of_time() else probe  # a spent budget proves nothing
    return None


def _template_strings(source: dict) -> list[tuple[str, str, bool]]:
    """Every literal and pattern of a template dict as ``(path, text, is_literal)``."""
    found: list[tuple[str, str, bool]] = []

    def add(path: str, value: Any, literal: bool) -> None:
        if isinstance(value, str):
            found.append((path, value, literal))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, str):
                    found.append((f"{path}[{index}]", item, literal))

    add("start_anchor", source.get("start_anchor"), True)
    add("start_anchor_pattern", source.get("start_anchor_pattern"), False)
    for name, spec in (source.get("fields") or {}).items():
        if isinstance(spec, dict):
            for key in ("open", "close"):
                add(f"fields.{name}.{key}", spec.get(key), True)
                add(f"fields.{name}.{key}_pattern", spec.get(f"{key}_pattern"), False)
    return found


def lint_tokenizer(template: dict | str | ResponseTemplate, tokenizer: Any) -> list[Diagnostic]:
    """Check a template against the tokenizer of the model it parses, as token ids read it.

    Parsing token ids (``tokenizer=``), a control token is a delimiter only when the model
    generated it as its id (`engine.token_ids`). So:

    * ``delimiter-not-a-control-token`` (warning): a literal delimiter that looks like a control
      token but is not encoded as one: the same characters with whitespace added or removed
      (``</tool_call >``), or a piece of one (``<tool_call`` split from its ``>``). The model
      writes the control token as its id, which this literal never matches.
    * ``control-token-unused`` (warning): a control token that the chat template writes (so
      the model sees and writes it) appears nowhere in the template: its text lands in
      whatever field is open.

    Args:
        template: the response template (dict, JSON text or loaded).
        tokenizer: a Hugging Face tokenizer (its added tokens and chat template are read).

    Returns:
        The findings, delimiter findings first, each with the template key at fault.

    Raises:
        TemplateError: the template is invalid.
    """
    from ..token_ids import chat_template_literals, control_tokens

    source = load_template(template).source
    control = control_tokens(tokenizer)
    spellings = set(control.values())
    strings = _template_strings(source)
    found: list[Diagnostic] = []
    for path, literal, is_literal in strings:
        if not is_literal or literal in spellings:
            continue
        squeezed = "".join(literal.split())
        ids = tokenizer.encode(literal, add_special_tokens=False)
        if any(token_id in control for token_id in ids):
            continue  # it holds a control token: matched as its id
        near = sorted(
            token
            for token in spellings
            if squeezed == token
            or (len(squeezed) >= 3 and squeezed != literal.strip() and token in squeezed)
            or (len(squeezed) >= 3 and (token.startswith(squeezed) or token.endswith(squeezed)))
        )
        if near:
            found.append(
                Diagnostic(
                    "warning",
                    "delimiter-not-a-control-token",
                    path,
                    f"{literal!r} is not the control token {near[0]!r}: this tokenizer encodes it as "
                    f"{len(ids)} ordinary token(s), so, parsing token ids, it never matches the "
                    f"{near[0]!r} the model generates as one id (and matches only the same text "
                    "spelled out)",
                    f"write {near[0]!r}",
                )
            )
    chat_template = getattr(tokenizer, "chat_template", None) or ""
    texts = list(chat_template.values()) if isinstance(chat_template, dict) else [chat_template]
    written = "\0".join(chat_template_literals(text) for text in texts if text)
    mentioned = "\0".join(
        text if is_literal else text.replace("\\", "") for _, text, is_literal in strings
    )
    for token in sorted(spellings):
        if token in written and token not in mentioned:
            found.append(
                Diagnostic(
                    "warning",
                    "control-token-unused",
                    "fields",
                    f"the chat template writes the control token {token!r}, but no delimiter or "
                    "anchor of the template mentions it: when the model writes it, its text goes "
                    "to whichever field is open",
                    f"end a field with {token!r}, or open one with it, if the model writes it in "
                    "its answers",
                )
            )
    return found
