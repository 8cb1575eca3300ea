import type { ServerResponse } from 'node:http';
import { PAGE_HTML } from './page.js';

// How the page and its small companions (a bounce, a refusal) are served. The page carries its
// token in `<meta name="playground-token" content="…">`, put just before `</head>`: the script
// reads it and sends it as `X-Playground-Token` on every API call (`?page_token=` on the event
// stream, which cannot carry a header). No other origin can read the page, so none has it.

export const TOKEN_META = 'playground-token';

/** What the page says about its upstream. */
export interface PageFacts {
  /** The built-in emulator answers (no CHAT_API_URL): the page offers its commands as demos. */
  emulator: boolean;
  /** The bots the page may pick from (a picker when there are several; the first is the default). */
  bots?: readonly string[];
}

/** The playground's icon: a speech bubble, inline SVG (served at /favicon.ico and /playground/icon.svg). */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="8" fill="#10a37f"/>
<path d="M8 10.5A2.5 2.5 0 0 1 10.5 8h11a2.5 2.5 0 0 1 2.5 2.5v7a2.5 2.5 0 0 1-2.5 2.5H15l-4.5 4v-4a2.5 2.5 0 0 1-2.5-2.5z" fill="#fff"/>
<circle cx="12.5" cy="14" r="1.3" fill="#10a37f"/><circle cx="16" cy="14" r="1.3" fill="#10a37f"/><circle cx="19.5" cy="14" r="1.3" fill="#10a37f"/>
</svg>
`;

/** The page with this browser's token in it (and, in `<meta name="playground-upstream">`, which upstream answers). */
export function pageWithToken(token: string, facts?: PageFacts): string {
  const upstream = facts?.emulator === true ? 'emulator' : 'service';
  const bots = facts?.bots ?? [];
  const meta =
    `<meta name="playground-upstream" content="${upstream}">\n` +
    (bots.length > 1 ? `<meta name="playground-bots" content="${escapeAttr(bots.join(','))}">\n` : '') +
    `<meta name="${TOKEN_META}" content="${escapeAttr(token)}">\n`;
  const at = PAGE_HTML.indexOf('</head>');
  return at < 0 ? meta + PAGE_HTML : PAGE_HTML.slice(0, at) + meta + PAGE_HTML.slice(at);
}

/**
 * A page that loads `to` from itself: the load is then same-site, so the browser sends its
 * SameSite=Strict cookies (a navigation from another site, or the redirect of one, would not).
 */
export function bouncePage(to: string): string {
  const href = escapeAttr(to.startsWith('/') && !to.startsWith('//') ? to : '/');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${href}">
<title>assistant-bridge playground</title></head>
<body><p><a href="${href}">Open the playground</a></p></body></html>
`;
}

/** Why the page is not shown, in words. */
export function refusalPage(why: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>assistant-bridge playground</title></head>
<body><h1>Playground</h1><p>${escapeAttr(why)}</p></body></html>
`;
}

export function sendText(
  res: ServerResponse,
  status: number,
  type: string,
  text: string,
  headers: Record<string, string | string[]> = {},
): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    // Nothing from outside the machine: scripts, styles and requests go to this origin only.
    'content-security-policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    ...headers,
  });
  res.end(text);
}

function escapeAttr(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}
