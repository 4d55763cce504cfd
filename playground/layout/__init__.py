"""The page's layout, a module a panel: each creates its panel's components on the `Page`
(`playground.wiring`) and binds its handlers to them.

`app.py` draws the page's skeleton (the two columns and their tabs) and calls each panel's
`build` in page order, then each panel's `wire` once every component exists (a handler may
read or write a component of another panel). What panels share is passed in: the `Page`, the
first sample's loaded page (`first`, what every panel shows before any event) and, for the
panels that start with the page, its load event.

- `front_door`: the header and its front door, the Samples tab.
- `start_from_model`: Start from a model (inference and the conformance check).
- `workspace`: Paste & parse (the prefix, the generation, the tools, the template chosen, Parse
  and Which template fits?).
- `generate_live`: Generate live and its settings, the model's load status.
- `editor`: the Template tab (the editor, its diagnostics, Format, Reset, Restore).
- `export`: Download / export, under the editor.
- `share`: share links, Copy as code, state files.
- `replay`: the replay bar (Back, Step, Play, Stop, the scrubber) and its settings.
- `region_map`: the display options, the region map and #explain.
- `message`: the Message, initial_events and OpenAI stream tabs.
- `event_log`: the Event log and Matches tabs.
- `checks`: the Stream checks, Tests and vs transformers tabs.

Only `app.py` imports this room; it never imports the public API (`playground.api`).
"""
