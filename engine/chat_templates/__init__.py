"""A response template against a model's chat template: render, compare, check, infer.

- `render`: chat templates loaded and rendered with transformers' own rendering.
- `turns`: the render diffing shared by the check and inference (common prefixes, where a
  turn starts in a render, argument defects).
- `conformance`: the matrix of conversation situations, rendered and read back.
- `families`: which shipped template a chat template calls for.
- `probes`, `calls`, `infer`: template inference from probe renders (the probe
  conversations, the tool-call syntax, and the inference that puts a template together).
"""
