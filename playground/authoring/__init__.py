"""The author's tools on the page: the template editor and what checks a template.

`template_editor`, `diagnostics` and `editor_paths` (the editor), `inference`,
`inference_failures` and `call_sketch` (Start from a model, and the way out of a failed
inference),
`chat_template_check`, `stream_check`, `fit` (which template fits), `test_cases`, `export`
and `share`.
"""
