import slackifyMarkdown from 'slackify-markdown';

// Upstream text is Markdown written by a model: it must never ping anyone or reference things
// on its own. Slack treats `<...>` as control sequences (`<!channel>`, `<@U1>`, `<#C1>`,
// `<!subteam^S1>`) and `&` as the start of an entity, so those never reach Slack raw.

const ZWSP = '\u200B';

/** Breaks the words Slack may turn into broadcasts (`@channel`, `@here`, `@everyone`). */
function breakBroadcasts(s: string): string {
  return s.replace(/@(?=(channel|here|everyone)\b)/gi, `@${ZWSP}`);
}

// Links slackify-markdown makes from Markdown links and autolinks. Only web and mail URLs;
// the label may not contain another control character.
const SAFE_LINK = /^<((?:https?:\/\/|mailto:)[^\s<>|]+)(?:\|([^<>]*))?>/;

function escapeText(s: string): string {
  return s
    .replace(/&(?!(?:amp|lt|gt);)/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/**
 * Makes mrkdwn safe: keeps existing entities and web links, escapes every other `&`, `<`, `>`,
 * and breaks broadcast words. Applied to slackify-markdown's output, which passes HTML-like
 * text such as `<!channel>` through untouched.
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
    const m = SAFE_LINK.exec(s.slice(lt));
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

/** Upstream Markdown → Slack mrkdwn for `text` (edit mode). */
export function renderMrkdwn(markdown: string): string {
  let converted: string;
  try {
    converted = slackifyMarkdown(markdown);
  } catch {
    // A converter bug must not lose the reply: fall back to the plain text.
    converted = markdown;
  }
  const out = neutraliseMrkdwn(converted).replace(/\s+$/, '');
  return out === '' ? neutraliseMrkdwn(markdown.trim()) || '…' : out;
}

/**
 * Upstream Markdown → `markdown_text` (native streams and their fallback). Slack renders it as
 * Markdown, where entities would show literally inside code, so control sequences are broken
 * with a zero-width space after `<` instead. The change only looks one character ahead, so
 * rendering a prefix of a text gives a prefix of the text's rendering, except when the prefix
 * ends inside a word (see `stablePrefixEnd`).
 */
export function renderMarkdownText(markdown: string): string {
  return breakBroadcasts(markdown.replace(/<(?=[!@#])/g, `<${ZWSP}`));
}

/**
 * How much of a growing text can be rendered and appended now without the rest changing how it
 * renders: up to the last whitespace (a word still being written could become `@channel`).
 */
export function stablePrefixEnd(text: string): number {
  const m = /\s(?=\S*$)/.exec(text);
  return m ? m.index + 1 : 0;
}

/** True when `s` contains a sequence Slack would treat as a mention or broadcast. */
export function hasControlSequence(s: string): boolean {
  return /<[!@#]/.test(s) || /@(channel|here|everyone)\b/i.test(s);
}
