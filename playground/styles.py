"""The page's CSS (one stylesheet for every panel), passed to `demo.launch(css=...)`."""

PAGE_CSS = """
.rt-map { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13px; line-height: 1.7;
  white-space: pre-wrap; word-break: break-word; padding: 10px; border: 1px solid var(--border-color-primary);
  border-radius: 8px; max-height: 460px; overflow: auto; background: var(--background-fill-primary); color: #111827; }
.rt-map span[title] { cursor: help; }
.rt-body { border-radius: 3px; }
.rt-delim { border-radius: 4px; font-weight: 700; color: #fff; padding: 0 2px; }
.rt-open { box-shadow: inset 3px 0 0 rgba(0,0,0,.35); }
.rt-close { box-shadow: inset -3px 0 0 rgba(0,0,0,.35); }
.rt-discarded { color: #6b7280; text-decoration: line-through; background: #f3f4f6; }
.rt-held { background: repeating-linear-gradient(45deg, #fef9c3, #fef9c3 4px, #fde68a 4px, #fde68a 8px);
  outline: 1px dashed #ca8a04; }
.rt-cutaway { color: #9ca3af; }
.rt-unparsed { color: #991b1b; background: #fee2e2; }
.rt-tail { opacity: .6; }
.rt-marker { display: inline-block; font-family: system-ui, sans-serif; font-size: 11px; font-weight: 600;
  padding: 0 6px; margin: 0 2px; border-radius: 9px; background: #374151; color: #fff; white-space: nowrap; }
.rt-marker.rt-gen { background: #0f766e; }
.rt-error { text-decoration: underline wavy #dc2626; text-decoration-thickness: 2px; }
.rt-marker.rt-err { background: #dc2626; }
.rt-legend { display: flex; flex-wrap: wrap; gap: 6px 12px; margin: 6px 0 4px; font-family: system-ui, sans-serif;
  font-size: 12px; align-items: center; color: var(--body-text-color); }
.rt-legend span.rt-swatch { font-family: ui-monospace, monospace; padding: 0 6px; }
.rt-log { max-height: 420px; overflow: auto; }
.rt-log table { border-collapse: collapse; width: 100%; font-size: 12px; }
.rt-log th, .rt-log td { border-bottom: 1px solid var(--border-color-primary); padding: 2px 6px; text-align: left;
  vertical-align: top; }
.rt-log th { position: sticky; top: 0; background: var(--background-fill-secondary); }
.rt-log td.rt-text, .rt-log td.rt-value { font-family: ui-monospace, monospace; white-space: pre-wrap; word-break: break-all; }
.rt-log tr.rt-prefix td { background: #f3f4f6; color: #4b5563; }
.rt-log tr.rt-finalize td { background: #f0fdf4; }
.rt-log tr.rt-dirty td.rt-text { background: #fff7ed; color: #9a3412; font-style: italic; }
.rt-log tr.rt-clean td.rt-text { background: #ecfdf5; color: #065f46; }
.rt-ws { color: #9ca3af; }
.rt-badge { display: inline-block; padding: 4px 12px; border-radius: 14px; font-weight: 700; font-family: system-ui, sans-serif; }
.rt-pass { background: #16a34a; color: #fff; }
.rt-fail { background: #dc2626; color: #fff; }
.rt-pending { background: #6b7280; color: #fff; }
.rt-figures { display: flex; gap: 18px; font-family: system-ui, sans-serif; font-size: 13px; flex-wrap: wrap; }
.rt-figures b { font-size: 16px; }
.rt-message-error { color: #b91c1c; font-weight: 600; }
.rt-status { padding: 6px 10px; border-radius: 6px; margin: 2px 0; font-size: 14px; }
.rt-status-error { background: #fee2e2; color: #991b1b; font-weight: 600; white-space: pre-wrap; }
.rt-status-ok { background: #dcfce7; color: #166534; }
.rt-status-live { background: #e0f2fe; color: #075985; }
.rt-status-warn { background: #fef3c7; color: #92400e; }
.rt-status-note { background: var(--background-fill-secondary); color: var(--body-text-color); }
.rt-diag { padding: 4px 8px; margin: 2px 0; border-radius: 4px; font-size: 13px; }
.rt-diag-error { background: #fee2e2; color: #991b1b; }
.rt-diag-warning { background: #fef3c7; color: #92400e; }
.rt-diag-info, .rt-diag-ok { background: #f0fdf4; color: #166534; }
"""
