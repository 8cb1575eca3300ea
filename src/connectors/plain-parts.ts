import { type MonospaceOptions, monospaceTable } from '../core/reply/tables.js';
import { splitText } from '../core/reply/split.js';
import { findTables } from '../core/reply/table-parser.js';

// The plainest form of a reply's words, for the plain fallback (a write the platform refused for
// its rich form: blocks, a table, Markdown, components): every table as aligned monospace lines in a code
// block (each cell readable, whatever the client), the rest as written, cut into parts the
// platform takes (a cut inside a code block closes it and reopens it in the next part). Both
// connectors use it; each renders the parts for its platform. Linear in the text.

/** `markdown` with each Markdown table replaced by its aligned monospace block. */
export function monospaceMarkdown(markdown: string, mono: MonospaceOptions): string {
  const spans = findTables(markdown);
  if (spans.length === 0) return markdown;
  let out = '';
  let at = 0;
  for (const s of spans) {
    out += markdown.slice(at, s.start);
    out += monospaceTable(s.table, mono);
    // The span ends at its last row's line end, if it has one: keep the line structure.
    if (markdown.charAt(s.end - 1) === '\n') out += '\n';
    at = s.end;
  }
  return out + markdown.slice(at);
}

/** The words of `markdown` in parts of at most `max` characters, tables as monospace blocks. */
export function plainParts(markdown: string, max: number, mono: MonospaceOptions): string[] {
  const parts = splitText(monospaceMarkdown(markdown, mono), max).map((p) => p.text);
  const kept = parts.filter((p) => p.trim() !== '');
  return kept.length > 0 ? kept : [markdown.trim() === '' ? '…' : markdown];
}
