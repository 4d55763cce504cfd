"""The playground app's parts: everything `app.py` wires into its Gradio layout.

`engine` is the library; this package holds what only the app (and its
scripts) need, one concept a module:

- `handlers` (and `live` for Generate live): the page's event handlers, plain
  functions from named inputs to named outputs (`outputs`), bound to the
  layout by name (`wiring`); `api`: the public API endpoints.
- `session`: one visitor's state (and the open pages' sessions, freed when a
  page closes or past their memory caps); `limits`: input caps and time
  budgets; `queues`: the kinds of work and their slots; `input_readers`: a
  visitor's input read within the caps; `admission`: each kind's queue and each client's
  share, checked before a job is queued; `workers`: third-party code in
  worker processes killed past their budget; `folders`: which server folders
  a visitor may name; `redact`: no server path or Python type in a message;
  `downloads`: files written for download, cleaned up; `allocator`: freed
  memory back to the operating system.
- `parse_view`: a parse as the page shows it (its events kept compactly by
  `event_store`); `region_map`, `event_log`, `match_list`,
  `message_view`, `status`: the panels drawn from it; `causes`: its diagnosis
  (the cause, in the template's terms); `derived`: views made on demand and
  marked stale when the input changes; `code_snippet`: Copy as code; `styles`, `markup` and
  `page_script`: the page's CSS, HTML helpers and JavaScript.
- `chunking`, `replay`, `stream_check`: replaying a generation as a stream.
- `catalog` (samples and templates/), `template_editor`, `export`, `share`.
- `generation`: running a model (the only module that imports torch); `hub`:
  a hub id failing fast when the Hugging Face Hub is out of reach.

See docs/app.md.
"""
