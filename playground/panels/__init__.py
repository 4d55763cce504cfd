"""The page's panels, drawn from a `ParseView`: plain functions from a view to HTML or text.

`region_map`, `event_log`, `match_list`, `message_view`, `value_changes`, `status`, `explain`,
`field_reference`, `reference_diff`, `code_snippet`; `markup`, `styles` and `page_script`
are the HTML helpers, the stylesheet and the page's JavaScript.
"""
