"""The page's own JavaScript, in one place (everything else is Gradio components).

Each constant is a JS function body or arrow function that `app.py` hands to
Gradio (`js=` on a listener, `js_on_load=` on a `gr.HTML`).
"""

# Share button, after the server made the query string: build the whole URL,
# copy it to the clipboard when the browser allows, and show it.
SHARE_JS = """(query) => {
  const url = window.location.origin + window.location.pathname + query;
  if (navigator.clipboard) { navigator.clipboard.writeText(url).catch(() => {}); }
  return url;
}"""
