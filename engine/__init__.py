"""Response templates: turn a chat model's raw output back into a structured message.

`from engine import parse_response, ResponseParser` is a drop-in replacement
for `transformers.utils.chat_parsing`, with positions, diagnostics and linear
streaming on top. The format is described in docs/template-language.md.

`Span` is the former name of the parser's span record, kept so that imports of it
work: the one span type is now `TraceSpan` (what `Tracer` and `trace` give).
"""

from .authoring.lint import Diagnostic, lint, lint_prompts
from .authoring.stream_checks import StreamCheckReport, check_stream
from .authoring.trace import Trace, Tracer, TraceSpan, trace
from .batch.columns import BatchInputError, parse_batch
from .chat_templates.conformance import ConformanceReport, SituationResult, check_conformance
from .chat_templates.infer import InferenceError, InferredTemplate, choose_template, infer_template
from .chat_templates.render import load_chat_template
from .errors import (
    ParseDeadlineError,
    ParseLimitError,
    PatternTimeoutError,
    ResponseParseError,
    TemplateError,
)
from .events import message_from_events
from .openai_view import OpenAIView, openai_deltas, openai_view
from .parser import ResponseParser, parse_response
from .template import FieldSpec, ResponseTemplate, load_template, use_template_source
from .template_files import TemplateFile, list_templates, template_source
from .tokenizer import (
    IncrementalDecoder,
    TokenResponseParser,
    attach_response_template,
    get_response_parser,
)

# The front door reads files for the core: `load_template("qwen3")` and a path are looked up here.
use_template_source(template_source)

Span = TraceSpan

__all__ = [
    "BatchInputError",
    "parse_batch",
    "IncrementalDecoder",
    "TokenResponseParser",
    "attach_response_template",
    "get_response_parser",
    "FieldSpec",
    "ParseDeadlineError",
    "ParseLimitError",
    "PatternTimeoutError",
    "ResponseParseError",
    "ResponseParser",
    "ResponseTemplate",
    "Span",
    "TemplateError",
    "load_template",
    "parse_response",
    "ConformanceReport",
    "Diagnostic",
    "SituationResult",
    "check_conformance",
    "InferenceError",
    "InferredTemplate",
    "infer_template",
    "choose_template",
    "load_chat_template",
    "lint_prompts",
    "OpenAIView",
    "StreamCheckReport",
    "Trace",
    "TraceSpan",
    "Tracer",
    "check_stream",
    "lint",
    "list_templates",
    "TemplateFile",
    "message_from_events",
    "openai_deltas",
    "openai_view",
    "trace",
]
