// The playground page's script (served as /playground/app.js, a module). Markdown is rendered by
// `marked` and the HTML it makes is sanitized by `dompurify`, both served by the bridge itself
// (/playground/vendor/, see vendor.ts); raw HTML the assistant writes is shown as text, as Slack
// and Discord show it. Every request goes through api() and stream(): one place for a header.
// Written with String.raw so the script's backslashes reach the browser unchanged; it uses no
// backtick and no dollar-brace of its own.

export const PAGE_JS = String.raw`
import { marked } from '/playground/vendor/marked.esm.js';
import DOMPurify from '/playground/vendor/purify.es.mjs';

const $ = (id) => document.getElementById(id);
const STORE_KEY = 'playground.conversations';
let current = '';
let source = null;
/** Bumped by every open(): answers for an older one are dropped. */
let generation = 0;
let loaded = false;
let buffered = [];

// ---- requests ----
/** The per-process secret the bridge writes into the page; sent with every request. */
let TOKEN = (document.querySelector('meta[name="playground-token"]') || {}).content || '';

/**
 * The bridge restarted (its secret changed): the page reads its new token from its own page, a
 * same-origin read no other site can make (no CORS header), so the call can be made again.
 */
async function refreshToken() {
  const r = await fetch('/', { credentials: 'same-origin', cache: 'no-store' });
  const m = /<meta name="playground-token" content="([^"]*)"/.exec(await r.text());
  if (!m || m[1] === TOKEN) return false;
  TOKEN = m[1];
  return true;
}

/** Every API call of the page: JSON in and out. Rejects with an Error whose status is 0 when nothing answered. */
async function api(path, body, again) {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (TOKEN) headers['x-playground-token'] = TOKEN;
  const init = { method: body === undefined ? 'GET' : 'POST', headers: headers, credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) init.body = JSON.stringify(body);
  let r;
  try { r = await fetch('/playground/' + path, init); } catch {
    throw Object.assign(new Error('the bridge did not answer (is it still running?)'), { status: 0 });
  }
  let j = {};
  try { j = await r.json(); } catch { j = {}; }
  if (r.status === 403 && j.reason === 'bad_page_token' && !again && (await refreshToken().catch(() => false))) {
    if (source) connect(current);
    return api(path, body, true);
  }
  if (!r.ok) throw Object.assign(new Error(j.detail || j.error || ('HTTP ' + r.status)), { status: r.status, code: j.error || '' });
  return j;
}
/** The event stream of a conversation (an EventSource sends cookies but no header: the token goes in the query). */
function stream(conversation) {
  return new EventSource('/playground/events?conversation=' + encodeURIComponent(conversation) + '&page_token=' + encodeURIComponent(TOKEN), { withCredentials: true });
}

// ---- Markdown ----
function escapeHtml(s) {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}
marked.use({
  gfm: true,
  breaks: true,
  renderer: {
    // HTML in a reply is text on the platforms: here too.
    html(token) { return escapeHtml(token.text); },
    // Nothing is loaded from outside the machine: an image is its link.
    image(token) { return '<a href="' + escapeHtml(token.href) + '">' + escapeHtml(token.text || token.href) + '</a>'; },
  },
});
const PURIFY = {
  ALLOWED_TAGS: ['a', 'b', 'blockquote', 'br', 'code', 'del', 'em', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'li',
    'ol', 'p', 'pre', 's', 'strong', 'table', 'tbody', 'td', 'th', 'thead', 'tr', 'ul'],
  ALLOWED_ATTR: ['href', 'title', 'start', 'align'],
  // DOMPurify's own rule with fewer schemes: a value with a scheme must be http(s) or mailto.
  ALLOWED_URI_REGEXP: /^(?:(?:https?|mailto):|[^a-z]|[a-z+.\-]+(?:[^a-z+.\-:]|$))/i,
};
const LINK = /^(?:https?:|mailto:)/i;
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName !== 'A') return;
  // A link leads out of the page, in a tab of its own: a relative one would point into the bridge.
  if (!LINK.test(node.getAttribute('href') || '')) node.removeAttribute('href');
  node.setAttribute('target', '_blank');
  node.setAttribute('rel', 'noopener noreferrer');
});
/** Markdown, possibly cut midway while it streams, to sanitized HTML. */
function render(text) { return DOMPurify.sanitize(marked.parse(text || '').trim(), PURIFY); }

// ---- the conversation list (kept in this browser) ----
function newId() {
  const a = new Uint8Array(9);
  crypto.getRandomValues(a);
  return Array.from(a, (b) => b.toString(36).padStart(2, '0')).join('').slice(0, 16);
}
function loadList() {
  try { const v = JSON.parse(localStorage.getItem(STORE_KEY) || '[]'); return Array.isArray(v) ? v : []; } catch { return []; }
}
function saveList(list) { localStorage.setItem(STORE_KEY, JSON.stringify(list.slice(0, 100))); }
function remember(id, title) {
  const list = loadList();
  const found = list.find((c) => c.id === id);
  if (found) { if (title && !found.title) found.title = title; } else list.unshift({ id: id, title: title || '' });
  saveList(list);
  renderList();
}
function renderList() {
  const ul = $('conversations');
  ul.textContent = '';
  for (const c of loadList()) {
    const li = document.createElement('li');
    const b = button(c.title || 'New conversation', null, () => open(c.id));
    b.setAttribute('aria-current', String(c.id === current));
    li.appendChild(b);
    ul.appendChild(li);
  }
  const cur = loadList().find((c) => c.id === current);
  $('title').textContent = cur && cur.title ? cur.title : 'New conversation';
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
/** Runs a change of the log and keeps it scrolled to the end if it was there (reading above stays put). */
function inLog(change) {
  const log = $('log');
  const atEnd = log.scrollHeight - log.scrollTop - log.clientHeight < 48;
  const r = change(log);
  if (atEnd) log.scrollTop = log.scrollHeight;
  return r;
}
/** A notice in the log (the conversation is gone, could not be read), with its buttons. */
function notice(kind, text, actions) {
  inLog((log) => {
    const el = document.createElement('div');
    el.className = 'notice';
    el.setAttribute('role', 'alert');
    el.setAttribute('data-notice', kind);
    el.textContent = text;
    for (const [label, fn] of actions) el.appendChild(button(label, label, fn));
    log.prepend(el);
  });
}

function addUser(text, state) {
  return inLog((log) => {
    const el = document.createElement('div');
    el.className = 'msg user';
    el.setAttribute('data-state', state || 'sent');
    const t = document.createElement('div');
    t.className = 'text';
    t.textContent = text;
    el.appendChild(t);
    log.appendChild(el);
    return el;
  });
}

/** Posts a typed message; a failure marks it "Not sent" with a "Send again" button, in place. */
async function deliver(el, text, conversation) {
  el.setAttribute('data-state', 'sending');
  const old = el.querySelector('.note');
  if (old) old.textContent = 'Sending again…';
  try {
    await liveStream(conversation);
    await api('api/send', { conversation: conversation, text: text });
    el.setAttribute('data-state', 'sent');
    if (old) old.remove();
  } catch (e) {
    el.setAttribute('data-state', 'unsent');
    const note = old || document.createElement('div');
    note.className = 'note';
    note.setAttribute('role', 'alert');
    note.textContent = 'Not sent: ' + e.message;
    note.appendChild(button('Send again', 'Send again', () => deliver(el, text, conversation)));
    if (!old) inLog(() => el.appendChild(note));
  }
}

const BADGES = { stopped: 'Stopped', interrupted: 'Interrupted', error: 'Failed' };

/** A reply's message, created or updated from one write the bridge made (or from history). */
function upsertReply(v) {
  inLog((log) => {
    let el = log.querySelector('[data-reply="' + CSS.escape(v.id) + '"]');
    if (!el) {
      el = document.createElement('div');
      el.className = 'msg assistant';
      el.setAttribute('data-reply', v.id);
      for (const c of ['body', 'badge', 'controls']) { const d = document.createElement('div'); d.className = c; el.appendChild(d); }
      log.appendChild(el);
    }
    el.setAttribute('data-state', v.state);
    if (typeof v.writes === 'number') el.setAttribute('data-writes', String(v.writes));
    if (el.shownText !== v.text) { el.shownText = v.text; el.querySelector('.body').innerHTML = render(v.text); }
    el.querySelector('.badge').textContent = BADGES[v.state] || '';
    const key = v.state + '|' + (v.replyKey || '') + '|' + !!v.feedback;
    if (el.dataset.controls !== key) { el.dataset.controls = key; controlsFor(el.querySelector('.controls'), v); }
  });
}

function controlsFor(controls, v) {
  controls.textContent = '';
  if (v.state === 'streaming' && v.replyKey) {
    const stop = button('Stop', 'Stop', () => {
      stop.disabled = true;
      api('api/stop', { replyKey: v.replyKey })
        .then((j) => { if (j.result !== 'stopped') status('That reply had already ended.'); })
        .catch((e) => { stop.disabled = false; status('Not stopped: ' + e.message); });
    });
    controls.appendChild(stop);
  } else if (v.state === 'final' && v.feedback && v.replyKey) {
    for (const [vote, label, glyph] of [['up', 'Good reply', '\u{1F44D}'], ['down', 'Bad reply', '\u{1F44E}']]) {
      const b = button(glyph, label, () => api('api/vote', { replyKey: v.replyKey, vote: vote }).then((j) => {
        if (j.result !== 'recorded') { status('That reply can no longer be rated.'); return; }
        for (const o of controls.querySelectorAll('button')) o.setAttribute('aria-pressed', String(o === b));
        status('Thanks for the feedback.');
      }).catch((e) => status('Vote not recorded: ' + e.message)));
      b.setAttribute('aria-pressed', 'false');
      controls.appendChild(b);
    }
  }
}

// ---- the live stream ----
function connection(text, retry) {
  const p = $('connection');
  p.textContent = text || '';
  if (retry) p.appendChild(button('Reconnect', 'Reconnect', () => connect(current)));
  p.hidden = !text;
}
function connect(id) {
  if (source) source.close();
  const s = stream(id);
  source = s;
  let lost = false;
  s.addEventListener('reply', (e) => {
    const v = JSON.parse(e.data);
    if (loaded) upsertReply(v); else buffered.push(v);
  });
  // The bridge ends a stream idle for long (it bounds them): closed here, opened again before the next send.
  s.addEventListener('idle', () => { s.close(); if (source === s) source = null; });
  s.addEventListener('open', () => {
    connection('');
    if (lost && loaded && current === id) catchUp(id);
    lost = false;
  });
  s.addEventListener('error', () => {
    if (source !== s) return;
    lost = true;
    if (s.readyState === EventSource.CLOSED) connection('Live updates stopped: the bridge refused the stream.', true);
    else connection('Connection to the bridge lost; reconnecting…');
  });
}
/** Before a send: an open stream, so the reply's writes are seen (waits a little for a connecting one). */
function liveStream(id) {
  if (current === id && (!source || source.readyState === EventSource.CLOSED)) connect(id);
  const s = source;
  if (current !== id || !s || s.readyState === EventSource.OPEN) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => { clearTimeout(timer); s.removeEventListener('open', done); s.removeEventListener('error', done); resolve(); };
    const timer = setTimeout(done, 3000);
    s.addEventListener('open', done);
    s.addEventListener('error', done);
  });
}
/** After the stream came back: writes missed meanwhile are read from history (replies only). */
function catchUp(id) {
  api('api/history?conversation=' + encodeURIComponent(id)).then((h) => {
    if (current !== id) return;
    for (const m of h.messages || []) if (m.role !== 'user' && $('log').querySelector('[data-reply="' + CSS.escape(m.id) + '"]')) upsertReply(m);
  }).catch(() => {});
}

// ---- opening a conversation ----
function open(id) {
  const gen = ++generation;
  current = id;
  if (location.hash.slice(1) !== id) history.replaceState(null, '', '#' + id);
  remember(id);
  $('log').textContent = '';
  status('');
  menu(false);
  loaded = false;
  buffered = [];
  document.body.removeAttribute('data-loaded');
  connect(id);
  api('api/history?conversation=' + encodeURIComponent(id))
    .then((h) => {
      if (gen !== generation) return;
      for (const m of h.messages || []) {
        if (m.role === 'user') addUser(m.text);
        else upsertReply(m);
      }
      if (h.gone) {
        notice('gone', 'The assistant no longer knows this conversation (its chat service was restarted or forgot it), so what was said before cannot be shown. A message sent here starts afresh.',
          [['Start a new conversation', () => open(newId())]]);
      }
    })
    .catch((e) => {
      if (gen !== generation) return;
      notice('unreadable', 'Could not read this conversation: ' + e.message, [['Try again', () => open(id)]]);
    })
    .finally(() => {
      if (gen !== generation) return;
      loaded = true;
      for (const v of buffered.splice(0)) upsertReply(v);
      document.body.setAttribute('data-loaded', id);
    });
}

function send() {
  const box = $('message');
  const text = box.value.trim();
  if (!text) return;
  box.value = '';
  remember(current, text.slice(0, 60));
  deliver(addUser(text, 'sending'), text, current);
}

function menu(show) {
  document.body.classList.toggle('menu-open', show);
  $('menu').setAttribute('aria-expanded', String(show));
  $('backdrop').hidden = !show;
}

$('composer').addEventListener('submit', (e) => { e.preventDefault(); send(); });
$('message').addEventListener('keydown', (e) => { if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); } });
$('new').addEventListener('click', () => open(newId()));
$('menu').addEventListener('click', () => menu(!document.body.classList.contains('menu-open')));
$('close-menu').addEventListener('click', () => menu(false));
$('backdrop').addEventListener('click', () => menu(false));
document.addEventListener('keydown', (e) => { if (e.key === 'Escape') menu(false); });
matchMedia('(min-width: 701px)').addEventListener('change', (e) => { if (e.matches) menu(false); });
$('reset').addEventListener('click', () => {
  api('api/reset', { conversation: current })
    .then(() => { $('log').textContent = ''; status('A fresh conversation starts here.'); })
    .catch((e) => status('Not reset: ' + e.message));
});
window.addEventListener('hashchange', () => { const id = location.hash.slice(1); if (id && id !== current) open(id); });

const start = location.hash.slice(1);
open(/^[A-Za-z0-9_-]{1,64}$/.test(start) ? start : (loadList()[0] || { id: newId() }).id);
`;
