// Markdown code fences (``` or ~~~, CommonMark's rules): which line opens or closes one, every
// fence of a text, the one left open at its end and what closes it. The split (split.ts), the
// text model (reply-text.ts), the table parser (table-parser.ts) and the renderers read them here.

export interface Fence {
  openStart: number;
  contentStart: number;
  /** Start of the closing line; text.length when the fence is still open at the end. */
  closeStart: number;
  closeEnd: number;
  /** The opening line without its newline, e.g. "```ts". */
  opener: string;
  marker: string;
}

const OPEN_RE = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const CLOSE_RE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

/** What a line OPEN_RE or CLOSE_RE may match starts with: at most 3 spaces, then ` or ~ (sticky). */
const FENCE_START = / {0,3}[`~]/y;

/** The marker (```` ``` ````, `~~~`…) of a fence's opening line; undefined when the line opens none. */
export function fenceOpener(line: string): string | undefined {
  const m = OPEN_RE.exec(line);
  // A backtick fence's info string holds no backtick (CommonMark).
  return m?.[2] === undefined || (m[2][0] === '`' && (m[3] ?? '').includes('`')) ? undefined : m[2];
}

/** Whether a line closes the fence its `marker` opened: the same character, at least as many. */
export function closesFence(line: string, marker: string): boolean {
  const close = CLOSE_RE.exec(line)?.[1];
  return close !== undefined && close[0] === marker[0] && close.length >= marker.length;
}

export function findFences(text: string): Fence[] {
  const fences: Fence[] = [];
  let open: Omit<Fence, 'closeStart' | 'closeEnd'> | undefined;
  let start = 0;
  while (start <= text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl === -1 ? text.length : nl;
    const next = nl === -1 ? text.length : nl + 1;
    // Most lines cannot be fence lines: look at them without copying them (the writer runs this
    // over the whole message each time new text arrives).
    FENCE_START.lastIndex = start;
    if (!FENCE_START.test(text)) {
      if (nl === -1) break;
      start = next;
      continue;
    }
    const line = text.slice(start, end);
    if (open === undefined) {
      const marker = fenceOpener(line);
      if (marker !== undefined) open = { openStart: start, contentStart: next, opener: line, marker };
    } else if (closesFence(line, open.marker)) {
      fences.push({ ...open, closeStart: start, closeEnd: next });
      open = undefined;
    }
    if (nl === -1) break;
    start = next;
  }
  if (open !== undefined) fences.push({ ...open, closeStart: text.length, closeEnd: text.length });
  return fences;
}

/** The fence left open at the end of `text`, if any (a closing line holds its marker: closeEnd is
 * past closeStart for every fence closed). */
export function openFence(text: string): Fence | undefined {
  const last = findFences(text).at(-1);
  return last !== undefined && last.closeEnd === last.closeStart ? last : undefined;
}

/** True when every fence opened in the text is closed again. */
export const fencesBalanced = (text: string): boolean => openFence(text) === undefined;

/**
 * What closes a code fence left open at the end of `text` ('' when none is): put it before a note
 * appended to a cut-off reply, so that the note is not shown as code.
 */
export function fenceCloser(text: string, open = openFence(text)): string {
  return open === undefined ? '' : `${text.endsWith('\n') ? '' : '\n'}${open.marker}`;
}
