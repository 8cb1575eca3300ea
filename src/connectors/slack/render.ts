import slackifyMarkdown from 'slackify-markdown';
import { findFences } from '../../core/reply/fences.js';

// Upstream text is Markdown written by a model: it must never ping anyone or reference things
// on its own. Slack treats `<...>` as control sequences (`<!channel>`, `<@U1>`, `<#C1>`,
// `<!subteam^S1>`) and `&` as the start of an entity, so those never reach Slack raw.

const ZWSP = '\u200B';

/** Breaks the words Slack may turn into broadcasts (`@channel`, `@here`, `@everyone`). */
function breakBroadcasts(s: string): string {
  return s.replace(/@(?=(channel|here|everyone)\b)/gi, `@${ZWSP}`);
}

// Links slackify-markdown makes from Markdown links and autolinks. Only web and mail URLs;
// the label may not contain another control character. Sticky: tried at one `<` at a time.
const SAFE_LINK = /<((?:https?:\/\/|mailto:)[^\s<>|]+)(?:\|([^<>]*))?>/y;

function escapeText(s: string): string {
  return s
    .replace(/&(?!(?:amp|lt|gt);)/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/**
 * Makes mrkdwn safe: keeps existing entities and web links, escapes every other `&`, `<`, `>`,
 * and breaks broadcast words. Applied to slackify-markdown's output, which passes HTML-like
 * text such as `<!channel>` through untouched. One pass: a link match stops at the next `<`/`>`.
 */
export function neutraliseMrkdwn(s: string): string {
  let out = '';
  let i = 0;
  while (i < s.length) {
    const lt = s.indexOf('<', i);
    if (lt === -1) {
      out += escapeText(s.slice(i));
      break;
    }
    out += escapeText(s.slice(i, lt));
    SAFE_LINK.lastIndex = lt;
    const m = SAFE_LINK.exec(s);
    if (m) {
      const url = escapeText(m[1] ?? '');
      out += m[2] === undefined ? `<${url}>` : `<${url}|${escapeText(m[2])}>`;
      i = lt + m[0].length;
    } else {
      out += '&lt;';
      i = lt + 1;
    }
  }
  return breakBroadcasts(out);
}

/**
 * What rendering cost, for tests that prove it linear: calls into the Markdown library, the
 * characters and markup characters those calls got, and characters the hand-written passes read.
 */
export interface RenderWork {
  libraryCalls: number;
  libraryChars: number;
  /** Sum over library calls of (markup characters in the block)^2: the library's worst case. */
  libraryMarkupSquared: number;
  scanned: number;
}

export const newRenderWork = (): RenderWork => ({
  libraryCalls: 0,
  libraryChars: 0,
  libraryMarkupSquared: 0,
  scanned: 0,
});

/**
 * slackify-markdown (its remark parser) is quadratic in a block's unmatched delimiters (runs of
 * `*a`, unclosed `*`/`_`/`` ` ``, deep brackets: seconds for 40 k characters) and slow per
 * character in long blocks. A block gets it only when both are bounded. A larger block is cut at
 * line ends into groups within the bounds (a long list renders item by item, as a whole would);
 * a single line beyond them is shown as written (then neutralised like the rest): one pass.
 */
export const LIBRARY_MAX_BLOCK = 4000;
export const LIBRARY_MAX_DELIMITERS = 256;

/** Characters that open or close an inline construct the parser looks back for. */
function isDelimiter(c: number): boolean {
  // * _ ~ ` [ ] < > & \ !
  return (
    c === 0x2a ||
    c === 0x5f ||
    c === 0x7e ||
    c === 0x60 ||
    c === 0x5b ||
    c === 0x5d ||
    c === 0x3c ||
    c === 0x3e ||
    c === 0x26 ||
    c === 0x5c ||
    c === 0x21
  );
}

/** Line groups of `text` each within the library's bounds; a line beyond them is a group alone. */
function lineGroups(text: string): Array<{ text: string; within: boolean }> {
  const groups: Array<{ text: string; within: boolean }> = [];
  let start = 0;
  let delims = 0;
  let lineStart = 0;
  let lineDelims = 0;
  const close = (end: number, within: boolean) => {
    if (end > start) groups.push({ text: text.slice(start, end), within });
    start = end;
    delims = 0;
  };
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0x0a;
    if (c !== 0x0a) {
      if (isDelimiter(c)) lineDelims++;
      continue;
    }
    const lineEnd = Math.min(i + 1, text.length);
    const lineFits = lineEnd - lineStart <= LIBRARY_MAX_BLOCK && lineDelims <= LIBRARY_MAX_DELIMITERS;
    if (!lineFits) {
      close(lineStart, true);
      close(lineEnd, false);
    } else {
      if (lineEnd - start > LIBRARY_MAX_BLOCK || delims + lineDelims > LIBRARY_MAX_DELIMITERS) close(lineStart, true);
      delims += lineDelims;
    }
    lineStart = lineEnd;
    lineDelims = 0;
  }
  close(text.length, true);
  return groups;
}

/** True when the text ends with an empty line (a paragraph break before what follows). */
function endsWithBlankLine(text: string): boolean {
  let newlines = 0;
  for (let i = text.length - 1; i >= 0; i--) {
    const c = text.charCodeAt(i);
    if (c === 0x0a) newlines++;
    else if (c !== 0x20 && c !== 0x09 && c !== 0x0d) break;
  }
  return newlines >= 2;
}

/**
 * True when the text starts with an empty line. A group after a line shown as written starts
 * with the blank lines that followed that line: a paragraph break between the two.
 */
function startsWithBlankLine(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a) return true;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return false;
}

// Markdown is cut into top-level blocks that render independently, so that Slack rendering works
// block by block: a block the Markdown library would be slow on is rendered by hand, and a block
// rendered once (a finished paragraph of a streaming reply) comes from a cache on the next edit.
//
// A block ends at a blank line followed by a line that starts at column 0 (an indented line may
// continue a list item or indented code), and a code fence opened at column 0 is a block of its
// own. Nothing is cut inside a fence. Everything here is one pass over the text.

export type MarkdownBlock =
  /** Text for the Markdown library (or its linear fallback). */
  | { kind: 'text'; text: string }
  /** A fenced code block opened at column 0: its content, without the fence lines. */
  | { kind: 'fence'; content: string };

const LIST_ITEM = /^(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)/;

const isBlankLine = (text: string, start: number, end: number): boolean => {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
};

/** The blocks of `markdown`, in order. `work.scanned` counts the characters looked at. */
export function markdownBlocks(markdown: string, work?: { scanned: number }): MarkdownBlock[] {
  const fences = findFences(markdown);
  if (work) work.scanned += 2 * markdown.length; // findFences' pass, then this one
  const blocks: MarkdownBlock[] = [];
  const pushText = (start: number, end: number) => {
    if (end > start && !isBlankLine(markdown, start, end))
      blocks.push({ kind: 'text', text: markdown.slice(start, end) });
  };
  let fi = 0;
  let blockStart = 0;
  let sawBlank = false;
  /** The current block starts with a list item. */
  let blockList: boolean | undefined;
  let ls = 0;
  while (ls < markdown.length) {
    const fence = fences[fi];
    if (fence !== undefined && fence.openStart === ls) {
      fi++;
      const c = markdown.charCodeAt(ls);
      if (c === 0x60 || c === 0x7e) {
        // Column 0: the fence is a block of its own (it also ends a paragraph it follows).
        pushText(blockStart, ls);
        const content = markdown.slice(Math.min(fence.contentStart, fence.closeStart), fence.closeStart);
        blocks.push({ kind: 'fence', content });
        blockStart = fence.closeEnd;
        blockList = undefined;
      }
      // An indented fence stays in its block (a list item's code), but nothing is cut inside it.
      ls = fence.closeEnd;
      sawBlank = false;
      continue;
    }
    const nl = markdown.indexOf('\n', ls);
    const le = nl === -1 ? markdown.length : nl;
    if (isBlankLine(markdown, ls, le)) {
      sawBlank = true;
    } else {
      const c = markdown.charCodeAt(ls);
      // The items of a loose list stay together: a blank line between two items makes the library
      // space all of them, and it numbers ordered items in turn.
      const item = LIST_ITEM.test(markdown.slice(ls, Math.min(le, ls + 12)));
      blockList ??= item;
      if (sawBlank && c !== 0x20 && c !== 0x09 && !(item && blockList)) {
        blockList = item;
        pushText(blockStart, ls);
        blockStart = ls;
      }
      sawBlank = false;
    }
    ls = le + 1;
  }
  pushText(blockStart, markdown.length);
  return blocks;
}

/** A fenced block as slackify-markdown writes it: bare ``` lines around the content. */
export function renderFence(content: string): string {
  const body = content.endsWith('\n') ? content.slice(0, -1) : content;
  return `\`\`\`\n${body}\n\`\`\``;
}

export interface MrkdwnRendererOptions {
  /** Rendered blocks kept (a streaming reply's finished paragraphs are not rendered again). */
  cacheChars?: number;
  work?: RenderWork;
}

/** A renderer with its own block cache (and work counter, for tests). */
export function createMrkdwnRenderer(opts: MrkdwnRendererOptions = {}): (markdown: string) => string {
  const cacheChars = opts.cacheChars ?? 2_000_000;
  const work = opts.work;
  // Insertion order is recency: a hit moves the block to the end; the oldest go first.
  const cache = new Map<string, string>();
  let cachedChars = 0;

  const remember = (key: string, value: string) => {
    cache.set(key, value);
    cachedChars += key.length + value.length;
    for (const [k, v] of cache) {
      if (cachedChars <= cacheChars) break;
      cache.delete(k);
      cachedChars -= k.length + v.length;
    }
  };

  /** `last`: the text's last block, still growing while a reply streams: its last group is not kept. */
  const renderBlock = (block: string, last: boolean): string => {
    if (work) work.scanned += block.length;
    const groups = lineGroups(block);
    if (groups.length === 1 && groups[0]?.within === true) return renderGroup(block, !last);
    // Too large for one call: each group alone (cached too), the lines beyond bounds as written.
    let out = '';
    let sep = '';
    for (const [i, g] of groups.entries()) {
      if (startsWithBlankLine(g.text)) sep = '\n\n';
      const rendered = g.within ? renderGroup(g.text, !last || i < groups.length - 1) : g.text.trim();
      if (rendered !== '') {
        out += (out === '' ? '' : sep) + rendered;
        sep = '\n';
      }
      if (endsWithBlankLine(g.text)) sep = '\n\n';
    }
    return out;
  };

  const renderGroup = (group: string, keep: boolean): string => {
    const text = group.trimEnd();
    if (text === '') return '';
    const hit = cache.get(text);
    if (hit !== undefined) {
      cache.delete(text);
      cache.set(text, hit);
      return hit;
    }
    if (work) {
      let delims = 0;
      for (let i = 0; i < text.length; i++) if (isDelimiter(text.charCodeAt(i))) delims++;
      work.libraryCalls++;
      work.libraryChars += text.length;
      work.libraryMarkupSquared += delims * delims;
    }
    let out: string;
    try {
      out = slackifyMarkdown(text).trimEnd();
    } catch {
      // A converter bug (or its stack on deep nesting) must not lose the reply: the text as written.
      out = text;
    }
    if (keep) remember(text, out);
    return out;
  };

  return (markdown: string): string => {
    const rendered: string[] = [];
    const blocks = markdownBlocks(markdown, work);
    for (const [i, b] of blocks.entries()) {
      const out = b.kind === 'fence' ? renderFence(b.content) : renderBlock(b.text, i === blocks.length - 1);
      if (out !== '') rendered.push(out);
    }
    const joined = rendered.join('\n\n');
    if (work) work.scanned += 2 * joined.length; // neutralising, trimming
    const out = neutraliseMrkdwn(joined).trimEnd();
    return out === '' ? neutraliseMrkdwn(markdown.trim()) || '…' : out;
  };
}

const defaultRenderer = createMrkdwnRenderer();

/**
 * Upstream Markdown → Slack mrkdwn for `text` (edit mode). Block by block, with a shared cache
 * of rendered blocks: each edit of a streaming reply renders only the blocks that changed.
 */
export function renderMrkdwn(markdown: string): string {
  return defaultRenderer(markdown);
}

/**
 * Upstream Markdown → `markdown_text` (native streams and their fallback). Slack renders it as
 * Markdown, where entities would show literally inside code, so control sequences are broken
 * with a zero-width space after `<` instead. The change only looks one character ahead, so
 * rendering a prefix of a text gives a prefix of the text's rendering, except when the prefix
 * ends inside a word (see `stablePrefixEnd`).
 */
export function renderMarkdownText(markdown: string): string {
  // A link destination in angle brackets (CommonMark; the core writes sources so, which keeps
  // Discord from previewing them) is written plainly: Slack's Markdown may not know the brackets.
  const links = markdown.includes('](<') ? markdown.replace(/\]\(<([^<>\s]+)>\)/g, ']($1)') : markdown;
  return breakBroadcasts(links.replace(/<(?=[!@#])/g, `<${ZWSP}`));
}

/**
 * How much of a growing text can be rendered and appended now without the rest changing how it
 * renders: up to the last whitespace (a word still being written could become `@channel`).
 */
export function stablePrefixEnd(text: string): number {
  for (let i = text.length - 1; i >= 0; i--) if (/\s/.test(text.charAt(i))) return i + 1;
  return 0;
}

/** True when `s` contains a sequence Slack would treat as a mention or broadcast. */
export function hasControlSequence(s: string): boolean {
  return /<[!@#]/.test(s) || /@(channel|here|everyone)\b/i.test(s);
}
