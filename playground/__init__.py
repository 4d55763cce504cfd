"""The playground app's parts: everything `app.py` builds its Gradio page from.

`engine` is the library; this package holds what only the app (and its scripts) need,
one concept a module, in rooms (docs/architecture.md draws the map and its import rules):

- top: `outputs` (the named outputs, their groups, and `render`: every parse panel of a view),
  `wiring` (handlers bound to the layout by name), `api` (the public API endpoints), `catalog`
  (the samples and `templates/` files offered).
- `handlers/`: the page's event handlers, plain functions from named inputs to named outputs,
  a module a panel as in `layout/` (`front_door`, `start_from_model`, `workspace`,
  `generate_live`, `editor`, `export`, `share`, `replay`, `region_map`, `message`,
  `event_log`, `checks`), and `event_data` (what a click sent, read safely).
- `layout/`: the page's layout, a module a panel (`front_door`, `start_from_model`, `workspace`,
  `generate_live`, `editor`, `export`, `share`, `replay`, `region_map`, `message`, `event_log`,
  `checks`), each building its components and binding its handlers; only `app.py` imports it.
- `parse/`: `parse_view` (a `ParseView`, and `LiveParse`: the engine's tracer fed chunk by
  chunk or whole), `event_store` (events kept compactly), `token_reading` (a pasted output
  read through a tokenizer), `replay` (a replay's inputs and state, the one paced feed loop),
  `chunking` (how a replay cuts a generation), `causes` (the diagnoses a view carries, said in
  one line), `derived` (views made on demand, marked stale), `workspace` (the inputs every
  parse reads, as one value), `session` (one visitor's state, its Restore stack, and the open
  pages' sessions), `weight` (the bytes an object keeps).
- `panels/`: `region_map`, `event_log`, `match_list`, `message_view`, `value_changes`,
  `status`, `explain`, `field_reference`, `reference_diff`, `code_snippet`, `unexplained` (the
  text no field explains), `stream_report` (the Stream checks panel),
  `test_results` (the Tests panel), `diagnostics_panel` (the editor's diagnostics), `notes` (the handlers'
  short notes), `inference_panel`, `failing_rows` and `check_matrix` (Start from a model's
  inference, what fails in it and the candidates, the chat-template check); `markup`, `fragments`, `styles` and `page_script` (HTML helpers, the Jinja2
  templates' environment, the stylesheet, the page's JavaScript).
- `authoring/`: `template_editor`, `diagnostics`, `editor_paths` (the editor), `inference`,
  `inference_failures`, `call_sketch` (Start from a chat template), `chat_template_check`,
  `output_evidence` (what confirms a template's delimiters), `template_edits` (an edit as data),
  `stream_check`, `fit`, `test_cases`, `export`, `share`.
- `model/`: `generation` (load a model and stream its output: with the engine's grammar
  matching, the only code that imports torch), `background` (a load in a background thread),
  `loaded` (the models kept loaded), `hub` (a hub
  id failing fast when the Hugging Face Hub is out of reach).
- `server/`: `limits` (caps and budgets), `queues` (the kinds of work, their slots and
  queues), `input_readers` (a visitor's input read within the caps), `admission` (each
  kind's queue and each client's share), `workers` (third-party code in killable processes),
  `uploads` (each client's uploads within a quota), `folders` (which server folders a
  visitor may name), `redact` (no server path or Python type in a message), `downloads`
  (files for download, cleaned up), `allocator` (freed memory back to the operating system),
  `session_store` (Gradio's own store of page sessions, kept lean).

See docs/app.md.
"""
