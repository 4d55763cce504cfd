"""What a template author runs on a parse: built on the parser core, never needed to parse.

- `trace`: where every character of a parse went: the `Tracer`, read at any moment while a
  parse is fed (spans with stream and source offsets, events tied to them, failures), and
  the warnings and diagnoses it works out once when the parse ends; `trace`, a whole parse.
- `faults`: the warnings a finished parse shows (a close with no open, a swallowed tool-call
  open, discarded text, a close inside a JSON string).
- `diagnosis`: the cause of a parse in the author's terms (the start anchor, near misses of
  delimiters, regions that never closed).
- `pattern_explain`: a delimiter pattern explained piece by piece.
- `lint`: templates that load but are probably wrong.
- `suggested_patterns`: the delimiter patterns lint and a trace's warnings suggest (a close
  that also ends before a tool call, a close that fires only after JSON).
- `stream_checks`: does streaming give the one-shot result for every chunking?
- `samples`: the shipped sample generations with their expected messages.
- `time_budget`: one deadline over all of a tool's regex calls (lint, diagnosis, a trace's
  warnings), each call given at most what is left.
"""
