import type { ServerResponse } from 'node:http';
import { PAGE_HTML } from './page.js';

// How the page and its small companions (a bounce, a refusal) are served. The page carries its
// token in `<meta name="playground-token" content="…">`, put just before `</head>`: the script
// reads it and sends it as `X-Playground-Token` on every API call (`?page_token=` on the event
// stream, which cannot carry a header). No other origin can read the page, so none has it.

export const TOKEN_META = 'playground-token';

/** The page with this browser's token in it. */
export function pageWithToken(token: string): string {
  const meta = `<meta name="${TOKEN_META}" content="${escapeAttr(token)}">\n`;
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
