"""Grammars from response templates: constrain generation so that the output always parses.

A response template says how to read a model's output; the same file also says what an
output must look like to be read. `derive_grammar` turns a template and a request (tools,
tool choice, parallel calls, the prompt's prefix) into a grammar every output of which the
template parses, with every tool call's arguments valid against its tool's schema, and
writes it in three formats.

Modules:

* `ir`: the grammar's building blocks (literals, character sets, free text, JSON values, rules);
* `patterns`: delimiter regexes read as grammar (`alternatives`, `leads`, `to_regex`);
* `schema`: JSON Schema as grammar in three dialects (JSON, bare keys, Python literals);
* `bounds`: a schema's numeric bounds as digits, string patterns as Lark regexes;
* `json_excludes`: a tool's schema as the engines take it whole (llguidance's ``%json`` in
  the Lark form, xgrammar's ``json_schema`` in the structural tag), strings kept off the
  delimiters, and what each engine ignores;
* `tools`: tools, the tool choice, and where a call's name and arguments come from
  (the field's transform read backwards);
* `regions`: how each region opens, what its body is, how it closes;
* `derive`: the output plan and `derive_grammar` (with its self-check);
* `budget`: what deriving and writing one grammar may spend (`GrammarBudget`: a deadline,
  nodes, characters; `GrammarTooLarge`), for grammars derived from untrusted input;
* `structural_tag`, `lark`, `gbnf`: the three output formats (xgrammar / vLLM / SGLang,
  llguidance, llama.cpp); `rule_text`: what the Lark and GBNF writers share (naming and
  writing rules, lowering JSON values, the budget);
* `matching`: compiling a grammar with xgrammar or llguidance, a `transformers` logits
  processor, and random walks through a grammar (imports the engines lazily).

Nothing here is imported by `import engine`; the engines (``pip install .[grammar]``) are
needed only for `matching`.
"""

from .budget import GrammarBudget, GrammarTooLarge
from .derive import DerivedGrammar, derive_grammar
from .patterns import Unconstrainable
from .tools import ToolChoice, ToolSpec, tool_specs

__all__ = [
    "DerivedGrammar",
    "GrammarBudget",
    "GrammarTooLarge",
    "ToolChoice",
    "ToolSpec",
    "Unconstrainable",
    "derive_grammar",
    "tool_specs",
]
