// The playground page's script (served as /playground/app.js, a module). Markdown is rendered by
// `marked` and the HTML it makes is sanitized by `dompurify`, both served by the bridge itself
// (/playground/vendor/, see vendor.ts); raw HTML the assistant writes is shown as text, as Slack
// and Discord show it. Every request goes through api() and stream(): one place for a header.
// Written with String.raw so the script's backslashes reach the browser unchanged; it uses no
// backtick and no dollar-brace of its own. The log's parts are page-replies.ts (messages, replies,
// their controls, a turn's typing indicator, steps and sources) and page-highlight.ts (code).

import { HIGHLIGHT_JS } from './page-highlight.js';
import { REPLIES_JS } from './page-replies.js';

const MAIN_JS = String.raw`
import { marked } from '/playground/vendor/marked.esm.js';
import DOMPurify from '/playground/vendor/purify.es.mjs';

const $ = (id) => document.getElementById(id);
const STORE_KEY = 'playground.conversations';
let current = '';
let source = null;
/** Bumped by every open(): answers for an older one are dropped. */
let generation = 0;
let loaded = false;
/** Events of the stream that came before the history was read: [name, data], replayed after it. */
let buffered = [];
/** The built-in emulator answers (the bridge says so in the page): its commands make good demos. */
const EMULATOR = (document.querySelector('meta[name="playground-upstream"]') || {}).content === 'emulator';
/** The bots a conversation may go to (BOT_ROUTES names several): the first is the default. */
const BOTS = ((document.querySelector('meta[name="playground-bots"]') || {}).content || '').split(',').filter(Boolean);

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
  ALLOWED_ATTR: ['href', 'title', 'start', 'align', 'class'],
  // DOMPurify's own rule with fewer schemes: a value with a scheme must be http(s) or mailto.
  ALLOWED_URI_REGEXP: /^(?:(?:https?|mailto):|[^a-z]|[a-z+.\-]+(?:[^a-z+.\-:]|$))/i,
};
const LINK = /^(?:https?:|mailto:)/i;
const LANGUAGE_CLASS = /^language-[\w+#.-]{1,40}$/;
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  // A class only names a code block's language (marked's language-…): highlighting reads it.
  if (node.hasAttribute('class') && !(node.tagName === 'CODE' && LANGUAGE_CLASS.test(node.getAttribute('class')))) node.removeAttribute('class');
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

// ---- sending ----
/** Posts a typed message; a failure marks it "Not sent" with a "Send again" button, in place. */
async function deliver(el, text, conversation, pending) {
  el.setAttribute('data-state', 'sending');
  const old = el.querySelector('.note');
  if (old) old.textContent = 'Sending again…';
  const wait = pending || addPending(conversation);
  try {
    await liveStream(conversation);
    const r = await api('api/send', BOTS.length > 1 ? { conversation: conversation, text: text, bot: botOf(conversation) } : { conversation: conversation, text: text });
    el.setAttribute('data-state', 'sent');
    if (old) old.remove();
    if (typeof r.eventId === 'string') pendingKnown(wait, r.eventId); else wait.remove();
  } catch (e) {
    wait.remove();
    el.setAttribute('data-state', 'unsent');
    const note = old || div('note');
    note.setAttribute('role', 'alert');
    note.textContent = 'Not sent: ' + e.message;
    const again = button('Send again', 'Send again', () => deliver(el, text, conversation));
    again.className = 'btn';
    note.appendChild(again);
    if (!old) inLog(() => el.appendChild(note));
  }
}
/** A message into the current conversation: shown at once (scrolled to), with the reply's typing indicator under it. */
function sendText(text) {
  remember(current, text.slice(0, 60));
  const el = addUser(text, 'sending', true);
  deliver(el, text, current, addPending(current));
}
function send() {
  const box = $('message');
  const text = box.value.trim();
  if (!text) return;
  box.value = '';
  fitBox();
  sendText(text);
}
/** The message box grows with its text (up to its CSS max-height). */
function fitBox() {
  const box = $('message');
  box.style.height = 'auto';
  box.style.height = Math.min(box.scrollHeight, 192) + 'px';
}

// ---- the bot picker (when BOT_ROUTES names several bots) ----
/** The bot a conversation goes to: picked in this browser (kept with the conversation list), else the default. */
function botOf(id) {
  const c = loadList().find((x) => x.id === id);
  return c && BOTS.includes(c.bot) ? c.bot : BOTS[0];
}
function pickers() {
  if (BOTS.length < 2) return;
  const sel = $('bot');
  for (const b of BOTS) { const o = document.createElement('option'); o.value = b; o.textContent = b; sel.appendChild(o); }
  $('bot-pick').hidden = false;
  sel.addEventListener('change', () => {
    const list = loadList();
    const c = list.find((x) => x.id === current);
    if (c) { c.bot = sel.value; saveList(list); }
    status('Messages here now go to ' + sel.value + '.');
  });
}

// ---- the welcome screen ----
const PROMPTS = EMULATOR ? [
  { title: 'Show a table', message: 'A table, please [table 5] [cols 4]' },
  { title: 'A long answer with code', message: 'Explain with an example [long 1500]' },
  { title: 'Watch it stream', message: 'Take your time [long 2500] [chunks 40] [delay 150]' },
  { title: 'Try Stop (or Esc)', message: 'Stop me halfway [long 4000] [chunks 80] [delay 200]' },
] : [
  { title: 'What can you do?', message: 'What can you help me with?' },
  { title: 'Explain something', message: 'Explain this in simple terms: ' },
  { title: 'Draft a message', message: 'Help me draft a short message about ' },
  { title: 'Write some code', message: 'Write a small function that ' },
];
function welcome() {
  $('emulator-hint').hidden = !EMULATOR;
  if (EMULATOR) $('welcome-text').textContent = 'The built-in emulator answers (no CHAT_API_URL is set): it echoes what you write, and commands in brackets shape its replies.';
  const box = $('prompts');
  for (const p of PROMPTS) {
    const b = button('', p.title + ': ' + p.message.trim(), () => {
      // A prompt that ends open ("…about ") is for the user to finish: it goes into the box.
      if (/\s$/.test(p.message)) { const m = $('message'); m.value = p.message; m.focus(); fitBox(); return; }
      sendText(p.message);
    });
    b.className = 'prompt';
    b.setAttribute('role', 'listitem');
    const t = document.createElement('strong');
    t.textContent = p.title;
    const m = document.createElement('span');
    m.textContent = p.message.trim();
    b.append(t, m);
    box.appendChild(b);
  }
}

// ---- the live stream ----
function connection(text, retry) {
  const p = $('connection');
  p.textContent = text || '';
  if (retry) { const b = button('Reconnect', 'Reconnect', () => connect(current)); b.className = 'btn'; p.appendChild(b); }
  p.hidden = !text;
}
/** One event of the stream: a reply's write, or news of a turn (turn, step, sources, file). */
function onEvent(name, d) {
  if (name === 'reply') upsertReply(d); else onTurnEvent(name, d);
}
function connect(id) {
  if (source) source.close();
  const s = stream(id);
  source = s;
  let lost = false;
  for (const name of ['reply', 'turn', 'step', 'sources', 'file']) {
    s.addEventListener(name, (e) => {
      let d;
      try { d = JSON.parse(e.data); } catch { return; }
      if (loaded) onEvent(name, d); else buffered.push([name, d]);
    });
  }
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
  if (BOTS.length > 1) $('bot').value = botOf(id);
  loaded = false;
  $('log').textContent = '';
  updateEmpty();
  status('');
  menu(false);
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
      // Turns the bridge still works on with no word yet (a reload in that moment): typing again.
      for (const t of h.working || []) if (typeof t === 'string' && repliesOf(t).length === 0) pendingKnown(addPending(id), t);
      if (h.gone) {
        // What the bridge kept of the page's turns is still shown (its store outlives the upstream's memory).
        const kept = (h.messages || []).length > 0;
        notice('gone', 'The assistant no longer knows this conversation (its chat service was restarted or forgot it), so ' +
          (kept ? 'only what this page showed is left, and it will not remember it.' : 'what was said before cannot be shown.') +
          ' A message sent here starts afresh.',
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
      for (const [name, d] of buffered.splice(0)) onEvent(name, d);
      updateEmpty();
      const log = $('log');
      log.scrollTop = log.scrollHeight;
      document.body.setAttribute('data-loaded', id);
    });
}

function menu(show) {
  document.body.classList.toggle('menu-open', show);
  $('menu').setAttribute('aria-expanded', String(show));
  $('backdrop').hidden = !show;
}
`;

/** Wiring and the first conversation: last, once every part of the script is defined. */
const START_JS = String.raw`
// ---- wiring ----
for (const b of document.querySelectorAll('button[data-icon]')) b.prepend(icon(b.getAttribute('data-icon')));
welcome();
pickers();
$('composer').addEventListener('submit', (e) => { e.preventDefault(); send(); });
$('message').addEventListener('keydown', (e) => { if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); } });
$('message').addEventListener('input', fitBox);
$('new').addEventListener('click', () => { open(newId()); $('message').focus(); });
$('menu').addEventListener('click', () => menu(!document.body.classList.contains('menu-open')));
$('close-menu').addEventListener('click', () => menu(false));
$('backdrop').addEventListener('click', () => menu(false));
// Escape closes the drawer when it is open, else stops the newest reply (as its Stop would).
document.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape' || e.isComposing) return;
  if (document.body.classList.contains('menu-open')) { menu(false); return; }
  const stops = $('log').querySelectorAll('[aria-label="Stop"]:not(:disabled)');
  if (stops.length === 0) return;
  e.preventDefault();
  stops[stops.length - 1].click();
});
matchMedia('(min-width: 701px)').addEventListener('change', (e) => { if (e.matches) menu(false); });
$('reset').addEventListener('click', () => {
  api('api/reset', { conversation: current })
    .then(() => { $('log').textContent = ''; updateEmpty(); status('A fresh conversation starts here.'); })
    .catch((e) => status('Not reset: ' + e.message));
});
window.addEventListener('hashchange', () => { const id = location.hash.slice(1); if (id && id !== current) open(id); });

const start = location.hash.slice(1);
open(/^[A-Za-z0-9_-]{1,64}$/.test(start) ? start : (loadList()[0] || { id: newId() }).id);
`;

export const PAGE_JS = MAIN_JS + HIGHLIGHT_JS + REPLIES_JS + START_JS;
