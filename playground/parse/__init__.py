"""The parse model: one parse as the page keeps it, whole or streamed.

`parse_view` (a `ParseView` and `LiveParse`), `event_store` (events kept compactly),
`replay` and `chunking` (a generation fed as a stream), `causes` (the diagnosis of a view),
`derived` (views made on demand, marked stale) and `session` (one visitor's state).
"""
