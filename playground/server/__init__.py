"""Server guards: what keeps one visitor from exhausting a public Space.

`limits` (caps and budgets, PLAYGROUND_LIMITS), `queues` (the kinds of work, their slots and
queues), `input_readers` (a visitor's input read within the caps), `admission` (who may join a
queue: each client's share),
`workers` (killable worker processes), `folders` (which folders a visitor may name),
`redact` (no server path or Python type in a message), `downloads` and `allocator`.
"""
