import { findFences } from '../../core/reply/split.js';

// Markdown cut into top-level blocks that render independently, so that Slack rendering works
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
