"""Copy as code: the page's template and input as a Python snippet that runs as it is.

The snippet parses the same text the page shows with the library
(``from engine import ...``): one shot with `parse_response`, then streamed with
`ResponseParser` in the replay's chunking, printing the events. It parses
leniently (``on_error="keep"``) as the page does, so it gives the message the
page shows. Texts are Python literals (`repr`), the template and tools as
Python dicts (`pprint`), so nothing needs escaping by hand.
"""

from __future__ import annotations

import pprint

from ..parse.chunking import make_chunks
from ..server.input_readers import InputError, read_template, read_tools


def code_snippet(
    template_text: str,
    prefix: str,
    generation: str,
    tools_text: str,
    how: str = "chars",
    size: int = 1,
    seed: int = 0,
    points: str = "",
) -> str:
    """The snippet (see the module docstring). Raises InputError for a template or tools that
    do not read (the page says so instead)."""
    template = read_template(template_text)
    tools = read_tools(tools_text)
    if how == "chars":
        chunking = f"[generation[i : i + {int(size or 1)}] for i in range(0, len(generation), {int(size or 1)})]"
    else:
        chunks = make_chunks(generation or "", how, size, seed, points)
        chunking = pprint.pformat(chunks, width=100)
    return "\n".join(
        [
            "from engine import ResponseParser, parse_response",
            "",
            f"template = {pprint.pformat(template, width=100, sort_dicts=False)}",
            f"prefix = {prefix or ''!r}",
            f"generation = {generation or ''!r}",
            f"tools = {pprint.pformat(tools, width=100, sort_dicts=False)}",
            "",
            '# One shot (on_error="keep": a region that does not parse keeps its text, as the playground does).',
            'message = parse_response(generation, template, prefix=prefix, tools=tools, on_error="keep")',
            "print(message)",
            "",
            "# Streamed, in the replay's chunks: the events as they come.",
            'parser = ResponseParser(template, prefix=prefix, tools=tools, on_error="keep")',
            "print(parser.initial_events)",
            f"for chunk in {chunking}:",
            "    for event in parser.feed(chunk):",
            "        print(event)",
            "streamed, final_events = parser.finalize()",
            "print(final_events)",
            "assert streamed == message",
            "",
        ]
    )


def code_snippet_or_error(*args) -> tuple[str, str]:
    """(snippet, "") or ("", the error for the page)."""
    try:
        return code_snippet(*args), ""
    except InputError as error:
        return "", str(error)
