// The page's syntax highlighting (part of /playground/app.js, see page-script.ts): no
// highlighting library is among the bridge's dependencies, and the page loads nothing from
// outside the machine, so this is a small scanner of the tokens most languages share: comments,
// strings, numbers, keywords and called names. It only wraps the code block's text in <span>s
// (built with textContent: nothing is parsed as HTML), so the text of the block never changes.
// Written with String.raw (the page's other parts are too): no backtick, no dollar-brace.

export const HIGHLIGHT_JS = String.raw`
// ---- syntax highlighting (page-highlight.ts) ----
const HASH_COMMENTS = new Set(['python', 'py', 'sh', 'bash', 'shell', 'zsh', 'console', 'yaml', 'yml', 'ruby', 'rb', 'toml',
  'ini', 'r', 'perl', 'make', 'makefile', 'dockerfile', 'conf', 'elixir', 'ex', 'powershell', 'ps1', 'nim', 'graphql']);
const DASH_COMMENTS = new Set(['sql', 'lua', 'haskell', 'hs', 'psql', 'postgres', 'mysql', 'sqlite']);
const MARKUP = new Set(['html', 'xml', 'svg', 'vue', 'svelte']);
const NO_SLASH_COMMENTS = new Set([...HASH_COMMENTS, ...DASH_COMMENTS, ...MARKUP, 'json', 'text', 'txt', 'plaintext', 'markdown', 'md']);
const KEYWORDS = new Set(('abstract and as async await auto bool boolean break case catch chan char class const continue crate ' +
  'debugger def default defer del delete do double elif else end enum except export extends false final finally fn for ' +
  'from func function go goto if impl implements import in instanceof int interface is lambda let loop match mod mut ' +
  'namespace new nil none not null of or override package pass private protected pub public raise readonly ref return ' +
  'select self static string struct super switch template then this throw throws trait true try type typeof undefined ' +
  'unless unsafe use using var void where while with yield True False None Self fi esac done elsif local echo require ' +
  'satisfies keyof declare module long float short unsigned signed byte').split(' '));
const SQL_KEYWORDS = new Set(('select from where insert into update delete create table drop alter join left right inner ' +
  'outer on and or not null order by group having limit offset as values set index primary key references distinct ' +
  'union all case when then else end returning with begin commit is in like between exists count sum avg').split(' '));

/** The block's language, from marked's class="language-…" (kept by the sanitizer for code elements only). */
function langOf(code) {
  const m = /(?:^|\s)language-([\w+#.-]+)/.exec(code.className || '');
  return m ? m[1].toLowerCase() : '';
}

/** The scanner for a language: one sticky regex whose groups name the token kinds. */
function scanner(lang) {
  const comments = [];
  if (!NO_SLASH_COMMENTS.has(lang)) comments.push('\\/\\/[^\\n]*', '\\/\\*[\\s\\S]*?(?:\\*\\/|$)');
  if (HASH_COMMENTS.has(lang)) comments.push('#[^\\n]*');
  if (DASH_COMMENTS.has(lang)) comments.push('--[^\\n]*');
  if (MARKUP.has(lang)) comments.push('<!--[\\s\\S]*?(?:-->|$)');
  const strings = ['"""[\\s\\S]*?(?:"""|$)', '"(?:\\\\.|[^"\\\\\\n])*"?', "'(?:\\\\.|[^'\\\\\\n])*'?", '\\x60(?:\\\\.|[^\\x60\\\\])*\\x60?'];
  // In prose-like languages an apostrophe is not a quote.
  if (lang === 'markdown' || lang === 'md' || lang === 'text' || lang === 'txt' || lang === 'plaintext') strings.length = 0;
  const parts = [
    '(' + (comments.join('|') || '(?!)') + ')',
    '(' + (strings.join('|') || '(?!)') + ')',
    '(\\b(?:0[xX][\\da-fA-F_]+|\\d[\\d_]*(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)\\b)',
    '([A-Za-z_$][\\w$]*)(?=(\\s*\\()?)',
  ];
  return new RegExp(parts.join('|'), 'g');
}

/** [kind, text] pairs covering the text in order; kind '' is plain. */
function tokens(text, lang) {
  const out = [];
  const re = scanner(lang);
  const sql = DASH_COMMENTS.has(lang);
  let at = 0;
  let m;
  let guard = 0;
  while ((m = re.exec(text)) !== null && guard++ < 200000) {
    if (m[0] === '') { re.lastIndex++; continue; }
    if (m.index > at) out.push(['', text.slice(at, m.index)]);
    let kind = '';
    if (m[1] !== undefined) kind = 'c';
    else if (m[2] !== undefined) kind = 's';
    else if (m[3] !== undefined) kind = 'n';
    else if (m[4] !== undefined) {
      if (sql ? SQL_KEYWORDS.has(m[4].toLowerCase()) : KEYWORDS.has(m[4])) kind = 'k';
      else if (m[5]) kind = 'f';
    }
    out.push([kind, m[0]]);
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(['', text.slice(at)]);
  return out;
}

/** Highlights one <code> of a <pre> in place (its text unchanged). Long blocks are left plain. */
function highlightCode(code) {
  const text = code.textContent || '';
  if (text.length > 100000) return;
  const frag = document.createDocumentFragment();
  for (const [kind, t] of tokens(text, langOf(code))) {
    if (!kind) { frag.appendChild(document.createTextNode(t)); continue; }
    const span = document.createElement('span');
    span.className = 'tok-' + kind;
    span.textContent = t;
    frag.appendChild(span);
  }
  code.textContent = '';
  code.appendChild(frag);
}
`;
