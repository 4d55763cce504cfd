"""A response template against a model's chat template: render, compare, check, infer.

- `render`: chat templates loaded and rendered with transformers' own rendering (robust to
  variables no caller passes), and tokenizers read.
- `turns`: the render diffing shared by the check and inference (common prefixes, where a
  turn starts in a render, argument defects).
- `conformance`: the matrix of conversation situations, rendered and read back.
- `families`: which shipped template a chat template calls for.
- Template inference (`infer` is its entry point: `infer_template`, `choose_template`):
  `probes` (the probe conversations and their needles), `markup` (markup tokens, openers
  and closers, patterns from rendered text), `parts` (the shared state and its notebook of
  findings), `anchor`, `reasoning`, `content_closes` (one module per part of the template),
  `examples` (labelled outputs aligned into a template: the example outputs, and the renders,
  whose calls it learns), `calls` (the call syntax the learners share, and why none was read),
  `source_text`, `system_prompt` and `tokens` (one module per other evidence source),
  `align`, `call_readers`, `argument_readers`, `example_fields` and `unexplained` (labelled
  outputs aligned with their messages and generalised into fields), `learner` (the learners
  in order) and `candidates` (the parts put together, most specific first); `author_loop`
  (learn, add the first output the template misreads to the examples, learn again).
"""
