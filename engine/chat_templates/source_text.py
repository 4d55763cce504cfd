"""Template inference, the chat template's source: the markers it tests for, splits on or strips.

A chat template often handles a marker without ever rendering it: it drops reasoning from
history with ``content.split(CLOSER)[-1]``, tests ``OPENER in content``, strips a marker off
an answer, or writes markers around a message's reasoning only in some turns. Those string
literals are read from the template's syntax tree (jinja2's parser, not a text search, so
comments and plain text do not count) and proposed as markers; a proposal is kept only when
a render confirms it (the chat template drops an earlier turn's text up to a proposed
reasoning closer), and the literals no render writes are said.
"""

from __future__ import annotations

import functools

from .markup import MARKUP_TOKEN, marker_pairs
from .parts import Parts
from .probes import REASONING_KEYS, Render
from .reasoning import propose_from_pairs

# String methods and filters whose literal arguments are markers the template looks for.
_LOOKING_METHODS = {
    "split", "rsplit", "startswith", "endswith", "replace", "strip", "lstrip", "rstrip",
    "find", "rfind", "index", "partition", "rpartition", "count",
}  # fmt: skip


@functools.lru_cache(maxsize=8)
def syntax_tree(chat_template: str):
    """The chat template's syntax tree (jinja2's parser; the learners only read it), parsed once
    per chat template; None when it does not parse or jinja2 is not installed."""
    try:
        import jinja2
    except ImportError:
        return None
    try:
        return jinja2.Environment(extensions=["jinja2.ext.loopcontrols"]).parse(chat_template)
    except jinja2.TemplateSyntaxError:
        return None


def source_markers(chat_template: str) -> list[str]:
    """The markup-token literals the chat template tests for (``in``), looks for or strips
    (string methods and the ``replace`` filter), or concatenates with a message's reasoning, in
    source order. [] when the source does not parse."""
    tree = syntax_tree(chat_template)
    if tree is None:
        return []
    from jinja2 import nodes

    found: list[str] = []

    def literals(*items) -> None:
        for item in items:
            if isinstance(item, nodes.Const) and isinstance(item.value, str):
                found.append(item.value)

    for node in tree.find_all((nodes.Compare, nodes.Call, nodes.Filter, nodes.Add, nodes.Concat)):
        if isinstance(node, nodes.Compare) and any(op.op in ("in", "notin") for op in node.ops):
            literals(node.expr, *(op.expr for op in node.ops))
        elif isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr):
            if node.node.attr in _LOOKING_METHODS:
                literals(*node.args)
        elif isinstance(node, nodes.Filter) and node.name == "replace":
            literals(*node.args[:1])
        elif isinstance(node, (nodes.Add, nodes.Concat)) and _reads_reasoning(node):
            operands = node.nodes if isinstance(node, nodes.Concat) else (node.left, node.right)
            literals(*operands)
    return [text for text in dict.fromkeys(found) if MARKUP_TOKEN.fullmatch(text.strip())]


def _reads_reasoning(node) -> bool:
    """Whether an expression reads a message's reasoning (by one of the keys chat templates use)."""
    from jinja2 import nodes

    for item in node.find_all((nodes.Getattr, nodes.Getitem, nodes.Name)):
        name = (
            item.attr
            if isinstance(item, nodes.Getattr)
            else item.name
            if isinstance(item, nodes.Name)
            else getattr(item.arg, "value", None)
        )
        if name in REASONING_KEYS:
            return True
    return False


def propose_from_source(parts: Parts, chat_template: str) -> None:
    """Reasoning markers from the source where no render shows reasoning: a closer it splits or
    tests on, paired with its opener, kept when the chat template confirms it.

    Raises:
        InferenceTimeout: past the deadline.
    """
    markers = [marker.strip() for marker in source_markers(chat_template)]
    evidence = (Render("the chat template's source: the markers it looks for", "\n".join(markers)),)
    propose_from_pairs(
        parts,
        marker_pairs(markers, lone_closers=True),
        evidence,
        "the chat template's source looks for it (or for its closer), and drops an earlier "
        "turn's text up to the closer",
        "the chat template's source looks for it",
    )


def note_source(parts: Parts, chat_template: str, written: set[str]) -> None:
    """Say the markers the source looks for that no render writes (`written`: the markup tokens
    of every render) and no field uses."""
    markers = [(each.strip(),) for each in source_markers(chat_template)]
    unseen = [marker for (marker,) in parts.unwritten(markers, written)]
    if unseen:
        parts.book.notes.append(
            "the chat template's source looks for "
            + ", ".join(repr(marker) for marker in unseen)
            + ", which no render writes: if the model writes it, example outputs that show it "
            "let inference place it"
        )


def alternative_ends(chat_template: str, closes: list[str]) -> list[tuple[str, str]]:
    """(marker, the close it stands for) for each marker the source writes instead of a content
    close, in another branch of the same ``if``: each branch writes one markup token and nothing
    else, and one of them is in `closes` (``{% if builtin_tools %}<|x|>{% else %}<|y|>{% endif
    %}``, ``<|y|>`` known). In source order, none of `closes`; [] when the source does not parse."""
    tree = syntax_tree(chat_template)
    if tree is None:
        return []
    from jinja2 import nodes

    def written(body: list) -> str:
        """The one markup token `body` writes, when it writes nothing else ("" otherwise)."""
        if not body or not all(isinstance(node, nodes.Output) for node in body):
            return ""
        text = ""
        for output in body:
            for node in output.nodes:
                if isinstance(node, nodes.TemplateData):
                    text += node.data
                elif isinstance(node, nodes.Const) and isinstance(node.value, str):
                    text += node.value
                else:
                    return ""
        text = text.strip()
        return text if MARKUP_TOKEN.fullmatch(text) else ""

    found: dict[str, str] = {}
    for branch in tree.find_all(nodes.If):
        ends = [written(branch.body), *(written(other.body) for other in branch.elif_)]
        ends.append(written(branch.else_))
        known = next((end for end in ends if end in closes), None)
        if all(ends) and known is not None:
            for end in ends:
                if end not in closes:
                    found.setdefault(end, known)
    return list(found.items())


def learn_alternative_ends(parts: Parts, chat_template: str) -> None:
    """Content closes the source writes where, in another branch, it writes one already known
    (`alternative_ends`): the turn ends either way (an option no caller passes chooses)."""
    for end, known in alternative_ends(chat_template, parts.closes):
        if parts.add_close(end):
            parts.book.find(
                "fields.content.close",
                end,
                f"the chat template's source writes it instead of {known!r}, in another branch of "
                "the same condition: the turn ends either way",
                Render("the chat template's source: the branches' markers", f"{end}\n{known}"),
            )
