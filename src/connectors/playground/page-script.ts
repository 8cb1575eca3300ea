// The playground page's script (served as /playground/app.js). Plain browser JavaScript, no
// library: Markdown is rendered from escaped text by a small subset (code, bold, italics, links,
// headings, lists), so nothing the assistant writes becomes markup of its own.
// Written with String.raw so the script's backslashes reach the browser unchanged; it uses no
// backtick and no dollar-brace of its own.

export const PAGE_JS = String.raw`
const BT = String.fromCharCode(96);
const $ = (id) => document.getElementById(id);
const STORE_KEY = 'playground.conversations';
let current = '';
let source = null;
// This browser's token for this bridge process (http.ts injects it): sent with every API call.
const TOKEN = (document.querySelector('meta[name="playground-token"]') || { content: '' }).content;
const AUTH = { 'x-playground-token': TOKEN };

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
  if (found) { if (title && !found.title) found.title = title; }
  else list.unshift({ id: id, title: title || '' });
  saveList(list);
  renderList();
}

function escapeHtml(s) {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}
function inline(s) {
  const parts = s.split(BT);
  return parts.map((p, i) => {
    if (i % 2 === 1 && i < parts.length - 1) return '<code>' + p + '</code>';
    let t = p;
    t = t.replace(/\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g, (m, label, href) => '<a href="' + href + '" rel="noopener noreferrer" target="_blank">' + label + '</a>');
    t = t.replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
    t = t.replace(/(^|[\s(])[*_]([^*_\s][^*_]*)[*_](?=$|[\s).,!?:;])/g, '$1<em>$2</em>');
    return t;
  }).join(parts.length % 2 === 0 ? BT : '');
}
/** Markdown subset from escaped text: the only tags are the ones written here. */
function markdown(text) {
  const lines = escapeHtml(text).split('\n');
  const out = [];
  let code = null;
  let list = false;
  for (const line of lines) {
    if (line.startsWith(BT + BT + BT)) {
      if (code === null) { code = []; } else { out.push('<pre><code>' + code.join('\n') + '</code></pre>'); code = null; }
      continue;
    }
    if (code !== null) { code.push(line); continue; }
    const item = /^\s*(?:[-*+]|\d+\.)\s+(.*)$/.exec(line);
    if (item) { if (!list) { out.push('<ul>'); list = true; } out.push('<li>' + inline(item[1]) + '</li>'); continue; }
    if (list) { out.push('</ul>'); list = false; }
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (h) { out.push('<h' + (h[1].length + 2 > 6 ? 6 : h[1].length + 2) + '>' + inline(h[2]) + '</h' + (h[1].length + 2 > 6 ? 6 : h[1].length + 2) + '>'); continue; }
    if (line.trim() !== '') out.push('<p>' + inline(line) + '</p>');
  }
  if (list) out.push('</ul>');
  if (code !== null) out.push('<pre><code>' + code.join('\n') + '</code></pre>');
  return out.join('');
}

function post(path, body) {
  return fetch('/playground/api/' + path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-playground-token': TOKEN }, body: JSON.stringify(body) })
    .then((r) => r.json().then((j) => { if (!r.ok) throw new Error(j.detail || j.error || ('HTTP ' + r.status)); return j; }));
}
function status(text) { $('status').textContent = text || ''; }

function addUser(text) {
  const el = document.createElement('div');
  el.className = 'msg user';
  el.textContent = text;
  $('log').appendChild(el);
  el.scrollIntoView({ block: 'end' });
}

/** A reply's message, created or updated from one write the bridge made. */
function upsertReply(v) {
  let el = $('log').querySelector('[data-reply="' + CSS.escape(v.id) + '"]');
  if (!el) {
    el = document.createElement('div');
    el.className = 'msg assistant';
    el.setAttribute('data-reply', v.id);
    el.innerHTML = '<div class="body"></div><div class="controls"></div>';
    $('log').appendChild(el);
  }
  el.setAttribute('data-state', v.state);
  if (typeof v.writes === 'number') el.setAttribute('data-writes', String(v.writes));
  el.querySelector('.body').innerHTML = markdown(v.text || '');
  const controls = el.querySelector('.controls');
  controls.textContent = '';
  if (v.state === 'streaming' && v.replyKey) {
    const stop = document.createElement('button');
    stop.type = 'button';
    stop.textContent = 'Stop';
    stop.setAttribute('aria-label', 'Stop');
    stop.onclick = () => { stop.disabled = true; post('stop', { replyKey: v.replyKey }).catch((e) => status(e.message)); };
    controls.appendChild(stop);
  } else if (v.feedback && v.replyKey) {
    for (const [vote, label, glyph] of [['up', 'Good reply', '\u{1F44D}'], ['down', 'Bad reply', '\u{1F44E}']]) {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = glyph;
      b.setAttribute('aria-label', label);
      b.setAttribute('aria-pressed', 'false');
      b.onclick = () => post('vote', { replyKey: v.replyKey, vote: vote }).then((j) => {
        if (j.result !== 'recorded') { status('That reply can no longer be rated.'); return; }
        for (const o of controls.querySelectorAll('button')) o.setAttribute('aria-pressed', String(o === b));
        status('Thanks for the feedback.');
      }).catch((e) => status(e.message));
      controls.appendChild(b);
    }
  }
  el.scrollIntoView({ block: 'end' });
}

function open(id) {
  current = id;
  if (location.hash.slice(1) !== id) history.replaceState(null, '', '#' + id);
  remember(id);
  $('log').textContent = '';
  status('');
  renderList();
  if (source) source.close();
  const pending = [];
  let ready = false;
  source = follow(id, (v) => { if (ready) upsertReply(v); else pending.push(v); });
  fetch('/playground/api/history?conversation=' + encodeURIComponent(id), { headers: AUTH })
    .then((r) => r.json().then((j) => { if (!r.ok) throw new Error(j.detail || j.error || ('HTTP ' + r.status)); return j; }))
    .then((h) => {
      if (current !== id) return;
      for (const m of h.messages || []) {
        if (m.role === 'user') addUser(m.text);
        else upsertReply({ id: 'h-' + m.id, text: m.text, state: 'final', feedback: false });
      }
      for (const v of h.live || []) upsertReply(v);
    })
    .catch((e) => status('could not read the conversation: ' + e.message))
    .finally(() => { ready = true; for (const v of pending.splice(0)) upsertReply(v); document.body.setAttribute('data-loaded', id); });
}

/** The conversation's live writes; an idle stream ends (the bridge bounds them) and is opened again on the next send. */
function follow(id, onReply) {
  const es = new EventSource('/playground/events?conversation=' + encodeURIComponent(id) + '&page_token=' + encodeURIComponent(TOKEN));
  es.addEventListener('reply', (e) => onReply(JSON.parse(e.data)));
  es.addEventListener('idle', () => { es.close(); if (source === es) source = null; });
  es.onerror = () => { if (es.readyState === EventSource.CLOSED && source === es) { source = null; if (!$('status').textContent) status('Live updates stopped (too many tabs open, or the bridge restarted): reload the page.'); } };
  return es;
}

function whenLive() {
  if (!source) source = follow(current, upsertReply);
  const es = source;
  if (es.readyState === EventSource.OPEN) return Promise.resolve();
  return new Promise((resolve) => { es.addEventListener('open', resolve, { once: true }); es.addEventListener('error', resolve, { once: true }); });
}

function renderList() {
  const ul = $('conversations');
  ul.textContent = '';
  for (const c of loadList()) {
    const li = document.createElement('li');
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = c.title || 'New conversation';
    b.setAttribute('aria-current', String(c.id === current));
    b.onclick = () => open(c.id);
    li.appendChild(b);
    ul.appendChild(li);
  }
  const cur = loadList().find((c) => c.id === current);
  $('title').textContent = cur && cur.title ? cur.title : 'New conversation';
}

function send() {
  const box = $('message');
  const text = box.value.trim();
  if (!text) return;
  box.value = '';
  remember(current, text.slice(0, 60));
  addUser(text);
  // The stream first (it may have ended idle): the reply's first write must find it open.
  whenLive().then(() => post('send', { conversation: current, text: text })).catch((e) => status('not sent: ' + e.message));
}

$('composer').addEventListener('submit', (e) => { e.preventDefault(); send(); });
$('message').addEventListener('keydown', (e) => { if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); send(); } });
$('new').addEventListener('click', () => open(newId()));
$('reset').addEventListener('click', () => {
  post('reset', { conversation: current }).then(() => { $('log').textContent = ''; status('A fresh conversation starts here.'); }).catch((e) => status(e.message));
});
window.addEventListener('hashchange', () => { const id = location.hash.slice(1); if (id && id !== current) open(id); });

const start = location.hash.slice(1);
open(/^[A-Za-z0-9_-]{1,64}$/.test(start) ? start : (loadList()[0] || { id: newId() }).id);
`;
