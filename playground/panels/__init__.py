"""The page's panels: plain functions from a `ParseView` (or an authoring tool's records) to HTML
or text, their fragments drawn by autoescaping Jinja2 templates (`fragments`).

`region_map`, `event_log`, `match_list`, `message_view`, `value_changes`, `status`, `explain`,
`field_reference`, `reference_diff`, `code_snippet`, `inference_panel`, `failing_rows`,
`check_matrix`; `markup`, `fragments`, `styles` and `page_script` are the HTML helpers, the
templates' environment, the stylesheet and the page's JavaScript.
"""
