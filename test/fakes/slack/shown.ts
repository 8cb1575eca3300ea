import type { FakeMessage } from './state.js';

// What a user reads in a fake Slack message: its blocks, then its attachments' blocks (Slack
// shows attachments after the blocks), section texts and table cells in order; a message without
// blocks shows its `text`.

type Block = Record<string, unknown>;
interface Cell {
  type: string;
  text?: string;
  elements?: { elements: { type: string; text?: string }[] }[];
}

export const cellText = (c: Cell): string =>
  c.type === 'raw_text'
    ? (c.text ?? '')
    : (c.elements ?? []).flatMap((e) => e.elements.map((x) => x.text ?? '')).join('');

/** The message's blocks and its attachments' blocks, in the order Slack shows them. */
export function allBlocks(m: FakeMessage | undefined): Block[] {
  const inAttachments = (m?.attachments ?? []).flatMap((a) => (Array.isArray(a.blocks) ? (a.blocks as Block[]) : []));
  return [...(m?.blocks ?? []), ...inAttachments];
}

/** Section texts and table rows (cells joined by ` | `) of these blocks, in order. */
export function shownBlocks(blocks: readonly Block[]): string {
  return blocks
    .map((b) => {
      if (b.type === 'section') return (b.text as { text: string }).text;
      if (b.type === 'table') return (b.rows as Cell[][]).map((r) => r.map(cellText).join(' | ')).join('\n');
      // A context line (an agent's running step) shows its texts; an image its alternative text.
      if (b.type === 'context') return ((b.elements ?? []) as { text?: string }[]).map((e) => e.text ?? '').join(' ');
      if (b.type === 'image') return `[image: ${String(b.alt_text)}]`;
      return '';
    })
    .join('\n');
}

/** What the message shows: its blocks when it has any, else its text. */
export function shownMessage(m: FakeMessage | undefined): string {
  const blocks = allBlocks(m);
  return blocks.length > 0 ? shownBlocks(blocks) : (m?.text ?? '');
}

/**
 * What a native stream shows: its text with each `blocks` chunk where it was streamed (a table's
 * rows as cells joined by ` | `, each block on lines of its own), then the blocks under it.
 */
export function shownStream(m: FakeMessage | undefined): string {
  const text = m?.text ?? '';
  const out: string[] = [];
  let at = 0;
  for (const s of m?.streamBlocks ?? []) {
    out.push(text.slice(at, s.at), `\n[${shownBlocks(s.blocks)}]\n`);
    at = s.at;
  }
  out.push(text.slice(at));
  const under = m?.blocks ?? [];
  return out.join('') + (under.length > 0 ? `\n${shownBlocks(under)}` : '');
}
