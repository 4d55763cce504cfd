"""The parse model: one parse as the page keeps it, whole or streamed.

`parse_view` (a `ParseView`, and `LiveParse`: the engine's tracer with its events kept
compactly by `event_store`), `replay` (a replay's inputs and state, and `paced_feed`, the one
loop Play and Generate live run) and `chunking` (a generation cut into stream chunks), `causes` (the
diagnoses a view carries, said in one line), `derived` (views made on demand, marked stale)
`session` (one visitor's state) and `workspace` (the four inputs every parse
reads, as one value).
"""
