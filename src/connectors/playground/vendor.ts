import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

// The page's libraries, served by the bridge from its own node_modules (nothing from a CDN):
// `marked` turns the assistant's Markdown into HTML, `dompurify` sanitizes that HTML in the
// browser. Only the exact files below are served; a name not listed is a 404, so no path from
// the request ever reaches the file system.

const require = createRequire(import.meta.url);

interface VendorFile {
  /** Package whose entry point locates the file (its own exports decide where that is). */
  pkg: string;
  /** The file, relative to the directory of the package's entry point. */
  file: string;
  type: string;
}

/** URL name (under /playground/vendor/) → file. */
export const VENDOR_FILES: Readonly<Record<string, VendorFile>> = {
  'marked.esm.js': { pkg: 'marked', file: 'marked.esm.js', type: 'text/javascript; charset=utf-8' },
  'marked.esm.js.map': { pkg: 'marked', file: 'marked.esm.js.map', type: 'application/json; charset=utf-8' },
  'purify.es.mjs': { pkg: 'dompurify', file: 'purify.es.mjs', type: 'text/javascript; charset=utf-8' },
  'purify.es.mjs.map': { pkg: 'dompurify', file: 'purify.es.mjs.map', type: 'application/json; charset=utf-8' },
};

/** A day: the files change only with an upgrade of the bridge, and the ETag revalidates after. */
const MAX_AGE_S = 86_400;

interface Loaded {
  body: Buffer;
  etag: string;
  type: string;
}

const cache = new Map<string, Loaded>();

function load(name: string): Loaded | undefined {
  const spec = Object.hasOwn(VENDOR_FILES, name) ? VENDOR_FILES[name] : undefined;
  if (spec === undefined) return undefined;
  let hit = cache.get(name);
  if (hit === undefined) {
    const body = readFileSync(join(dirname(require.resolve(spec.pkg)), spec.file));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    cache.set(name, (hit = { body, etag, type: spec.type }));
  }
  return hit;
}

/** Answers GET /playground/vendor/<name>; false when the name is not one of VENDOR_FILES. */
export function serveVendor(req: IncomingMessage, res: ServerResponse, name: string): boolean {
  const f = load(name);
  if (f === undefined) return false;
  const headers = {
    etag: f.etag,
    'cache-control': `public, max-age=${MAX_AGE_S}`,
    'x-content-type-options': 'nosniff',
  };
  if (req.headers['if-none-match'] === f.etag) {
    res.writeHead(304, headers);
    res.end();
    return true;
  }
  res.writeHead(200, { ...headers, 'content-type': f.type, 'content-length': f.body.length });
  res.end(req.method === 'HEAD' ? undefined : f.body);
  return true;
}
