import pino from 'pino';
import { afterEach, expect, it } from 'vitest';
import { silentLogger } from '../logger.js';
import { type TinyServer, tinyServer } from '../../test/support/upstream.js';
import { collectAttachments, type PlatformFile } from './attachments.js';

// The shared downloader against a loopback server: the bounds (bytes, time, count) and what
// counts as the file.

let srv: TinyServer | undefined;
afterEach(async () => {
  await srv?.close();
  srv = undefined;
});

const file = (name: string, size: number, over: Partial<PlatformFile> = {}): PlatformFile => ({
  name,
  type: 'text/plain',
  size,
  downloadUrl: `${srv?.url ?? ''}/${name}`,
  ...over,
});

it('refuses by Content-Length before reading the body', async () => {
  let sent = 0;
  srv = await tinyServer((_req, res) => {
    // Says it is big and then streams: the client must not read it.
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(10_000_000) });
    const pump = () => {
      while (sent < 10_000_000 && res.write(Buffer.alloc(65_536, 0x61))) sent += 65_536;
    };
    res.on('drain', pump);
    pump();
  });
  // The default timeout, not a short one: the refusal is decided by the headers, and a timeout
  // that fired first on a busy machine would report `failed` for a reason this test is not about.
  const out = await collectAttachments([file('huge.txt', 0)], { logger: silentLogger, maxBytes: 1000 });
  expect(out.map((a) => [a.name, a.skipped])).toEqual([['huge.txt', 'too_large']]);
  expect(sent).toBeLessThan(10_000_000);
});

it('gives up on a file whose headers never come when its timeout fires', async () => {
  // /slow.txt: headers never come, so only the timeout can end the download. Without it the
  // call would never resolve (the test's own timeout is the hang guard); the log says the abort
  // was the timeout's, and it did not come before the timeout was due.
  srv = await tinyServer(() => {});
  const lines: { file?: string; reason?: string; cause?: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const started = performance.now();
  const out = await collectAttachments([file('slow.txt', 10)], { logger, timeoutMs: 300 });
  expect(out.map((a) => [a.name, a.skipped])).toEqual([['slow.txt', 'failed']]);
  expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ file: 'slow.txt', reason: 'failed' });
  expect(lines[0]?.cause).toMatch(/timeout/i);
});

it('handles the first five files and names the rest too_many; binary "text" is unsupported', async () => {
  srv = await tinyServer((req, res) => {
    const body = req.url === '/bin.txt' ? Buffer.from([0x41, 0, 0x42]) : Buffer.from('ok');
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(body);
  });
  const files = [
    file('bin.txt', 3),
    file('a.txt', 2),
    { name: 'pic.jpg', type: 'image/jpeg', size: 5000, publicUrl: 'https://cdn.example/pic.jpg' },
    file('b.txt', 2),
    file('c.txt', 2),
    file('d.txt', 2),
    file('e.txt', 2),
  ];
  const out = await collectAttachments(files, { logger: silentLogger });
  expect(out.map((a) => [a.name, a.skipped ?? a.text ?? 'described'])).toEqual([
    ['bin.txt', 'unsupported'],
    ['a.txt', 'ok'],
    ['pic.jpg', 'described'],
    ['b.txt', 'ok'],
    ['c.txt', 'ok'],
    ['d.txt', 'too_many'],
    ['e.txt', 'too_many'],
  ]);
  expect(out[2]?.url).toBe('https://cdn.example/pic.jpg');
  // The image is described, not fetched; files past five are not fetched either.
  expect(srv.requests.map((r) => r.url).sort()).toEqual(['/a.txt', '/b.txt', '/bin.txt', '/c.txt']);
});

it('an HTML page for a file that is not HTML, or a non-200, is a failed download', async () => {
  srv = await tinyServer((req, res) => {
    if (req.url === '/gone.csv') {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('nope');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<html>sign in</html>');
  });
  const out = await collectAttachments([file('data.json', 0), file('gone.csv', 4)], { logger: silentLogger });
  expect(out.map((a) => [a.name, a.skipped, a.text])).toEqual([
    ['data.json', 'failed', undefined],
    ['gone.csv', 'failed', undefined],
  ]);
});

it('does not follow a redirect from the file host: the header with the token goes nowhere else', async () => {
  const seen: (string | undefined)[] = [];
  const elsewhere = await tinyServer((req, res) => {
    seen.push(req.headers.authorization);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('not the file');
  });
  try {
    srv = await tinyServer((req, res) => {
      res.writeHead(302, { location: `${elsewhere.url}${req.url ?? '/'}` });
      res.end();
    });
    const [out] = await collectAttachments(
      [file('moved.txt', 12, { headers: { authorization: 'Bearer xoxb-secret' } })],
      { logger: silentLogger },
    );
    expect(out?.skipped).toBe('failed');
    expect(out?.text).toBeUndefined();
    expect(seen).toEqual([]);
  } finally {
    await elsewhere.close();
  }
});
