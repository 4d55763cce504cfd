"""The page's own JavaScript, in one place (everything else is Gradio components).

Gradio runs each `*_JS` constant given as `js_on_load` of a `gr.HTML` with
`element` (the component's element) and `trigger(event, data)` (fires the
component's listener with `data` as its event data) in scope, and again
`watch('value', ...)` to act after each re-render. `PAGE_JS` runs once when
the page loads (`demo.launch(js=...)`).

What each part does:
- REGION_MAP_JS: a click or tap on a stretch of the region map, or Enter /
  Space on the one chosen with the arrow keys (Home / End: the first / last),
  sends its `data-i` (span index) or `data-e` (error) to the explain handler.
- EXPLAIN_JS: a link in the #explain panel to an event (`data-event`) or an
  error (`data-select`) is sent to the server, which pages the event log to it;
  it also sends the cursor's place when a pattern (or, after an inference, any
  delimiter) is clicked in the template editor (`editor_at`), which the server
  explains.
- EVENT_LOG_JS: a click on a row sends its event number; after each render the
  selected row is scrolled to the middle of the log, and the log into view.
- MATCH_LIST_JS: a click (or Enter) on an entry of the match list selects its place on the
  map (`data-i` span, `data-d` near-miss marker) and explains it, by clicking it there.
- DIAGNOSTICS_JS: a "Fix" button sends the index of its finding; "Show in the editor"
  selects an error's character there, and after each render every error with a place is
  marked in the editor (PAGE_JS's `rtMarkEditor`).
- CONFORMANCE_JS: a click on a row of the chat-template check (or Enter on the
  row in focus) sends its index (`data-row`) and scrolls the input tabs into
  view (the row loads into Paste & parse).
- TESTS_JS: a *Use as example* button of a test case sends its index (`data-use`), a
  *Confirm this message* button its index (`data-confirm`); neither opens or closes the case.
- INFERENCE_JS: a click on a finding of the inferred template sends its index
  (`data-finding`): #explain shows the two renders that found it, scrolled into view once
  it has drawn them (EXPLAIN_JS); an Apply button sends its failure group (`data-apply`).
- PAGE_JS marks Stop (`rt-stop-live`, red) only while a Generate runs.
- PAGE_JS also brings the status line into view after a sample is picked from the table or
  Generate is pressed, when it is off screen (on a phone, below the inputs); and the inference
  verdict after Infer, when it lands off screen (under a long chat template).
- HEADER_JS: the introduction's buttons open an input tab (`data-tab`: "Start from a model",
  "Samples").
- REGION_MAP_JS also follows a stream: while a replay or a live run draws the map, the
  newest text (`.rt-now`) is scrolled into the map's box after each update, and the stream's
  last frame is scrolled to its end. Nothing here waits for an animation frame (a headless or
  background browser may paint none): each update is followed as soon as it is in the page.
- PAGE_JS also presses Infer for a link that names a model (`?chat_template_model=`), once
  the page-load handler has put it in its box; and makes the code editors' syntax colours
  readable (`rtReadableCode`): CodeMirror writes them as rules of generated class names, so
  each such rule's colour is darkened (light theme) or lightened (dark) until it has 4.5:1
  against the editor's background, whenever an editor appears.
- PAGE_JS: an edit of the prefix, generation, tools or template editor (typing,
  deleting, undo and redo: any key that changes the editor's text) re-parses once
  editing pauses (DEBOUNCE_MS) by clicking the hidden #reparse-button, a paste or a
  drop at once (PASTE_MS); Ctrl+Enter (or Cmd+Enter) parses at once with #parse-button.
  Enter in the replay scrubber's number box seeks, as leaving the box does (a drag seeks
  once, when let go). Once all its listeners are in place it marks the page
  (`<html data-rt-page-script="ready">`): Gradio runs it when its tree is ready, which can
  be after the first sample is drawn, and a key pressed before then is not heard. It also finds the template editor's CodeMirror view, to select a
  place in it, mark errors over it, and send a click on a pattern to #explain.
"""

DEBOUNCE_MS = 400
# After a paste or a drop, the wait before parsing: long enough for the box to hand its new text over.
PASTE_MS = 30

REGION_MAP_JS = """
const selectable = '[data-i], [data-e], [data-d]';
const key = (node) => node.dataset.i !== undefined ? node.dataset.i : node.dataset.e !== undefined ? 'e' + node.dataset.e : 'd' + node.dataset.d;
const mark = (node) => {
  element.querySelectorAll('.rt-focus').forEach((other) => other.classList.remove('rt-focus'));
  node.classList.add('rt-focus');
};
const focus = (node) => { mark(node); node.scrollIntoView({block: 'nearest', inline: 'nearest'}); };
// The request first; a clicked stretch is in view already (scrolling a big map costs a layout).
const explain = (node, scroll) => { trigger('click', {selected: key(node)}); (scroll ? focus : mark)(node); };
element.addEventListener('click', (event) => {
  const node = event.target.closest(selectable);
  if (node && element.contains(node)) explain(node, false);
});
// While streaming, each update draws the map anew: keep the newest text in the map's box
// (a tool call that lands below it is followed), without scrolling the page. The stream's
// last frame marks nothing as newest: the map then shows where the stream ended, its end.
// This runs as soon as Gradio has put the new value into the page, never on an animation
// frame: headless and background browsers may run no animation frame for seconds, and a
// scroll waiting for one would land late or never.
let streaming = false;
const follow = () => {
  const body = element.querySelector('#region-map-body');
  if (!body) return;
  const now = body.querySelectorAll('.rt-now');
  if (!now.length) {
    if (streaming) body.scrollTop = body.scrollHeight;
    streaming = false;
    return;
  }
  streaming = true;
  const last = now[now.length - 1], box = body.getBoundingClientRect(), place = last.getBoundingClientRect();
  if (place.bottom > box.bottom || place.top < box.top) body.scrollTop += place.bottom - box.bottom + box.height / 3;
};
watch('value', follow);
element.addEventListener('keydown', (event) => {
  if (!event.target.closest('#region-map-body')) return;
  const items = [...element.querySelectorAll(selectable)];
  if (!items.length) return;
  const current = element.querySelector('.rt-focus');
  let at = items.indexOf(current);
  const step = {ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1}[event.key];
  if (step) {
    event.preventDefault();
    const from = at < 0 ? null : key(items[at]);
    do { at += step; } while (at >= 0 && at < items.length && from !== null && key(items[at]) === from);
    at = Math.max(0, Math.min(items.length - 1, at));
    focus(items[at]);
  } else if (event.key === 'Home' || event.key === 'End') {
    event.preventDefault();
    focus(items[event.key === 'Home' ? 0 : items.length - 1]);
  } else if ((event.key === 'Enter' || event.key === ' ') && at >= 0) {
    event.preventDefault();
    explain(items[at], true);
  }
});
// Clicks and keys on the map are heard from here on (a click before this script ran was lost).
element.dataset.bound = 'true';
"""

HEADER_JS = """
element.addEventListener('click', (event) => {
  const button = event.target.closest('[data-tab]');
  if (!button) return;
  const tab = [...document.querySelectorAll('#modes [role=tab]')].find((node) => node.textContent.trim() === button.dataset.tab);
  if (tab) { tab.click(); tab.scrollIntoView({block: 'nearest'}); }
});
"""

EXPLAIN_JS = """
// The page script explains a pattern clicked in the template editor through this panel.
window.rtExplainEditorAt = (at) => trigger('click', {editor_at: at});
// A finding clicked in the inference panel: once its renders are drawn here, bring them into view.
watch('value', () => {
  if (!window.rtRevealExplain || Date.now() - window.rtRevealExplain > 15000) return;
  window.rtRevealExplain = 0;
  element.scrollIntoView({block: 'start'});
});
element.addEventListener('click', (event) => {
  const link = event.target.closest('[data-event], [data-select]');
  if (!link) return;
  event.preventDefault();
  if (link.dataset.event !== undefined) trigger('click', {event: Number(link.dataset.event)});
  else trigger('click', {selected: link.dataset.select});
});
"""

EVENT_LOG_JS = """
element.addEventListener('click', (event) => {
  const row = event.target.closest('tr[data-n]');
  if (row) trigger('click', {event: Number(row.dataset.n)});
});
const reveal = () => {  // the selected row in the middle of the log, and the log in view
  const row = element.querySelector('tr.rt-selected');
  if (!row) return;
  const table = row.closest('.rt-log');
  table.scrollTop = row.offsetTop - table.clientHeight / 2;
  element.scrollIntoView({block: 'nearest'});
};
// The log may be drawn for the first time with a row selected (its tab was hidden until now).
setTimeout(reveal, 100);
watch('value', () => setTimeout(reveal, 100));
"""

MATCH_LIST_JS = """
// An entry selects its place on the map: the map's own click handler explains it.
const select = (row) => {
  if (!row) return;
  const data = row.dataset.i !== undefined ? `[data-i="${row.dataset.i}"]` : `[data-d="${row.dataset.d}"]`;
  const target = document.querySelector('#region-map-body ' + data);
  if (target) { target.scrollIntoView({block: 'center', inline: 'nearest'}); target.click(); }
};
element.addEventListener('click', (event) => select(event.target.closest('tr[data-i], tr[data-d]')));
element.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' || event.key === ' ') {
    const row = event.target.closest('tr[data-i], tr[data-d]');
    if (row) { event.preventDefault(); select(row); }
  }
});
"""

DIAGNOSTICS_JS = """
element.addEventListener('click', (event) => {
  const button = event.target.closest('[data-fix]');
  if (button) trigger('click', {fix: Number(button.dataset.fix)});
  const goto = event.target.closest('.rt-goto');
  if (goto) window.rtSelectInEditor(Number(goto.dataset.line), Number(goto.dataset.column));
});
// Each error with a place is marked in the editor itself (the page script draws the marks).
const mark = () => {
  if (!window.rtMarkEditor) return;
  window.rtMarkEditor([...element.querySelectorAll('.rt-mark')].map((row) => ({
    line: Number(row.dataset.line), column: Number(row.dataset.column),
    message: (row.closest('.rt-diag') || row).textContent.split('line ')[0].trim(),
  })));
};
setTimeout(mark, 200);
watch('value', () => setTimeout(mark, 50));
"""

CONFORMANCE_JS = """
// The row loads into Paste & parse: bring the input tabs into view, where it will show.
const send = (row) => {
  if (!row) return;
  trigger('click', {row: Number(row.dataset.row)});
  const tabs = document.querySelector('#modes');
  if (tabs) tabs.scrollIntoView({block: 'start'});
};
element.addEventListener('click', (event) => send(event.target.closest('tr[data-row]')));
element.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' || event.key === ' ') {
    const row = event.target.closest('tr[data-row]');
    if (row) { event.preventDefault(); send(row); }
  }
});
"""

TESTS_JS = """
element.addEventListener('click', (event) => {
  const use = event.target.closest('button[data-use]');
  const confirm = event.target.closest('button[data-confirm]');
  if (!use && !confirm) return;
  event.preventDefault();
  if (use) trigger('click', {use: Number(use.dataset.use)});
  else trigger('click', {confirm: Number(confirm.dataset.confirm)});
});
"""

INFERENCE_JS = """
// A finding of the inferred template: the renders that found it show in #explain, brought into
// view when they are drawn (EXPLAIN_JS). An Apply button: that failure group's edit.
element.addEventListener('click', (event) => {
  const finding = event.target.closest('button[data-finding]');
  if (finding) {
    window.rtRevealExplain = Date.now();
    trigger('click', {finding: Number(finding.dataset.finding)});
  }
  const apply = event.target.closest('button[data-apply]');
  if (apply) trigger('click', {apply: Number(apply.dataset.apply)});
});
"""

PAGE_JS = """() => {
  // Svelte's slide transition (Gradio's toasts and panels) reads an element's height as a
  // number; for an element not laid out (display: contents, or hidden) it is NaN, and Chromium
  // warns "Invalid keyframe value for property height: NaNpx" for the animation. Such a value
  // is left out of the keyframes: the element appears without sliding, as it does after the
  // warning, and the console stays quiet.
  if (!Element.prototype.rtAnimateGuarded) {
    const animate = Element.prototype.animate;
    const valid = frame => Object.fromEntries(Object.entries(frame).filter(
      ([, value]) => !(typeof value === 'string' && value.includes('NaN'))));
    Element.prototype.animate = function (keyframes, options) {
      return animate.call(this, Array.isArray(keyframes) ? keyframes.map(valid) : keyframes, options);
    };
    Element.prototype.rtAnimateGuarded = true;
  }
  // The template editor's CodeMirror view: it hangs on the content element (`cmTile.view`;
  // `cmView` in older CodeMirror releases).
  const editorView = () => {
    const content = document.querySelector('#template-editor .cm-content');
    const handle = content && (content.cmTile || content.cmView);
    return handle ? handle.view || handle.editorView || null : null;
  };
  // Line:column (1-based, columns in characters) as a document position, and back.
  const position = (view, line, column) => {
    const info = view.state.doc.line(Math.min(Math.max(1, line), view.state.doc.lines));
    let at = info.from;
    for (let left = column - 1; left > 0 && at < info.to; left--) at += view.state.sliceDoc(at, at + 2).codePointAt(0) > 0xffff ? 2 : 1;
    return at;
  };
  const characters = (view, at) => [...view.state.sliceDoc(0, at)].length;
  // Select line:column of the template editor ("Show in the editor").
  window.rtSelectInEditor = (line, column) => {
    const view = editorView();
    if (!view) return false;
    const at = position(view, line, column);
    view.dispatch({selection: {anchor: at, head: Math.min(at + 1, view.state.doc.lineAt(at).to)}, scrollIntoView: true});
    view.focus();
    return true;
  };
  // Errors marked in the editor at their character: boxes over CodeMirror's scroller (it redraws
  // its own lines, never these), placed again when the editor shows or changes size, and taken
  // away as soon as the text is edited (the next diagnostics mark the new places).
  let marks = [], markedText = null;
  const drawMarks = () => {
    document.querySelectorAll('#template-editor .rt-editor-mark, #template-editor .rt-editor-mark-line').forEach((node) => node.remove());
    const view = editorView();
    if (!view || !marks.length) return;
    markedText = view.state.doc;  // CodeMirror's text is immutable: an edit makes a new one
    const scroller = view.scrollDOM, box = scroller.getBoundingClientRect();
    if (!box.width) return;  // hidden (another tab): drawn when it shows
    for (const {line, column, message} of marks) {
      const at = position(view, line, column);
      const info = view.state.doc.lineAt(at);
      let rect = view.coordsAtPos(at, 1) || view.coordsAtPos(at, -1);
      if (!rect) {  // not drawn yet (scrolled away): from the line's block and the character width
        const content = view.contentDOM.getBoundingClientRect(), block = view.lineBlockAt(at);
        const left = content.left + view.defaultCharacterWidth * (at - info.from);
        rect = {left, right: left, top: content.top + block.top, bottom: content.top + block.bottom};
      }
      const width = Math.max(rect.right - rect.left, view.defaultCharacterWidth);
      const top = rect.top - box.top + scroller.scrollTop, height = rect.bottom - rect.top;
      const band = document.createElement('div');
      band.className = 'rt-editor-mark-line';
      Object.assign(band.style, {top: top + 'px', height: height + 'px'});
      const mark = document.createElement('div');
      mark.className = 'rt-editor-mark';
      mark.title = message;
      mark.dataset.line = line;
      mark.dataset.column = column;
      Object.assign(mark.style, {left: rect.left - box.left + scroller.scrollLeft + 'px', top: top + 'px', width: width + 'px', height: height + 'px'});
      scroller.append(band, mark);
    }
  };
  window.rtMarkEditor = (found) => {
    marks = found;
    drawMarks();
    const view = editorView();
    if (view && !view.scrollDOM.rtWatched) {
      view.scrollDOM.rtWatched = true;
      new ResizeObserver(() => drawMarks()).observe(view.scrollDOM);
    }
  };
  const unmarkEdited = (event) => {
    const view = marks.length && event.target.closest && event.target.closest('#template-editor') ? editorView() : null;
    if (view && view.state.doc !== markedText) { marks = []; drawMarks(); }
  };
  for (const kind of ['input', 'keyup', 'paste', 'cut', 'drop']) document.addEventListener(kind, (event) => setTimeout(() => unmarkEdited(event), 0), true);
  // A click in the template editor (or a move with the arrow keys) on a pattern explains it in #explain,
  // and on a delimiter inference found shows how.
  const explainEditor = () => {
    const view = editorView();
    if (!view || !window.rtExplainEditorAt) return;
    const head = view.state.selection.main.head;
    // Any delimiter once a template was inferred: the server shows the renders that found it.
    if (view.state.doc.lineAt(head).text.includes('_pattern') || document.querySelector('#inference-badge')) window.rtExplainEditorAt(characters(view, head));
  };
  document.addEventListener('mouseup', (event) => {
    if (event.target.closest && event.target.closest('#template-editor')) setTimeout(explainEditor, 0);
  }, true);
  document.addEventListener('keyup', (event) => {
    if (/^Arrow|^Home$|^End$/.test(event.key) && event.target.closest && event.target.closest('#template-editor')) explainEditor();
  }, true);
  // A sample chosen from the dropdown re-draws the page; give the focus back to the dropdown.
  let chosenAt = 0;
  const picked = (event) => { if (event.target.closest && event.target.closest('#sample-picker')) chosenAt = Date.now(); };
  document.addEventListener('mousedown', picked, true);
  document.addEventListener('keydown', (event) => { if (event.key === 'Enter') picked(event); }, true);
  document.addEventListener('focusout', (event) => {
    if (!(event.target.closest && event.target.closest('#sample-picker')) || Date.now() - chosenAt > 1500) return;
    const until = Date.now() + 3000;
    const keep = () => {
      const input = document.querySelector('#sample-picker input');
      if (input && (document.activeElement === document.body || !document.activeElement)) input.focus();
      if (Date.now() < until) setTimeout(keep, 100);
    };
    setTimeout(keep, 50);
  }, true);
  // A sample picked from the table, or Generate: once the status line changes, it is brought into
  // view when it is off screen (on a phone the result sits below the inputs). After Generate the
  // status goes to the top, so that the map's first lines follow it on the screen.
  document.addEventListener('click', (event) => {
    const from = event.target.closest && event.target.closest('#sample-table tr, #generate-button');
    const status = from && document.getElementById('status');
    if (!status) return;
    const block = from.id === 'generate-button' ? 'start' : 'nearest';
    const before = status.textContent, until = Date.now() + 15000;
    const inView = () => { const place = status.getBoundingClientRect(); return place.top >= 0 && place.bottom <= window.innerHeight; };
    // Looked at again as the status grows (its first change may be Gradio's progress text).
    const settle = (left) => { if (!inView()) status.scrollIntoView({block}); if (left) setTimeout(() => settle(left - 1), 400); };
    const follow = () => {
      if (status.textContent === before) { if (Date.now() < until) setTimeout(follow, 100); return; }
      settle(3);
    };
    setTimeout(follow, 100);
  }, true);
  // Stop is red only while Generate runs: from the click until the status is no longer a
  // stream's (the model's load, then the tokens) and Gradio has nothing pending.
  document.addEventListener('click', (event) => {
    if (!(event.target.closest && event.target.closest('#generate-button'))) return;
    const stop = document.getElementById('stop-button');
    if (!stop) return;
    stop.classList.add('rt-stop-live');
    const started = Date.now();
    const running = () => document.querySelector('#status .rt-status-live, #status .pending, #status .generating, #region-map .pending, #region-map .generating');
    const watch = () => {
      if (Date.now() - started < 1500 || running()) { setTimeout(watch, 300); return; }
      stop.classList.remove('rt-stop-live');
    };
    setTimeout(watch, 300);
  }, true);
  // Infer: once the verdict is drawn, it is brought to the top of the screen when it is off
  // screen (under a long chat template it lands below the fold), the same on a desktop and a phone.
  document.addEventListener('click', (event) => {
    if (!(event.target.closest && event.target.closest('#infer-button'))) return;
    const panel = document.getElementById('inference');
    if (!panel) return;
    const old = panel.querySelector('#inference-report'), until = Date.now() + 180000;
    const follow = () => {
      const verdict = panel.querySelector('#inference-report, #inference-error');
      if (!verdict || verdict === old) { if (Date.now() < until) setTimeout(follow, 150); return; }
      const place = verdict.getBoundingClientRect();
      if (place.top < 0 || place.top > window.innerHeight - 80) verdict.scrollIntoView({block: 'start'});
    };
    setTimeout(follow, 150);
  }, true);
  // The code editors' syntax colours at 4.5:1 at least against the editor's background.
  const parseColour = (text) => { const m = (text || '').match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number); return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const luminance = (c) => [c.r, c.g, c.b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const contrast = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const backgroundOf = (element) => {
    for (let node = element; node; node = node.parentElement) {
      const colour = parseColour(getComputedStyle(node).backgroundColor);
      if (colour && colour.a === 1) return colour;
    }
    return document.body.classList.contains('dark') ? {r: 11, g: 15, b: 25} : {r: 255, g: 255, b: 255};
  };
  const fixed = new WeakSet();
  window.rtReadableCode = () => {
    const editor = document.querySelector('.cm-editor');
    if (!editor) return 0;
    const background = backgroundOf(editor), light = luminance(background) > 0.4;
    let changed = 0;
    for (const sheet of [...document.styleSheets, ...(document.adoptedStyleSheets || [])]) {
      let rules;
      try { rules = sheet.cssRules; } catch (error) { continue; }
      for (const rule of rules || []) {
        if (fixed.has(rule) || !rule.style || !rule.style.color || !/^\\.\\u037c\\w+$/.test(rule.selectorText || '')) continue;
        fixed.add(rule);
        const probe = document.createElement('span');
        probe.style.color = rule.style.color;
        document.body.append(probe);
        let colour = parseColour(getComputedStyle(probe).color);
        probe.remove();
        if (!colour) continue;
        for (let step = 0; step < 40 && contrast(colour, background) < 4.6; step++) {
          colour = light ? {r: colour.r * 0.92, g: colour.g * 0.92, b: colour.b * 0.92}
                         : {r: colour.r + (255 - colour.r) * 0.1, g: colour.g + (255 - colour.g) * 0.1, b: colour.b + (255 - colour.b) * 0.1};
        }
        rule.style.color = `rgb(${Math.round(colour.r)}, ${Math.round(colour.g)}, ${Math.round(colour.b)})`;
        changed++;
      }
    }
    return changed;
  };
  let readableTimer = null;
  new MutationObserver(() => { clearTimeout(readableTimer); readableTimer = setTimeout(window.rtReadableCode, 50); })
    .observe(document.body, {childList: true, subtree: true});
  setTimeout(window.rtReadableCode, 500);
  // A link that names a model (?chat_template_model=): press Infer once its box holds it.
  const linked = new URLSearchParams(window.location.search).get('chat_template_model');
  if (linked) {
    const until = Date.now() + 60000;
    const infer = () => {
      const box = document.querySelector('#chat-template-model textarea, #chat-template-model input');
      const button = document.getElementById('infer-button');
      if (box && button && box.value === linked) { button.click(); return; }
      if (Date.now() < until) setTimeout(infer, 200);
    };
    setTimeout(infer, 200);
  }
  const edited = '#prefix, #generation, #tools, #template-editor';
  // Keys that move or select without editing (the editor deletes on keydown without an input event).
  const moves = /^(Arrow|Page|Home|End|Shift|Control|Alt|Meta|Escape|Tab|CapsLock|F\\d)/;
  let timer = null;
  const click = (id) => { const button = document.getElementById(id); if (button) button.click(); };
  const inside = (event) => event.target.closest && event.target.closest(edited);
  // A paste or a drop is a whole edit: parse at once (after the box took the text), and let no
  // key released meanwhile put it off.
  const whole = (event) => ['paste', 'drop'].includes(event.type) || /^insertFrom(Paste|Drop)$/.test(event.inputType || '');
  let urgent = false;
  const schedule = (ms) => {
    if (urgent && ms === %d) return;
    clearTimeout(timer);
    urgent = ms < %d;
    timer = setTimeout(() => { urgent = false; click('reparse-button'); }, ms);
  };
  for (const kind of ['input', 'paste', 'cut', 'drop']) {
    document.addEventListener(kind, (event) => { if (inside(event)) schedule(whole(event) ? %d : %d); }, true);
  }
  // A key in the template editor that changed its text (Ctrl+Z, Ctrl+Y, Alt+ArrowUp...) edits
  // without an input event: CodeMirror's text before the key, compared when the key is released.
  // The server's own settings of the text (a sample, Reset) happen between no keydown and keyup.
  let textBeforeKey = null;
  document.addEventListener('keyup', (event) => {
    if (!inside(event)) return;
    const view = event.target.closest('#template-editor') ? editorView() : null;
    const changed = view && textBeforeKey && view.state.doc !== textBeforeKey;
    if (view) textBeforeKey = view.state.doc;
    if (changed || (!moves.test(event.key) && !event.ctrlKey && !event.metaKey)) schedule(%d);
  }, true);
  // A press of Parse parses what the boxes hold now: the re-parse a pause would have sent is
  // dropped (it would parse the same text again, and draw over the press's answer).
  document.addEventListener('click', (event) => {
    if (event.target.closest && event.target.closest('#parse-button')) { clearTimeout(timer); urgent = false; }
  }, true);
  // Enter in the scrubber's number box seeks: Gradio sends the slider's `release` (wired to the
  // seek) when that box loses the focus, and nothing on Enter; so the box is left and taken again.
  document.addEventListener('keydown', (event) => {
    const box = event.key === 'Enter' && event.target.closest && event.target.closest('#replay-scrubber input[type=number]');
    if (box) { event.preventDefault(); box.blur(); box.focus(); }
  }, true);
  document.addEventListener('keydown', (event) => {
    if (inside(event) && event.target.closest('#template-editor')) {
      const view = editorView();
      if (view) textBeforeKey = view.state.doc;
    }
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey) && inside(event)) {
      event.preventDefault();
      clearTimeout(timer);
      click('parse-button');
    }
  }, true);
  // Every listener above is in place: the page answers keys (tests wait for this mark; Gradio
  // runs this script once its tree is ready, which can be after the first sample is drawn).
  document.documentElement.dataset.rtPageScript = 'ready';
}""" % (DEBOUNCE_MS, DEBOUNCE_MS, PASTE_MS, DEBOUNCE_MS, DEBOUNCE_MS)

# Share button, after the server made the query string: build the whole URL,
# copy it to the clipboard when the browser allows, and show it.
SHARE_JS = """(query) => {
  if (!query) return query;
  const url = window.location.origin + window.location.pathname + query;
  if (navigator.clipboard) { navigator.clipboard.writeText(url).catch(() => {}); }
  return url;
}"""

# Copy as code, after the server wrote the snippet: to the clipboard when the browser allows.
COPY_JS = """(snippet) => {
  if (snippet && navigator.clipboard) { navigator.clipboard.writeText(snippet).catch(() => {}); }
}"""

# "Mark selection as spelled out": the generation box's selected text as a range of the
# "Spelled out" box (character offsets as Python counts them: code points, not UTF-16 units).
MARK_SPELLED_JS = """(spelled) => {
  const box = document.querySelector('#generation textarea');
  if (!box || box.selectionStart === box.selectionEnd) return spelled;
  const start = Array.from(box.value.slice(0, box.selectionStart)).length;
  const end = start + Array.from(box.value.slice(box.selectionStart, box.selectionEnd)).length;
  const kept = (spelled || '').replace(/\\s+$/, '');
  return (kept ? kept + '\\n' : '') + start + ':' + end;
}"""
