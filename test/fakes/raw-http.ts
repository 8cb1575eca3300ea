import { connect } from 'node:net';

// A raw HTTP/1.1 client for hostile-input tests: sends a header block, then a body in pieces
// without ever finishing it unless told to, and reports what came back and whether the server
// closed the connection. fetch cannot do this (it sends the whole body before it reads).

export interface RawRequestOptions {
  port: number;
  /** The request line and headers, without the blank line that ends them. */
  head: string;
  /** Body bytes to send (default 0). */
  bodyBytes?: number;
  /** Exact body to send instead of filler bytes. */
  body?: Buffer | string;
  /** Bytes per write (default 64 KiB). */
  chunkBytes?: number;
  /** Frame the writes as chunked transfer coding (no final chunk unless `finish`). */
  chunked?: boolean;
  /** Send the body's end (the final chunk) after the bytes. Default false: the request stays unfinished. */
  finish?: boolean;
  /** Send `head` as it is, without the blank line: headers that never end. */
  unfinishedHead?: boolean;
  /** Give up waiting for the server to close after this long (default 5000). */
  waitMs?: number;
}

export interface RawResult {
  /** Everything the server sent. */
  response: string;
  /** The status of the first response line, if any. */
  status: number | undefined;
  /** The server closed the connection (or reset it) before `waitMs`. */
  closed: boolean;
  /** Body bytes written before the first response byte arrived (or all, if none did). */
  sentBeforeAnswer: number;
  /** Body bytes written in all. */
  sent: number;
}

export function rawRequest(o: RawRequestOptions): Promise<RawResult> {
  const exact = o.body === undefined ? undefined : Buffer.from(o.body);
  const total = exact?.length ?? o.bodyBytes ?? 0;
  const chunkBytes = o.chunkBytes ?? 64 * 1024;
  return new Promise((resolve) => {
    const sock = connect(o.port, '127.0.0.1');
    let response = '';
    let sent = 0;
    let sentBeforeAnswer: number | undefined;
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      const m = /^HTTP\/1\.1 (\d{3})/.exec(response);
      resolve({
        response,
        status: m ? Number(m[1]) : undefined,
        closed,
        sentBeforeAnswer: sentBeforeAnswer ?? sent,
        sent,
      });
    };
    const timer = setTimeout(() => finish(false), o.waitMs ?? 5000);
    sock.on('data', (d: Buffer) => {
      sentBeforeAnswer ??= sent;
      response += d.toString('latin1');
    });
    // A reset while we write is the server closing on us: what it answered first is kept.
    sock.on('error', () => finish(true));
    sock.on('close', () => finish(true));

    const write = (data: Buffer | string) =>
      new Promise<void>((next) => {
        if (done || sock.destroyed) return next();
        if (sock.write(data)) next();
        else {
          const go = () => {
            sock.off('close', go);
            sock.off('drain', go);
            next();
          };
          sock.once('drain', go);
          sock.once('close', go);
        }
      });

    sock.once('connect', () => {
      void (async () => {
        await write(o.unfinishedHead ? o.head : `${o.head}\r\n\r\n`);
        while (sent < total && !done && sentBeforeAnswer === undefined) {
          const n = Math.min(chunkBytes, total - sent);
          const piece = exact ? exact.subarray(sent, sent + n) : Buffer.alloc(n, 0x61);
          await write(
            o.chunked ? Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece,
          );
          sent += n;
        }
        if (o.finish && o.chunked) await write('0\r\n\r\n');
      })();
    });
  });
}

/**
 * For the bench: `parallel` clients each offer `bytes` of body to `path` (unsigned unless the
 * headers say otherwise) and stop when answered. Measure the bridge's RSS around it; with the
 * limits in place it should not grow by anything like parallel × bytes.
 */
export function floodBodies(o: {
  port: number;
  path: string;
  bytes: number;
  parallel: number;
  headers?: Record<string, string>;
  chunked?: boolean;
}): Promise<RawResult[]> {
  const extra = Object.entries(o.headers ?? {})
    .map(([k, v]) => `\r\n${k}: ${v}`)
    .join('');
  const framing = o.chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${o.bytes}`;
  const head = `POST ${o.path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n${framing}${extra}`;
  return Promise.all(
    Array.from({ length: o.parallel }, () =>
      rawRequest({ port: o.port, head, bodyBytes: o.bytes, ...(o.chunked ? { chunked: true } : {}), waitMs: 30_000 }),
    ),
  );
}
