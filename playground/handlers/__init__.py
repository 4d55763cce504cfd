"""The page's event handlers, a module a panel (as `playground/layout/`): plain functions from
named inputs to named outputs.

Each parameter is named after the page component it reads (`template_text`, `prefix`,
`generation`, `tools_text`, ...; `session` is the visitor's `Session`; `event` is the data a
custom-HTML panel sent, read by `event_data`), and each handler returns a dict keyed by the
output names it declares with `@produces` (see `playground.outputs`, which also holds the
groups of output names). Tests call them directly; each panel's module in `playground/layout/`
binds its room's handlers to the page's components by those names. A new handler goes in the
module of the panel whose component triggers it.

Nothing is wiped: input that cannot be parsed (a template that is not valid yet, an oversized
text) keeps the last good parse on screen, marked stale, with the message saying what is wrong.

- `workspace`: `parse`, `set_reading`, `choose_template`, `fit_templates`, `use_best` (and the parse every
  other room draws with); `event_data`: what a
  click sent, read safely.
- `front_door`: `load_sample`, `load_sample_at`.
- `start_from_model`: `check_chat_template`, `infer_chat_template`, `show_finding`, `inference_click`, `load_check_row`.
- `generate_live`: `request_stop`, `generate`, `use_model_template_now`, `use_live_output`.
- `editor`: `start_from`, `diagnose`, `fix_template`, `format_editor`, `reset_template`, `restore_template`, `restore_back`.
- `export`: `export_template`.
- `share`: `copy_as_code`, `share`, `open_page`, `upload_state`.
- `replay`: `replay_step`, `replay_back`, `replay_seek`, `replay_stop`, `replay_play`.
- `region_map`: `set_view` (every display option and the reading, one listener), `set_display`,
  `explain_span`.
- `message`: `select_tab`, `select_results_tab`.
- `event_log`: `show_event`.
- `checks`: `run_tests`, `add_test_case`, `tests_click`, `export_cases`, `compare_reference`.
"""

from __future__ import annotations

from .checks import add_test_case, compare_reference, export_cases, run_tests, tests_click
from .editor import (
    diagnose,
    fix_template,
    format_editor,
    reset_template,
    restore_back,
    restore_template,
    start_from,
)
from .event_log import show_event
from .export import export_template
from .front_door import load_sample, load_sample_at
from .generate_live import generate, request_stop, use_live_output, use_model_template_now
from .message import select_results_tab, select_tab
from .region_map import explain_span, set_display, set_view
from .replay import replay_back, replay_play, replay_seek, replay_step, replay_stop
from .share import copy_as_code, open_page, share, upload_state
from .start_from_model import (
    check_chat_template,
    infer_chat_template,
    inference_click,
    load_check_row,
    show_finding,
)
from .workspace import choose_template, fit_templates, parse, set_reading, use_best

__all__ = [
    "load_sample",
    "load_sample_at",
    "check_chat_template",
    "infer_chat_template",
    "show_finding",
    "inference_click",
    "load_check_row",
    "parse",
    "set_reading",
    "choose_template",
    "fit_templates",
    "use_best",
    "request_stop",
    "generate",
    "use_model_template_now",
    "use_live_output",
    "start_from",
    "diagnose",
    "fix_template",
    "format_editor",
    "reset_template",
    "restore_template",
    "restore_back",
    "export_template",
    "copy_as_code",
    "share",
    "open_page",
    "upload_state",
    "replay_step",
    "replay_back",
    "replay_seek",
    "replay_stop",
    "replay_play",
    "set_display",
    "set_view",
    "explain_span",
    "select_tab",
    "select_results_tab",
    "show_event",
    "run_tests",
    "add_test_case",
    "tests_click",
    "export_cases",
    "compare_reference",
]
