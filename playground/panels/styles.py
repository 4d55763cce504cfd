"""The page's CSS (one stylesheet for every panel), passed to `demo.launch(css=...)`.

Colours are set for both themes: Gradio puts `dark` on <body> when the system
(or `?__theme=dark`) asks for it. A `.dark` rule names one selector: Gradio
rewrites this stylesheet, and in a selector list it breaks every `.dark`
selector after the first. Every text colour here is paired with its
own background so text has at least 4.5:1 contrast and muted text at least
3:1 in either theme (the browser tests measure it from computed styles).
Field colours are slots `rt-f0`..`rt-f7` (see `region_map.field_slots`):
bodies use the slot's tint, delimiters its strong colour.
"""

# (tint, strong) per slot: light theme, then dark theme.
LIGHT_SLOTS = (
    ("#dbeafe", "#1d4ed8"),
    ("#dcfce7", "#15803d"),
    ("#fef3c7", "#b45309"),
    ("#fce7f3", "#be185d"),
    ("#ede9fe", "#6d28d9"),
    ("#cffafe", "#0e7490"),
    ("#ffedd5", "#c2410c"),
    ("#e0e7ff", "#4338ca"),
)
DARK_SLOTS = (
    ("#1e3a8a", "#93c5fd"),
    ("#14532d", "#86efac"),
    ("#78350f", "#fcd34d"),
    ("#831843", "#f9a8d4"),
    ("#4c1d95", "#c4b5fd"),
    ("#164e63", "#67e8f9"),
    ("#7c2d12", "#fdba74"),
    ("#312e81", "#a5b4fc"),
)


def _slots() -> str:
    rules = []
    for slot, ((tint, strong), (dark_tint, dark_strong)) in enumerate(zip(LIGHT_SLOTS, DARK_SLOTS)):
        rules.append(f".rt-f{slot} {{ --rt-tint: {tint}; --rt-strong: {strong}; }}")
        rules.append(f".dark .rt-f{slot} {{ --rt-tint: {dark_tint}; --rt-strong: {dark_strong}; }}")
    return "\n".join(rules)


PAGE_CSS = (
    """
:root { --rt-text: #111827; --rt-bg: #ffffff; --rt-muted: #4b5563; --rt-on-strong: #ffffff; }
.dark { --rt-text: #f3f4f6; --rt-bg: #111827; --rt-muted: #9ca3af; --rt-on-strong: #111827; }
/* Gradio's own colours, darkened where its text falls short of 4.5:1 (buttons, the selected tab, muted text) */
:root { --button-primary-background-fill: #c2410c; --button-primary-background-fill-hover: #9a3412; --button-primary-text-color: #ffffff;
  --button-cancel-background-fill: #b91c1c; --button-cancel-background-fill-hover: #991b1b; --button-cancel-text-color: #ffffff;
  --color-accent: #c2410c; --body-text-color-subdued: #4b5563; }
.dark { --button-primary-background-fill: #c2410c; --button-primary-background-fill-hover: #9a3412; --button-primary-text-color: #ffffff;
  --button-cancel-background-fill: #b91c1c; --button-cancel-background-fill-hover: #991b1b; --button-cancel-text-color: #ffffff;
  --color-accent: #fb923c; --body-text-color-subdued: #9ca3af; }
button.selected[role=tab] { color: #9a3412; }
.dark button.selected[role=tab] { color: #fdba74; }
footer button, footer a { color: #4b5563 !important; }
.dark footer button { color: #d1d5db !important; }
.dark footer a { color: #d1d5db !important; }
/* The code editors' syntax colours (CodeMirror's, whose class names are generated) are made
   readable by the page script (PAGE_JS's rtReadableCode: each colour darkened or lightened to
   4.5:1 against the editor's background); the chat view's code tokens have fixed names. */
/* Gradio dims a tool call's message to 0.8 twice over: its text then falls short of 4.5:1 */
#chat .message-content, #chat .md.chatbot { opacity: 1 !important; }
#chat .token.punctuation { color: #4b5563; }
#chat .token.string { color: #166534; }
#chat .token.property, #chat .token.number, #chat .token.boolean { color: #9d174d; }
#chat .token.operator { color: #27272a; }
.dark #chat .token.punctuation { color: #d1d5db; }
.dark #chat .token.string { color: #86efac; }
.dark #chat .token.property { color: #fca5a5; }
.dark #chat .token.number { color: #fdba74; }
.dark #chat .token.boolean { color: #fdba74; }
.dark #chat .token.operator { color: #93c5fd; }
"""
    + _slots()
    + """
#page-header h1 { font-size: 20px; margin: 0; }
#page-header p { margin: 2px 0 0; font-size: 13px; }
.rt-value-changes { margin: 4px 0; padding: 6px 10px; border-radius: 6px; background: #fef3c7; color: #111827; font-size: 13px; }
.dark .rt-value-changes { background: #422006; color: #f3f4f6; }
.rt-value-changes ul { margin: 2px 0 0 18px; padding: 0; }
.rt-value-changes code { overflow-wrap: anywhere; }
.rt-front-door { display: flex; gap: 8px; margin-top: 6px; flex-wrap: wrap; }
.rt-door { padding: 4px 12px; border-radius: 6px; border: 1px solid #9ca3af; background: var(--rt-bg); color: var(--rt-text);
  font-size: 14px; cursor: pointer; }
.rt-door-main { background: #c2410c; border-color: #c2410c; color: #ffffff; font-weight: 600; }
.rt-door:focus-visible { outline: 2px solid var(--color-accent); outline-offset: 2px; }
.rt-mono textarea, .rt-mono input { font-family: ui-monospace, SFMono-Regular, Menlo, monospace !important; font-size: 13px !important; }
/* clip instead of hidden: an overflow-hidden ancestor would stop the results column from sticking */
.gradio-container { overflow: clip !important; }
@media (min-width: 1024px) {
  /* the results column fits the viewport (less the footer) and scrolls by itself: status, replay bar and map stay in view */
  #results-column { position: sticky; top: 0; align-self: flex-start; height: calc(100vh - 64px); overflow-y: auto;
    overflow-x: hidden; flex-wrap: nowrap; padding-top: 8px; scrollbar-gutter: stable; }
  #results-column > * { flex-shrink: 0; }  /* scroll, never squeeze a panel */
}
#replay-bar { align-items: center; gap: 6px; flex-wrap: wrap; }
/* the display checkboxes beside the figures, as big as their text; the figures take the rest */
#display-row { align-items: center; }
#display-row > #live-figures { flex: 1 1 0%; min-width: 0; }
#display-row > #show-whitespace, #display-row > #show-tokens { flex: 0 0 auto; width: auto; }
#replay-bar button { min-width: 0; }

.rt-map { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13px; line-height: 1.7;
  white-space: pre-wrap; overflow-wrap: anywhere; padding: 10px; border: 1px solid var(--border-color-primary);
  border-radius: 8px; max-height: 38vh; overflow: auto; background: var(--rt-bg); color: var(--rt-text); contain: content; }
}
/* the first block always draws (a short map is one block); later ones only near the view */
.rt-block + .rt-block { content-visibility: auto; contain-intrinsic-size: auto 240px; }
.rt-map:focus-visible { outline: 2px solid var(--color-accent); outline-offset: 2px; }
.rt-map [data-i], .rt-map [data-e] { cursor: pointer; }
.rt-focus { outline: 2px solid var(--color-accent) !important; outline-offset: 1px; }
.rt-body { border-radius: 3px; background: var(--rt-tint); color: var(--rt-text); }
.rt-delim { border-radius: 4px; font-weight: 700; background: var(--rt-strong); color: var(--rt-on-strong); padding: 0 2px; }
.rt-open { box-shadow: inset 3px 0 0 rgba(0,0,0,.35); }
.rt-close { box-shadow: inset -3px 0 0 rgba(0,0,0,.35); }
.rt-discarded { color: #374151; text-decoration: line-through; background: #e5e7eb; }
.dark .rt-discarded { color: #d1d5db; background: #374151; }
.rt-held { background: repeating-linear-gradient(45deg, #fef9c3, #fef9c3 4px, #fde68a 4px, #fde68a 8px);
  outline: 1px dashed #a16207; color: #111827; }
.dark .rt-held { background: repeating-linear-gradient(45deg, #422006, #422006 4px, #713f12 4px, #713f12 8px);
  outline-color: #fcd34d; color: #fef3c7; }
.rt-cutaway, .rt-note { color: var(--rt-muted); }
.rt-unparsed { color: #991b1b; background: #fee2e2; }
.dark .rt-unparsed { color: #fecaca; background: #7f1d1d; }
.rt-tail { text-decoration: underline dotted 2px; text-underline-offset: 3px; }
.rt-tok-odd { box-shadow: inset 0 -3px 0 #7c3aed; }
.dark .rt-tok-odd { box-shadow: inset 0 -3px 0 #c4b5fd; }
.rt-now { outline: 2px solid #d97706; outline-offset: -1px; }
.rt-marker { display: inline-block; font-family: system-ui, sans-serif; font-size: 11px; font-weight: 600;
  padding: 0 6px; margin: 0 2px; border-radius: 9px; background: #374151; color: #ffffff; white-space: nowrap; }
.dark .rt-marker { background: #e5e7eb; color: #111827; }
.rt-marker.rt-gen { background: #0f766e; color: #ffffff; }
.rt-marker.rt-err { background: #b91c1c; color: #ffffff; }
.rt-marker.rt-miss { background: #7c2d12; color: #ffffff; }
/* the Tokens view: a delimiter matched by a control token's id (double outline) or in text
   (dashed outline); a spelled-out control token (wavy underline) and its note */
.rt-by-control { outline: 2px double #1d4ed8; outline-offset: 1px; }
.dark .rt-by-control { outline-color: #93c5fd; }
.rt-by-text { outline: 2px dashed #b45309; outline-offset: 1px; }
.dark .rt-by-text { outline-color: #fcd34d; }
.rt-spelled { text-decoration: underline wavy 2px #be185d; text-underline-offset: 3px; }
.dark .rt-spelled { text-decoration-color: #f9a8d4; }
.rt-marker.rt-spelled-note { background: #be185d; color: #ffffff; }
.rt-c-kind { width: 84px; } .rt-c-key { width: 34%; } .rt-c-where { width: 150px; }
.rt-matches table { min-width: 560px; }
.rt-matches tr[data-i], .rt-matches tr[data-d] { cursor: pointer; }
.rt-match-note { font-family: system-ui, sans-serif; font-size: 11px; color: var(--rt-muted); }
.rt-matches tr.rt-match-almost td, .rt-matches tr.rt-match-swallowed td { background: #ffedd5; color: #7c2d12; }
.dark .rt-matches tr.rt-match-almost td { background: #431407; color: #fed7aa; }
.dark .rt-matches tr.rt-match-swallowed td { background: #431407; color: #fed7aa; }
.rt-error { text-decoration: underline wavy #dc2626; text-decoration-thickness: 2px; }
.dark .rt-error { text-decoration-color: #f87171; }
.rt-error-at { background: #b91c1c !important; color: #ffffff !important; }
/* a lenient reading (a slip read as the template means it; no region failed): the warning colour */
.rt-error.rt-lenient { text-decoration-color: #d97706; }
.dark .rt-error.rt-lenient { text-decoration-color: #fbbf24; }
.rt-error-at.rt-lenient-at { background: #b45309 !important; color: #ffffff !important; }
.rt-marker.rt-err.rt-lenient { background: #b45309; color: #ffffff; }
.rt-stale { border: 2px dashed #b45309; }
.rt-stale-banner { background: #fef3c7; color: #78350f; font-weight: 600; padding: 4px 10px; border-radius: 6px;
  margin-bottom: 4px; font-size: 13px; }
.dark .rt-stale-banner { background: #78350f; color: #fef3c7; }
.rt-legend { display: flex; flex-wrap: wrap; gap: 6px 12px; margin: 6px 0 4px; font-family: system-ui, sans-serif;
  font-size: 12px; align-items: center; color: var(--body-text-color); }
.rt-legend span.rt-swatch { font-family: ui-monospace, monospace; padding: 0 6px; }
.rt-swatch.rt-tail { color: var(--body-text-color); }

.rt-explain, .rt-explain-empty { font-size: 13px; border: 1px solid var(--border-color-primary); border-radius: 8px;
  padding: 8px 10px; background: var(--rt-bg); color: var(--rt-text); }
.rt-explain-empty { color: var(--rt-muted); }
.rt-explain-title { font-weight: 700; margin-bottom: 4px; }
.rt-explain dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 0; }
.rt-explain dt { color: var(--rt-muted); }
.rt-explain dd { margin: 0; overflow-wrap: anywhere; }
.rt-explain code { background: transparent; color: inherit; }
.rt-explain a { color: #1d4ed8; }
.dark .rt-explain a { color: #93c5fd; }
.rt-explain-events { margin: 0; padding-left: 18px; }
.rt-evidence { margin-top: 6px; }
.rt-evidence + .rt-evidence { border-top: 1px solid var(--border-color-primary); padding-top: 6px; }
.rt-evidence-how, .rt-evidence-note, .rt-evidence-label { color: var(--rt-muted); font-size: 12px; }
.rt-evidence-label { margin-top: 4px; font-weight: 600; }
.rt-evidence-text { margin: 2px 0; padding: 4px 6px; max-height: 9em; overflow: auto; white-space: pre-wrap;
  overflow-wrap: anywhere; font-size: 12px; background: var(--rt-bg); color: var(--rt-text);
  border: 1px solid var(--border-color-primary); border-radius: 4px; }
.rt-evidence-diff { background: #fde68a; color: #111827; border-radius: 2px; outline: 1px solid #b45309; }
.dark .rt-evidence-diff { background: #92400e; color: #ffffff; outline-color: #fbbf24; }
.rt-evidence-none { font-style: italic; }
.rt-findings { margin: 4px 0; padding-left: 20px; font-size: 13px; }
.rt-finding { background: transparent; border: 0; padding: 0; cursor: pointer; color: inherit; text-align: left; }
.rt-finding:hover code, .rt-finding:focus code { text-decoration: underline; }
.rt-finding-how { color: var(--rt-muted); }
.rt-finding code, .rt-failure code, .rt-changes code { overflow-wrap: anywhere; }
/* Key paths break after their dots (<wbr>), never inside a name. */
.rt-finding code.rt-key, .rt-failure code.rt-key { overflow-wrap: normal; word-break: normal; }
/* The chat view's label takes its own line: floated over the messages it covered the first one. */
#chat label[data-testid="block-label"] { position: static !important; margin-bottom: 4px; }
/* Stop: neutral while nothing runs, red while Generate runs (the page script marks it). */
#stop-button.rt-stop-live { background: #dc2626 !important; color: #ffffff !important; border-color: #b91c1c !important; }
.rt-failures { margin: 6px 0; }
.rt-failure { margin: 4px 0; padding: 6px 8px; border-radius: 6px; background: #fef2f2; color: #7f1d1d; font-size: 13px; }
.dark .rt-failure { background: #450a0a; color: #fee2e2; }
.rt-failure .rt-finding-how { color: inherit; }
/* A diagnosis inside a failure group ("No edit is offered… expected…, got…") quotes long
   values with no blank: it wraps anywhere, inside the group, never over the panels beside it. */
.rt-failure .rt-diag, .rt-unexplained { overflow-wrap: anywhere; min-width: 0; }
.rt-failure-findings { margin-top: 2px; }
.rt-edit { margin-top: 4px; }
.rt-failure-findings .rt-finding { margin-right: 8px; }
.rt-changes { margin: 2px 0 2px 18px; padding: 0; font-size: 12px; }
.rt-changes .rt-add, .rt-changes code.rt-add { color: #14532d; }
.rt-changes .rt-del, .rt-changes code.rt-del { color: #7f1d1d; }
.dark .rt-changes .rt-add, .dark .rt-changes code.rt-add { color: #86efac; }
.dark .rt-changes .rt-del, .dark .rt-changes code.rt-del { color: #fca5a5; }
.rt-apply { margin-top: 4px; padding: 3px 10px; border-radius: 6px; border: 0; background: #c2410c; color: #ffffff; font-weight: 600; cursor: pointer; }
.rt-candidates { margin-top: 6px; font-size: 13px; }
.rt-case-kind { font-size: 11px; color: var(--rt-muted); margin-left: 6px; }
.rt-case-unverified { font-size: 11px; margin-left: 6px; padding: 0 5px; border-radius: 4px; background: #fef3c7; color: #92400e; }
.dark .rt-case-unverified { background: #78350f; color: #fef3c7; }
.rt-case-button { margin-left: 8px; padding: 1px 8px; border-radius: 6px; border: 0; background: #c2410c; color: #ffffff; font-size: 12px; font-weight: 600; cursor: pointer; }
.rt-missing { margin: 4px 0; }
.rt-unexplained { margin: 6px 0; }
.rt-unexplained-entry { margin: 4px 0; }
.rt-unexplained-text { background: #fecaca; color: #7f1d1d; border-radius: 2px; outline: 1px solid #b91c1c; }
.dark .rt-unexplained-text { background: #7f1d1d; color: #ffffff; outline-color: #fca5a5; }
.rt-candidate { font-size: 12px; color: var(--rt-muted); }
.rt-pattern { border-collapse: collapse; width: 100%; font-size: 12px; }
.rt-pattern td, .rt-pattern th { border-bottom: 1px solid var(--border-color-primary); padding: 2px 6px; text-align: left; vertical-align: top; }
.rt-pattern th { color: var(--rt-muted); font-weight: 600; }
.rt-explain-value { margin: 2px 0 0; max-height: 160px; overflow: auto; white-space: pre-wrap; }
.rt-key { background: #fef08a !important; color: #111827 !important; padding: 0 3px; border-radius: 3px; }

.rt-log-summary { font-size: 13px; margin: 2px 0; }
.rt-log-note { font-size: 12px; color: var(--body-text-color-subdued); margin: 2px 0 6px; }
.rt-log { max-height: 420px; overflow: auto; }
.rt-log table { border-collapse: collapse; width: 100%; font-size: 12px; table-layout: fixed; min-width: 780px; }
.rt-c-n { width: 44px; } .rt-c-phase { width: 64px; } .rt-c-type { width: 92px; } .rt-c-field { width: 96px; }
.rt-c-dirty { width: 44px; } .rt-c-value { width: 28%; } .rt-c-offsets { width: 70px; }
.rt-log td { overflow-wrap: anywhere; }
.rt-log th, .rt-log td { border-bottom: 1px solid var(--border-color-primary); padding: 2px 6px; text-align: left;
  vertical-align: top; }
.rt-log th { position: sticky; top: 0; background: var(--background-fill-secondary); }
.rt-log tr[data-n] { cursor: pointer; }
.rt-log td.rt-text, .rt-log td.rt-value { font-family: ui-monospace, monospace; white-space: pre-wrap; overflow-wrap: break-word;
  word-break: normal; }
.rt-log tr.rt-prefix td { background: #f3f4f6; color: #374151; }
.dark .rt-log tr.rt-prefix td { background: #1f2937; color: #d1d5db; }
.rt-log tr.rt-finalize td { background: #f0fdf4; color: #14532d; }
.dark .rt-log tr.rt-finalize td { background: #052e16; color: #dcfce7; }
.rt-log tr.rt-dirty td.rt-text { background: #fff7ed; color: #9a3412; font-style: italic; }
.dark .rt-log tr.rt-dirty td.rt-text { background: #431407; color: #fed7aa; }
.rt-log tr.rt-clean td.rt-text { background: #ecfdf5; color: #065f46; }
.rt-log tr.rt-token-group td { font-family: ui-monospace, monospace; font-size: 11px; font-weight: 600;
  color: #5b21b6; background: #f5f3ff; border-top: 2px solid #7c3aed; }
.dark .rt-log tr.rt-token-group td { color: #ddd6fe; background: #2e1065; border-top-color: #c4b5fd; }
.dark .rt-log tr.rt-clean td.rt-text { background: #022c22; color: #a7f3d0; }
.rt-log tr.rt-now td:first-child { box-shadow: inset 4px 0 0 #d97706; }
.rt-log tr.rt-selected td { outline: 2px solid #d97706; outline-offset: -2px; }
.rt-log tr.rt-failed td { color: #991b1b; }
.dark .rt-log tr.rt-failed td { color: #fecaca; }
.rt-ws { color: #6b7280; }
.dark .rt-ws { color: #9ca3af; }
/* inside a highlighted stretch, the whitespace markers take its text colour (grey on its tint
   would fall under 4.5:1) */
mark .rt-ws { color: inherit; }
.dark mark .rt-ws { color: inherit; }

.rt-badge { display: inline-block; padding: 4px 12px; border-radius: 14px; font-weight: 700; font-family: system-ui, sans-serif; }
.rt-pass { background: #15803d; color: #ffffff; }
.rt-pass-warn { background: #b45309; color: #ffffff; }
.rt-fail { background: #b91c1c; color: #ffffff; }
.rt-pending { background: #4b5563; color: #ffffff; }
.rt-figures { display: flex; gap: 18px; font-family: system-ui, sans-serif; font-size: 13px; flex-wrap: wrap; }
.rt-figures b { font-size: 15px; }
.rt-muted { color: var(--body-text-color-subdued); }

.rt-status { padding: 5px 10px; border-radius: 6px; margin: 2px 0; font-size: 14px; overflow-wrap: anywhere; }
.rt-status-error { background: #fee2e2; color: #991b1b; font-weight: 600; white-space: pre-wrap; }
.rt-status-ok { background: #dcfce7; color: #166534; }
.rt-status-live { background: #e0f2fe; color: #075985; }
.rt-status-warn { background: #fef3c7; color: #92400e; }
.rt-status-misfit { background: #ffe4e6; color: #9f1239; font-weight: 600; }
.rt-status-stale { background: #fef3c7; color: #78350f; }
.rt-status-note { background: var(--background-fill-secondary); color: var(--body-text-color); }
.rt-status-symptom { background: #f3f4f6; color: #374151; font-size: 13px; }
.dark .rt-status-symptom { background: #1f2937; color: #e5e7eb; }
.rt-cause code { background: transparent; color: inherit; font-weight: 700; }
.dark .rt-status-error { background: #7f1d1d; color: #fee2e2; }
.dark .rt-status-ok { background: #14532d; color: #dcfce7; }
.dark .rt-status-live { background: #0c4a6e; color: #e0f2fe; }
.dark .rt-status-warn { background: #78350f; color: #fef3c7; }
.dark .rt-status-stale { background: #78350f; color: #fef3c7; }
.dark .rt-status-misfit { background: #881337; color: #ffe4e6; }
.rt-diag { padding: 4px 8px; margin: 2px 0; border-radius: 4px; font-size: 13px; }
.rt-diag-error { background: #fee2e2; color: #991b1b; }
.rt-diag-warning { background: #fef3c7; color: #92400e; }
.rt-diag-info, .rt-diag-ok { background: #f0fdf4; color: #166534; }
.dark .rt-diag-error { background: #7f1d1d; color: #fee2e2; }
.dark .rt-diag-warning { background: #78350f; color: #fef3c7; }
.dark .rt-diag-info { background: #14532d; color: #dcfce7; }
.dark .rt-diag-ok { background: #14532d; color: #dcfce7; }
.rt-mark { margin-top: 3px; font-size: 12px; }
.rt-mark code { background: transparent; color: inherit; white-space: pre; }
#template-editor .rt-editor-mark { position: absolute; pointer-events: none; z-index: 2; border-radius: 2px;
  outline: 2px solid #b91c1c; background: rgba(185, 28, 28, .25); }
#template-editor .rt-editor-mark-line { position: absolute; left: 0; right: 0; pointer-events: none; z-index: -1;
  background: rgba(254, 202, 202, .45); }
.dark #template-editor .rt-editor-mark-line { background: rgba(127, 29, 29, .55); }
.rt-mark-at { background: #b91c1c; color: #ffffff; border-radius: 2px; outline: 1px solid #b91c1c; }
.rt-fix { margin-left: 6px; padding: 1px 8px; border-radius: 6px; border: 1px solid currentColor; background: transparent;
  color: inherit; font-size: 12px; cursor: pointer; }

.rt-reference table, .rt-fits table, .rt-side-by-side { border-collapse: collapse; width: 100%; font-size: 12px; }
.rt-reference td, .rt-reference th, .rt-fits td, .rt-fits th, .rt-side-by-side td, .rt-side-by-side th {
  border-bottom: 1px solid var(--border-color-primary); padding: 2px 6px; text-align: left; vertical-align: top; }
.rt-reference { max-height: 420px; overflow: auto; }
.rt-reference table { table-layout: fixed; }
.rt-reference td:nth-child(1), .rt-reference th:nth-child(1) { width: 24%; }
.rt-reference td:nth-child(2), .rt-reference th:nth-child(2) { width: 42%; }
.rt-reference td:nth-child(3), .rt-reference th:nth-child(3) { width: 14%; }
.rt-reference td { overflow-wrap: anywhere; }
.rt-fits tr.rt-best td { font-weight: 700; }
.rt-fits { overflow-x: auto; }
.rt-fits table { table-layout: fixed; min-width: 400px; }
.rt-fits tr.rt-fit-problem td { border-top: none; padding-bottom: 6px; font-size: 11px; }
.rt-fits tr:has(+ tr.rt-fit-problem) td { border-bottom: none; }
.rt-fits td { overflow-wrap: anywhere; }
.rt-c-rank { width: 28px; } .rt-c-name { width: 130px; } .rt-c-count { width: 72px; }
.rt-fits tr.rt-claims-nothing td { color: #4b5563; }
.dark .rt-fits tr.rt-claims-nothing td { color: #d1d5db; }
.rt-side-by-side pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12px; }
.rt-side-by-side tr.rt-differs td { background: #fef3c7; color: #78350f; }
.dark .rt-side-by-side tr.rt-differs td { background: #78350f; color: #fef3c7; }
.rt-diff { font-size: 12px; white-space: pre-wrap; margin: 4px 0; }
.rt-diff .rt-add { color: #166534; background: #dcfce7; }
.rt-diff .rt-del { color: #991b1b; background: #fee2e2; }
.dark .rt-diff .rt-add { color: #dcfce7; background: #14532d; }
.dark .rt-diff .rt-del { color: #fee2e2; background: #7f1d1d; }
.rt-case summary { cursor: pointer; }

.rt-conformance-summary { margin: 6px 0 4px; font-size: 14px; }
.rt-badge.rt-small { padding: 1px 8px; font-size: 11px; border-radius: 10px; white-space: nowrap; }
.rt-conformance { max-height: 460px; overflow: auto; margin-top: 4px; }
.rt-conformance table { border-collapse: collapse; width: 100%; font-size: 12px; table-layout: fixed; border: none; }
.rt-conformance tr { border: none; }
.rt-conformance th, .rt-conformance td { border: none; border-bottom: 1px solid var(--border-color-primary); padding: 3px 6px;
  text-align: left; vertical-align: top; }
.rt-conformance th { position: sticky; top: 0; background: var(--background-fill-secondary); }
.rt-conformance td { overflow-wrap: anywhere; }
.rt-conformance tr[data-row] { cursor: pointer; }
.rt-conformance tr[data-row]:hover td { background: var(--background-fill-secondary); }
.rt-conformance tr[data-row]:focus-visible { outline: 2px solid var(--color-accent); outline-offset: -2px; }
.rt-conformance tr.rt-row-fail td { background: #fef2f2; color: #7f1d1d; }
.dark .rt-conformance tr.rt-row-fail td { background: #450a0a; color: #fee2e2; }
.rt-check { color: var(--rt-muted); }
.rt-conformance tr.rt-cause-row td { background: #fee2e2; color: #7f1d1d; }
.dark .rt-conformance tr.rt-cause-row td { background: #7f1d1d; color: #fee2e2; }
#conformance-causes ul { margin: 2px 0 0; padding-left: 18px; }
.rt-detail { margin-top: 1px; }
@media (max-width: 768px) {
  .rt-map { max-height: 55vh; }
  /* #explain on a phone: each label above its value, and the pattern table's columns wide
     enough to read (what a piece took is never one character wide) */
  .rt-explain dl { grid-template-columns: minmax(0, 1fr); }
  .rt-explain dt { margin-top: 4px; }
  .rt-pattern th:first-child, .rt-pattern td:first-child { width: 28%; overflow-wrap: anywhere; }
  .rt-pattern th:last-child, .rt-pattern td:last-child { width: 28%; overflow-wrap: anywhere; }
  /* on a phone the samples table scrolls in a box, so the region map comes within two screens */
  #sample-table { max-height: 36vh; overflow: auto; }
  #page-header h1 { font-size: 18px; }
  /* One screen from Generate to the map's first lines: Generate and Stop share a row, the
     figures take one line and the display checkboxes one more, the panels between sit closer,
     and Share goes to the end of the page (the left column's boxes join the page's flow, so
     Share can follow the results). Last in the sheet: these win over the rules above. */
  #generate-button, #stop-button { min-width: 0 !important; }
  #workspace { flex-direction: column; flex-wrap: nowrap; align-items: stretch; gap: 8px; }
  #inputs-column { display: contents; }
  #share { order: 1; }
  #results-column { gap: 6px; min-width: 0 !important; }
  #live-figures { flex: 1 1 100% !important; min-width: 100% !important; }
  #display-row { gap: 4px 8px; }
  .rt-figures { gap: 2px 12px; font-size: 12px; }
  .rt-figures b { font-size: 13px; }
  #show-whitespace, #show-tokens { padding: 2px 6px !important; }
  #show-whitespace span, #show-tokens span { font-size: 12px; }
  .rt-legend { font-size: 11px; gap: 2px 8px; margin: 2px 0; }
  .rt-status { font-size: 13px; padding: 3px 8px; }
  #model-status { font-size: 12px; }
  #replay-scrubber { padding: 4px 8px !important; }
  #replay-settings, #share, #live-settings { margin: 0 !important; }
  #replay-bar { gap: 4px; }
  /* the fit ranking fits the phone's width: narrow figures, the problems on their own lines */
  .rt-fits table { min-width: 0; }
  .rt-fits .rt-c-rank { width: 22px; } .rt-fits .rt-c-name { width: auto; }
  .rt-fits col:nth-child(3) { width: 38px; } .rt-fits col:nth-child(4) { width: 49px; }
  .rt-fits col:nth-child(5) { width: 66px; } .rt-fits col:nth-child(6) { width: 57px; }
  .rt-fits th, .rt-fits td { padding: 2px 3px; }
  .rt-fits th { font-size: 10px; }
}
"""
)
