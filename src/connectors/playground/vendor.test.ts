import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveVendor, VENDOR_FILES } from './vendor.js';

// The page's libraries come from the bridge's own node_modules, listed files only.

let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? '/').slice(1));
    if (!serveVendor(req, res, name)) {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('/playground/vendor/<file>', () => {
  it('serves marked and DOMPurify as JavaScript modules, cached and revalidated by ETag', async () => {
    for (const [name, lib] of [
      ['marked.esm.js', /export\s*\{[^}]*\bas marked\b/],
      ['purify.es.mjs', /DOMPurify/],
    ] as const) {
      const r = await fetch(base + name);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(r.headers.get('cache-control')).toBe('public, max-age=86400');
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await r.text()).toMatch(lib);
      const etag = r.headers.get('etag') ?? '';
      expect(etag).toMatch(/^"[\w-]+"$/);
      const again = await fetch(base + name, { headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
    }
    expect((await fetch(base + 'marked.esm.js.map')).headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('answers nothing else: other files, paths, prototype names', async () => {
    for (const name of ['marked.js', '../package.json', 'marked/lib/marked.esm.js', 'constructor', '__proto__', ''])
      expect((await fetch(base + encodeURIComponent(name))).status).toBe(404);
    expect(Object.keys(VENDOR_FILES).sort()).toEqual([
      'marked.esm.js',
      'marked.esm.js.map',
      'purify.es.mjs',
      'purify.es.mjs.map',
    ]);
  });
});
