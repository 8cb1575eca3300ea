// The page's log (part of /playground/app.js, see page-script.ts): the messages, a turn's typing
// indicator and Stop before its first word, the replies with their controls (Stop, copy, thumbs,
// retry), code blocks (highlighted, with a copy button), and the assistant's work beside the
// answer (issue 36: the running step under a streaming reply, then its sources and files).
// A turn is named by the eventId `api/send` returned; its reply's messages are `<eventId>.<part>`.
// Written with String.raw: no backtick and no dollar-brace of its own.

export const REPLIES_JS = String.raw`
// ---- icons (inline SVG: no emoji font needed) ----
const ICONS = {
  copy: '<rect x="9" y="9" width="11" height="11" rx="2"/><path d="M5 15V6a2 2 0 0 1 2-2h9"/>',
  check: '<path d="M5 12.5l4.5 4.5L19 7.5"/>',
  up: '<path d="M7 11v9H4.5A1.5 1.5 0 0 1 3 18.5v-6A1.5 1.5 0 0 1 4.5 11zM7 11l3.6-7.2A2 2 0 0 1 14.4 5l-.9 4h5.3a2 2 0 0 1 2 2.4l-1.4 7A2 2 0 0 1 17.4 20H7"/>',
  down: '<path d="M17 13V4h2.5A1.5 1.5 0 0 1 21 5.5v6a1.5 1.5 0 0 1-1.5 1.5zM17 13l-3.6 7.2A2 2 0 0 1 9.6 19l.9-4H5.2a2 2 0 0 1-2-2.4l1.4-7A2 2 0 0 1 6.6 4H17"/>',
  retry: '<path d="M20 12a8 8 0 1 1-2.4-5.7"/><path d="M20 4v5h-5"/>',
  reset: '<path d="M4 12a8 8 0 1 0 2.4-5.7"/><path d="M4 4v5h5"/>',
  stop: '<rect x="6" y="6" width="12" height="12" rx="2"/>',
  send: '<path d="M12 19V5M6 11l6-6 6 6"/>',
  menu: '<path d="M4 7h16M4 12h16M4 17h16"/>',
  close: '<path d="M6 6l12 12M18 6L6 18"/>',
  plus: '<path d="M12 5v14M5 12h14"/>',
};
function icon(name) {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('class', 'icon');
  svg.setAttribute('aria-hidden', 'true');
  svg.innerHTML = ICONS[name] || '';
  return svg;
}
function div(cls) { const d = document.createElement('div'); d.className = cls; return d; }
/** A button showing an icon only; its name is its aria-label (and its tooltip). */
function iconButton(name, label, onclick) {
  const b = button('', label, onclick);
  b.className = 'icon-btn';
  b.title = label;
  b.appendChild(icon(name));
  return b;
}

// ---- copying ----
/** Copies text (the Clipboard API where the page is a secure context, else the older way). */
async function copyText(text, btn) {
  try {
    if (navigator.clipboard && window.isSecureContext) await navigator.clipboard.writeText(text);
    else {
      const ta = document.createElement('textarea');
      ta.value = text;
      ta.setAttribute('readonly', '');
      ta.className = 'offscreen';
      document.body.appendChild(ta);
      ta.select();
      const ok = document.execCommand('copy');
      ta.remove();
      if (!ok) throw new Error('the browser refused');
    }
  } catch (e) { status('Not copied: ' + (e && e.message ? e.message : e)); return; }
  status('Copied to the clipboard.');
  if (!btn) return;
  btn.setAttribute('data-copied', '');
  const svg = btn.querySelector('svg');
  if (svg) svg.replaceWith(icon('check'));
  setTimeout(() => {
    btn.removeAttribute('data-copied');
    const s = btn.querySelector('svg');
    if (s) s.replaceWith(icon('copy'));
  }, 1500);
}

// ---- the log ----
function status(text) { $('status').textContent = text || ''; }
function button(text, label, onclick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = text;
  if (label) b.setAttribute('aria-label', label);
  b.onclick = onclick;
  return b;
}
/**
 * Runs a change of the log and keeps it scrolled to the end if it was there (reading above stays
 * put); with toEnd it scrolls there anyway (the user just sent something).
 */
function inLog(change, toEnd) {
  const log = $('log');
  const atEnd = log.scrollHeight - log.scrollTop - log.clientHeight < 48;
  const r = change(log);
  updateEmpty();
  if (atEnd || toEnd) log.scrollTop = log.scrollHeight;
  return r;
}
/** An empty conversation shows the welcome screen instead of an empty log. */
function updateEmpty() {
  const empty = loaded && !$('log').querySelector('.msg, .notice');
  document.body.classList.toggle('empty', empty);
  $('welcome').hidden = !empty;
}
/** A notice in the log (the conversation is gone, could not be read), with its buttons. */
function notice(kind, text, actions) {
  inLog((log) => {
    const el = div('notice');
    el.setAttribute('role', 'alert');
    el.setAttribute('data-notice', kind);
    el.textContent = text;
    for (const [label, fn] of actions) { const b = button(label, label, fn); b.className = 'btn'; el.appendChild(b); }
    log.prepend(el);
  });
}

function addUser(text, state, toEnd) {
  return inLog((log) => {
    const el = div('msg user');
    el.setAttribute('data-state', state || 'sent');
    const t = div('text');
    t.textContent = text;
    const controls = div('controls');
    controls.appendChild(iconButton('copy', 'Copy message', function () { copyText(text, this); }));
    el.append(t, controls);
    log.appendChild(el);
    return el;
  }, toEnd);
}

// ---- a turn before its first word ----
/** Turns that ended (eventId → result), for a send whose answer came after its turn's events. */
const ended = new Map();
/**
 * What came beside the answer, by turn: { steps (running now), done (the steps once the reply
 * ended), sources, files }. Bounded: old turns are dropped.
 */
const extras = new Map();
function extrasOf(turnId) {
  let x = extras.get(turnId);
  if (!x) {
    x = { steps: [], done: [], sources: [], files: [] };
    extras.set(turnId, x);
    if (extras.size > 200) extras.delete(extras.keys().next().value);
  }
  return x;
}
function turnOf(id) { const dot = id.lastIndexOf('.'); return dot > 0 ? id.slice(0, dot) : id; }
function repliesOf(turnId) { return $('log').querySelectorAll('[data-reply^="' + CSS.escape(turnId + '.') + '"]'); }
function pendingOf(turnId) { return $('log').querySelector('[data-pending][data-turn="' + CSS.escape(turnId) + '"]'); }

/** The assistant's place in the log from the moment a message is sent: a typing indicator and Stop. */
function addPending(conversation) {
  return inLog((log) => {
    const el = div('msg assistant pending');
    el.setAttribute('data-pending', '');
    el.conversation = conversation;
    const dots = div('typing');
    dots.setAttribute('role', 'status');
    dots.setAttribute('aria-label', 'The assistant is writing');
    for (let i = 0; i < 3; i++) dots.appendChild(document.createElement('i'));
    const controls = div('controls');
    const stop = stopButton(() => stopPending(el, stop));
    controls.appendChild(stop);
    el.append(dots, div('step-line'), controls);
    log.appendChild(el);
    return el;
  }, true);
}
/** The turn's eventId is known (the send was answered): it may already have a reply, or have ended. */
function pendingKnown(el, turnId) {
  el.setAttribute('data-turn', turnId);
  if (repliesOf(turnId).length > 0) { el.remove(); updateEmpty(); return; }
  if (ended.has(turnId)) { pendingEnded(el, ended.get(turnId)); return; }
  showExtras(turnId);
  if (el.stopWanted) askStop(el);
}
function pendingEnded(el, result) {
  if (result === 'stopped') {
    // Stopped before a word: nothing was written; the log says so where the reply would have been.
    el.removeAttribute('data-pending');
    el.className = 'msg assistant';
    el.textContent = '';
    const b = div('badge');
    b.textContent = 'Stopped before a reply';
    el.appendChild(b);
    el.setAttribute('data-ended', 'stopped');
    return;
  }
  el.remove();
  updateEmpty();
}
function stopButton(onclick) {
  const b = button('Stop', 'Stop', onclick);
  b.className = 'stop-btn';
  b.prepend(icon('stop'));
  return b;
}
/** Stop before the first word: by conversation (its reply has no key yet), else at its first write. */
function stopPending(el, btn) {
  btn.disabled = true;
  el.stopWanted = true;
  if (el.getAttribute('data-turn')) askStop(el);
}
function askStop(el) {
  // A reply still streaming before this one in the conversation would be the one stopped by
  // conversation: this turn then waits for its own first write (upsertReply stops it there).
  if ($('log').querySelector('[data-reply][data-state="streaming"]')) return;
  api('api/stop', { conversation: el.conversation }).catch((e) => status('Not stopped: ' + e.message));
}

// ---- replies ----
const BADGES = { stopped: 'Stopped', interrupted: 'Interrupted', error: 'Failed' };
/** The note the bridge ends a cut reply with ("_(stopped)_", "_(reply interrupted)_"): a badge would say it twice. */
const BRIDGE_NOTE = /_\([^\n]*\)_\s*$/;

/** A reply's message, created or updated from one write the bridge made (or from history). */
function upsertReply(v) {
  const turnId = turnOf(v.id);
  inLog((log) => {
    let el = log.querySelector('[data-reply="' + CSS.escape(v.id) + '"]');
    if (!el) {
      el = div('msg assistant');
      el.setAttribute('data-reply', v.id);
      for (const c of ['body', 'step-line', 'extras', 'badge', 'controls']) el.appendChild(div(c));
      const pending = pendingOf(turnId);
      if (pending) {
        pending.replaceWith(el);
        if (pending.stopWanted && v.replyKey && v.state === 'streaming') api('api/stop', { replyKey: v.replyKey }).catch(() => {});
      } else log.appendChild(el);
    }
    if (v.notice) el.setAttribute('data-notice', '');
    if (v.vote) el.vote = v.vote;
    el.setAttribute('data-state', v.state);
    if (typeof v.writes === 'number') el.setAttribute('data-writes', String(v.writes));
    if (el.shownText !== v.text) {
      el.shownText = v.text;
      const body = el.querySelector('.body');
      body.innerHTML = render(v.text);
      enhance(body);
    }
    el.querySelector('.badge').textContent = BRIDGE_NOTE.test(v.text || '') ? '' : BADGES[v.state] || '';
    // The files kept with the reply (a reload, or the write that follows the turn's file events).
    if (Array.isArray(v.files)) extrasOf(turnId).files = v.files.filter((f) => f && typeof f.name === 'string');
    // The steps it took, on its last message once it ended (live, and from history after a reload).
    if (Array.isArray(v.steps)) extrasOf(turnId).done = v.steps.filter((s) => s && typeof s.title === 'string');
    const key = [v.state, v.replyKey || '', !!v.feedback, el.vote || '', !!v.notice].join('|');
    if (el.dataset.controls !== key) { el.dataset.controls = key; controlsFor(el, v); }
  });
  showExtras(turnId);
}

/** Code blocks: highlighted, with their language and a copy button above. */
function enhance(body) {
  for (const pre of body.querySelectorAll('pre')) {
    const code = pre.querySelector('code');
    if (code) highlightCode(code);
    const block = div('code-block');
    const head = div('code-head');
    head.setAttribute('data-lang', (code && langOf(code)) || 'code');
    const copy = iconButton('copy', 'Copy code', () => copyText((code || pre).textContent, copy));
    head.appendChild(copy);
    pre.replaceWith(block);
    block.append(head, pre);
  }
}

/** The user's message a reply answers (for Retry): the nearest one above it. */
function askedBefore(el) {
  for (let p = el.previousElementSibling; p; p = p.previousElementSibling) {
    if (p.classList.contains('user')) return (p.querySelector('.text') || {}).textContent || '';
  }
  return '';
}

function controlsFor(el, v) {
  const controls = el.querySelector('.controls');
  controls.textContent = '';
  if (v.state === 'streaming') {
    if (!v.replyKey) return;
    const stop = stopButton(() => {
      stop.disabled = true;
      api('api/stop', { replyKey: v.replyKey })
        .then((j) => { if (j.result !== 'stopped') status('That reply had already ended.'); })
        .catch((e) => { stop.disabled = false; status('Not stopped: ' + e.message); });
    });
    controls.appendChild(stop);
    return;
  }
  if (v.notice) return;
  controls.appendChild(iconButton('copy', 'Copy message', function () { copyText(el.shownText || '', this); }));
  if (v.state === 'final' && v.feedback && v.replyKey) {
    for (const [vote, label] of [['up', 'Good reply'], ['down', 'Bad reply']]) {
      const b = iconButton(vote, label, () => api('api/vote', { replyKey: v.replyKey, vote: vote }).then((j) => {
        if (j.result !== 'recorded') { status('That reply can no longer be rated.'); return; }
        el.vote = vote;
        for (const o of controls.querySelectorAll('[data-vote]')) o.setAttribute('aria-pressed', String(o === b));
        status('Thanks for the feedback.');
      }).catch((e) => status('Vote not recorded: ' + e.message)));
      b.setAttribute('data-vote', vote);
      b.setAttribute('aria-pressed', String(el.vote === vote));
      controls.appendChild(b);
    }
  }
  const asked = v.state === 'final' ? '' : askedBefore(el);
  if (asked) {
    const retry = button('Retry', 'Retry', () => { retry.disabled = true; retryReply(el, asked); });
    retry.className = 'btn retry-btn';
    retry.title = 'Ask again: a new reply replaces this one';
    retry.prepend(icon('retry'));
    controls.appendChild(retry);
  }
}

/**
 * Retry (issue 41): the reply's messages give way to a new turn's typing indicator, in their place;
 * the bridge is told which turn this one replaces, so a reload does not show the failed one.
 * If the message does not go out, the failed reply comes back.
 */
function retryReply(el, text) {
  const conversation = current;
  const turnId = turnOf(el.getAttribute('data-reply'));
  const parts = [...repliesOf(turnId)];
  const wait = addPending(conversation);
  inLog(() => { parts[0].before(wait); for (const p of parts) p.remove(); });
  extras.delete(turnId);
  const body = { conversation: conversation, text: text, retryOf: turnId };
  if (BOTS.length > 1) body.bot = botOf(conversation);
  liveStream(conversation)
    .then(() => api('api/send', body))
    .then((r) => { if (typeof r.eventId === 'string') pendingKnown(wait, r.eventId); else wait.remove(); })
    .catch((e) => {
      inLog(() => { wait.replaceWith(...parts); });
      const b = parts[parts.length - 1].querySelector('.retry-btn');
      if (b) b.disabled = false;
      status('Not sent: ' + e.message);
    });
}

// ---- beside the answer: steps, sources, files (issue 36) ----
function onTurnEvent(kind, d) {
  if (!d || typeof d.eventId !== 'string') return;
  const x = extrasOf(d.eventId);
  if (kind === 'turn' && d.state === 'done') {
    ended.set(d.eventId, d.result || '');
    if (ended.size > 200) ended.delete(ended.keys().next().value);
    x.steps = [];
    const p = pendingOf(d.eventId);
    if (p) pendingEnded(p, d.result);
  } else if (kind === 'step' && Array.isArray(d.steps)) x.steps = d.steps;
  else if (kind === 'sources' && Array.isArray(d.sources)) {
    for (const s of d.sources) if (s && typeof s.url === 'string' && !x.sources.some((o) => o.url === s.url)) x.sources.push(s);
  } else if (kind === 'file' && d.file && typeof d.file.name === 'string') x.files.push(d.file);
  showExtras(d.eventId);
}

/**
 * The running step under the turn's streaming reply (or its typing indicator); once it ended, its
 * steps folded into a list, then its sources and files, after its last message. Drawn again only
 * when they change (a list the user opened stays open).
 */
function showExtras(turnId) {
  const x = extras.get(turnId);
  if (!x) return;
  const parts = repliesOf(turnId);
  const last = parts[parts.length - 1];
  const target = pendingOf(turnId) || last;
  if (!target) return;
  const running = x.steps.filter((s) => s && s.state === 'running');
  const streaming = target.hasAttribute('data-pending') || target.getAttribute('data-state') === 'streaming';
  const line = target.querySelector('.step-line');
  if (line) line.textContent = streaming && running.length ? String(running[running.length - 1].title || 'Working') + '…' : '';
  for (const p of parts) if (p !== last) { const e = p.querySelector('.extras'); if (e) e.textContent = ''; }
  const box = last && last.querySelector('.extras');
  const done = last && last.getAttribute('data-state') !== 'streaming' ? x.done : [];
  const key = JSON.stringify([done, x.sources, x.files]);
  if (box && (done.length || x.sources.length || x.files.length) && box.dataset.shown !== key) {
    box.dataset.shown = key;
    box.textContent = '';
    if (done.length) box.appendChild(stepList(done));
    if (x.sources.length) box.appendChild(sourceList(x.sources));
    if (x.files.length) box.appendChild(fileList(x.files));
  }
}
/** A reply's steps, folded ("3 steps"): each one's title, and whether it failed. */
function stepList(steps) {
  const box = document.createElement('details');
  box.className = 'steps';
  const summary = document.createElement('summary');
  summary.textContent = steps.length === 1 ? '1 step' : steps.length + ' steps';
  const ol = document.createElement('ol');
  for (const s of steps) {
    const li = document.createElement('li');
    li.setAttribute('data-step', s.state === 'failed' ? 'failed' : 'done');
    li.textContent = String(s.title) + (s.state === 'failed' ? ' (failed)' : '');
    ol.appendChild(li);
  }
  box.append(summary, ol);
  return box;
}
function link(href, text, download) {
  const a = document.createElement('a');
  a.textContent = text;
  if (download) { a.href = href; a.download = download; } else if (/^https?:/i.test(href)) {
    a.href = href;
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
  }
  return a;
}
function sourceList(sources) {
  const box = div('sources');
  const h = document.createElement('h3');
  h.textContent = 'Sources';
  const ol = document.createElement('ol');
  for (const s of sources) {
    let label = s.title;
    if (!label) { try { label = new URL(s.url).host; } catch { label = s.url; } }
    const li = document.createElement('li');
    li.appendChild(link(s.url, label));
    ol.appendChild(li);
  }
  box.append(h, ol);
  return box;
}
function fileList(files) {
  const box = div('files');
  const h = document.createElement('h3');
  h.textContent = 'Files';
  const ul = document.createElement('ul');
  for (const f of files) {
    const li = document.createElement('li');
    const size = typeof f.size === 'number' ? ' (' + (f.size < 1024 ? f.size + ' B' : Math.ceil(f.size / 1024) + ' KB') + ')' : '';
    if (typeof f.dataUrl === 'string' && f.dataUrl.startsWith('data:')) li.appendChild(link(f.dataUrl, f.name + size, f.name));
    else if (typeof f.url === 'string') li.appendChild(link(f.url, f.name + size));
    else li.textContent = f.name + size + ': too large to show here';
    ul.appendChild(li);
  }
  box.append(h, ul);
  return box;
}
`;
