// Exact checks on a long reply as Slack shows it over several messages (edit mode: mrkdwn).
//
// The oracle renders the Markdown the emulator's `[long N]` writes, line by line, by rules
// written out here from what Slack's mrkdwn needs (not by calling src's renderer), and the parts
// must then spell that rendering exactly. Only what the bridge does by design at a cut is undone:
// a code block cut in two is closed at the end of one part and reopened at the start of the next
// (fence lines the text does not have), and the whitespace at a cut is not shown (a message ends
// and the next starts without it). Anything else, a lost or doubled character, fails.

import { continuePart, skipSpace } from '../support/part-match.js';

const ZWSP = '\u200B';

/** Markup the oracle has no rule for: it refuses such text rather than guess. */
const UNKNOWN_MARKUP = /[*_~`#[\]<>&]/;

function escapeEntities(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Upstream Markdown made of a `## ` heading, paragraphs, `- **word**: text` bullets, `N. text`
 * items and fenced code blocks with an info string, as Slack mrkdwn: `*heading*`, `•` bullets
 * with the bold word fenced by zero-width spaces (so Slack sees its asterisks as bold), numbered
 * items with two spaces, fences without their info string, `&`, `<`, `>` as entities; a line
 * that is a note in italics, `_(…)_`, as that note between zero-width spaces.
 */
export function mrkdwnOracle(markdown: string): string {
  let inCode = false;
  const out = markdown.split('\n').map((line) => {
    if (inCode) {
      if (line === '```') inCode = false;
      return escapeEntities(line);
    }
    const fence = /^```(\w*)$/.exec(line);
    if (fence !== null) {
      inCode = true;
      return '```';
    }
    const heading = /^## (.+)$/.exec(line);
    if (heading !== null) return `*${plain(heading[1] as string)}*`;
    const bullet = /^- \*\*([^*]+)\*\*(.*)$/.exec(line);
    if (bullet !== null) return `•   ${ZWSP}*${plain(bullet[1] as string)}*${ZWSP}${plain(bullet[2] as string)}`;
    const item = /^(\d+)\. (.*)$/.exec(line);
    if (item !== null) return `${item[1]}.  ${plain(item[2] as string)}`;
    // The bridge's notes (`_(reply interrupted)_`): Slack needs italic underscores fenced by
    // zero-width spaces when a word character could touch them.
    const note = /^_\(([^_]*)\)_$/.exec(line);
    if (note !== null) return `${ZWSP}_(${plain(note[1] as string)})_${ZWSP}`;
    return plain(line);
  });
  if (inCode) throw new Error('mrkdwnOracle: a code block is left open');
  return out.join('\n');
}

function plain(text: string): string {
  if (UNKNOWN_MARKUP.test(text)) throw new Error(`mrkdwnOracle: no rule for ${JSON.stringify(text)}`);
  return text;
}

/** Whether `at` in the rendered whole lies inside a code block (after an odd number of fence lines). */
function insideCode(whole: string, at: number): boolean {
  let fences = 0;
  for (const m of whole.slice(0, at).matchAll(/^```$/gm)) if (m.index + 3 <= at) fences++;
  return fences % 2 === 1;
}

/**
 * Problems with `parts` (the messages' texts, in order) as the exact rendering `whole`, one line
 * each; empty when the parts spell it exactly (up to the fence lines and whitespace at cuts).
 */
export function slackPartsProblems(parts: readonly string[], whole: string): string[] {
  return matchParts(parts, whole).problems;
}

/** The parts that start by reopening a code block the previous part closed. */
export function reopenedParts(parts: readonly string[], whole: string): number[] {
  return matchParts(parts, whole).reopened;
}

function matchParts(parts: readonly string[], whole: string): { problems: string[]; reopened: number[] } {
  const problems: string[] = [];
  const reopened: number[] = [];
  const done = () => ({ problems, reopened });
  let at = 0;
  for (const [i, part] of parts.entries()) {
    let body = part;
    // A code block the previous part closed is reopened here.
    if (i > 0 && insideCode(whole, skipSpace(whole, at))) {
      if (!body.startsWith('```\n')) {
        problems.push(`part ${i} continues a code block but does not reopen it: ${JSON.stringify(body.slice(0, 40))}`);
        return done();
      }
      body = body.slice(4);
      reopened.push(i);
    }
    // A code block this part cuts is closed at its end: that fence line is not in the whole.
    const step = continuePart(whole, at, body, i, ['```']);
    if ('problem' in step) {
      problems.push(step.problem);
      return done();
    }
    at = step.end;
  }
  const rest = whole.slice(at);
  if (rest.trim() !== '')
    problems.push(`the parts end before the text does: ${JSON.stringify(rest.slice(0, 60))} is missing`);
  return done();
}

/**
 * Upstream Markdown as a native stream's `markdown_text` shows it: Slack renders Markdown there,
 * so text with nothing that could ping (no `<!`, `<@`, `<#`, no broadcast word in any case) is
 * shown as written. The oracle refuses any other text rather than guess how it is neutralised.
 */
export function markdownTextOracle(markdown: string): string {
  if (/<[!@#]/.test(markdown) || /@(?:channel|here|everyone)\b/i.test(markdown))
    throw new Error(`markdownTextOracle: no rule for ${JSON.stringify(markdown.slice(0, 60))}`);
  return markdown;
}
