// Deterministic reply text and the directives that shape a reply.

export interface Directives {
  long?: number;
  chunks?: number;
  delay?: number;
  cut?: number;
  stall?: number;
  error?: number;
  status?: number;
  /** `[table R]` with `[cols C]`: a Markdown table of R rows and C columns (words before and after). */
  table?: number;
  cols?: number;
  /** `[steps]`, `[sources]`, `[image]`, `[file]`, `[agent]`: the stream shows an agent's work too (agent-replies.ts). */
  agent?: AgentParts;
  /** `[protocol NAME]`: the stream speaks that agent protocol instead of the seed's shapes (protocol-writers.ts). */
  protocol?: AgentProtocol;
}

/** What of an agent's work a reply streams beside its text. */
export interface AgentParts {
  steps?: true;
  sources?: true;
  image?: true;
  file?: true;
  reasoning?: true;
}

export type AgentProtocol = 'responses' | 'chat-completions' | 'ai-sdk' | 'ag-ui' | 'anthropic';
export const AGENT_PROTOCOLS: readonly AgentProtocol[] = [
  'responses',
  'chat-completions',
  'ai-sdk',
  'ag-ui',
  'anthropic',
];

type NumericDirective = 'long' | 'chunks' | 'delay' | 'cut' | 'stall' | 'error' | 'status' | 'table' | 'cols';
const DIRECTIVE = /\[(long|chunks|delay|cut|stall|error|status|table|cols)\s+(\d{1,9})\]/gi;
const AGENT_DIRECTIVE = /\[(steps|sources|image|file|agent)\]/gi;
const PROTOCOL_DIRECTIVE = /\[protocol\s+(responses|chat-completions|ai-sdk|ag-ui|anthropic)\]/i;

/** Reads `[name N]` directives anywhere in the message (the first of each name wins), and the agent ones. */
export function parseDirectives(message: string): Directives {
  const out: Directives = {};
  for (const m of message.matchAll(DIRECTIVE)) {
    const name = (m[1] ?? '').toLowerCase() as NumericDirective;
    const value = Number(m[2]);
    if (out[name] === undefined) out[name] = value;
  }
  const agent: AgentParts = {};
  for (const m of message.matchAll(AGENT_DIRECTIVE)) {
    const name = (m[1] ?? '').toLowerCase();
    if (name === 'agent')
      Object.assign(agent, { steps: true, sources: true, image: true, file: true, reasoning: true });
    else agent[name as keyof AgentParts] = true;
  }
  if (Object.keys(agent).length > 0) out.agent = agent;
  const protocol = PROTOCOL_DIRECTIVE.exec(message)?.[1];
  if (protocol !== undefined) out.protocol = protocol.toLowerCase() as AgentProtocol;
  return out;
}

/** The reply text for a message: an echo, or `[long N]` Markdown of exactly N characters. */
export function replyText(message: string, directives: Directives = parseDirectives(message)): string {
  if (directives.table !== undefined) {
    const table = tableMarkdown(directives.table, directives.cols ?? 3);
    const before = directives.long !== undefined ? `${longMarkdown(directives.long)}\n\n` : '';
    return `${before}Here is the table:\n\n${table}\nThat is all.`;
  }
  if (directives.long !== undefined) return longMarkdown(directives.long);
  return `You said: ${message}`;
}

/**
 * A Markdown table of `rows` rows and `cols` columns: column 1 left-aligned, 2 right-aligned,
 * 3 centred (bold and code cells), the rest unaligned. Each cell's text names its row and column.
 */
export function tableMarkdown(rows: number, cols: number): string {
  const aligns = [':---', '---:', ':---:'];
  const head = Array.from({ length: cols }, (_v, j) => (j === 0 ? 'Item' : `Col ${j + 1}`));
  const cell = (i: number, j: number) =>
    j === 0 ? `row ${i}` : j === 1 ? String(i * 7) : j === 2 ? (i % 2 ? `**b${i}**` : `\`c${i}\``) : `r${i}c${j + 1}`;
  const line = (cells: string[]) => `| ${cells.join(' | ')} |\n`;
  let out = line(head) + line(head.map((_h, j) => aligns[j] ?? '---'));
  for (let i = 1; i <= rows; i++) out += line(Array.from({ length: cols }, (_v, j) => cell(i, j)));
  return out;
}

const DEFAULT_PIECE = 8;

/** Start offsets for `count` equal-ish parts of `length` items, or for parts of `size` items. */
function bounds(length: number, pieces: number | undefined, size: number): number[] {
  const out: number[] = [];
  if (pieces && pieces > 0) {
    const count = Math.min(pieces, length);
    for (let i = 0; i <= count; i++) out.push(Math.floor((i * length) / count));
  } else {
    for (let at = 0; at < length; at += size) out.push(at);
    out.push(length);
  }
  return out;
}

/**
 * Splits text into stream pieces by code points (never inside a surrogate pair):
 * `pieces` equal-ish parts, or parts of 8 characters (the last one shorter).
 */
export function splitText(text: string, pieces?: number): string[] {
  const cps = Array.from(text);
  if (cps.length === 0) return [];
  const b = bounds(cps.length, pieces, DEFAULT_PIECE);
  return b.slice(1).map((to, i) => cps.slice(b[i], to).join(''));
}

/** Splits bytes into parts (plain streams: multi-byte characters may straddle parts on purpose). */
export function splitBytes(buf: Buffer, pieces?: number): Buffer[] {
  if (buf.length === 0) return [];
  const b = bounds(buf.length, pieces, DEFAULT_PIECE);
  return b.slice(1).map((to, i) => buf.subarray(b[i], to));
}

// ---- the long Markdown reply ----

const WORDS = [
  'the',
  'bridge',
  'streams',
  'café',
  'replies',
  'naïve',
  'édition',
  'message',
  'thread',
  'über',
  'token',
  'delta',
  'résumé',
  'channel',
  'workspace',
  'coöperate',
  'split',
  'fence',
  'paragraph',
  'déjà',
  'vu',
  'rate',
  'limit',
  'scheduler',
  'edit',
  'interval',
  'Zoë',
  'piñata',
  'façade',
  'élan',
];
const EMOJI = ['🚀', '✨', '🎉', '🧪', '📦', '🔧', '🌍'];

function word(i: number): string {
  return WORDS[(i * 7 + 3) % WORDS.length] ?? 'word';
}

function sentence(seed: number, words: number): string {
  const ws: string[] = [];
  for (let i = 0; i < words; i++) ws.push(word(seed + i));
  const s = ws.join(' ');
  return `${s.charAt(0).toUpperCase()}${s.slice(1)}.`;
}

function paragraph(seed: number): string {
  const emoji = EMOJI[seed % EMOJI.length] ?? '✨';
  const parts = [sentence(seed, 9), sentence(seed + 11, 13), `Works with emoji ${emoji} and accents.`];
  return seed % 2 === 0 ? `${parts.join(' ')} ${sentence(seed + 5, 7)}` : parts.join(' ');
}

function bulletList(seed: number): string {
  const items: string[] = [];
  for (let i = 0; i < 4; i++) items.push(`- **${word(seed + i * 3)}**: ${sentence(seed + i, 5)}`);
  return items.join('\n');
}

function numberedList(seed: number): string {
  const items: string[] = [];
  for (let i = 0; i < 3; i++) items.push(`${i + 1}. ${sentence(seed + i * 2, 6)}`);
  return items.join('\n');
}

/** A ```ts block of at most maxLen characters, or undefined when not even a small one fits. */
function codeBlock(seed: number, maxLen: number): string | undefined {
  const open = '```ts\n';
  const close = '\n```';
  const lines: string[] = [];
  let len = open.length + close.length;
  for (let i = 0; ; i++) {
    const line =
      i % 4 === 0
        ? `export function step${seed}_${i}(input: string): string {`
        : i % 4 === 3
          ? '}'
          : `  const v${i} = input.replace(/${word(seed + i)}/g, '${word(seed + i + 1)} ✓'); // ${i}`;
    const add = line.length + (lines.length > 0 ? 1 : 0);
    if (len + add > maxLen) break;
    lines.push(line);
    len += add;
  }
  if (lines.length < 2) return undefined;
  // Keep braces balanced when cut short.
  const opened = lines.filter((l) => l.endsWith('{')).length;
  const closed = lines.filter((l) => l === '}').length;
  if (opened > closed) {
    while (lines.length > 0 && len + 2 > maxLen) len -= (lines.pop() ?? '').length + 1;
    if (lines.filter((l) => l.endsWith('{')).length > lines.filter((l) => l === '}').length) lines.push('}');
  }
  return `${open}${lines.join('\n')}${close}`;
}

/** Filler text of exactly n characters (BMP only, so no surrogate pair is ever cut), no edge spaces. */
function filler(n: number, seed: number): string {
  let s = '';
  for (let i = 0; s.length < n + 1; i++) s += `${sentence(seed + i * 3, 6)} `;
  s = s.slice(0, n);
  return n > 1 ? `${s.slice(0, -1)}.` : s;
}

const SEP = '\n\n';
const MIN_TAIL = 3; // separator + at least one character of the closing paragraph

/**
 * Markdown of exactly `n` characters (JS string length): a heading, paragraphs with accents and
 * emoji, bullet and numbered lists and ```ts blocks of up to ~2,400 characters. From about 300
 * characters on it always holds a paragraph, a bullet list and a ts code block.
 */
export function longMarkdown(n: number): string {
  if (n <= 0) return '';
  if (n < 40) return filler(n, 1);
  const parts: string[] = [];
  let len = 0;
  const codeMax = Math.max(120, Math.min(2400, Math.floor(n / 3)));
  const fits = (s: string) => {
    const next = len + (parts.length ? SEP.length : 0) + s.length;
    return next <= n - MIN_TAIL;
  };
  const push = (s: string) => {
    len += (parts.length ? SEP.length : 0) + s.length;
    parts.push(s);
  };
  const heading = '## Reply';
  if (fits(heading)) push(heading);
  for (let i = 0; ; i++) {
    const kind = i % 5;
    const seed = i * 13 + 1;
    let section: string | undefined;
    if (kind === 0 || kind === 3) section = i === 0 ? `${sentence(seed, 8)} 🚀` : paragraph(seed);
    else if (kind === 1) section = bulletList(seed);
    else if (kind === 2) {
      const room = n - MIN_TAIL - len - SEP.length;
      section = codeBlock(seed, Math.min(codeMax, room));
    } else section = numberedList(seed);
    if (section === undefined || !fits(section)) {
      // Try a smaller code block before giving up on the structure.
      if (kind !== 2) break;
      continue;
    }
    push(section);
  }
  const rest = n - len;
  if (rest === 0) return parts.join(SEP);
  if (parts.length === 0) return filler(rest, 7);
  return `${parts.join(SEP)}${SEP}${filler(rest - SEP.length, 7)}`;
}
