// Small node:http helpers: JSON bodies, JSON answers, the bearer check.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { RecordedRequest } from './types.js';

export const MAX_BODY_BYTES = 1024 * 1024;

export type BodyResult = { ok: true; value: unknown } | { ok: false; status: number; reason: string };

/** Reads a JSON body; an empty body is `undefined`. */
export async function readJsonBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<BodyResult> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > maxBytes) return { ok: false, status: 413, reason: 'request body too large' };
      chunks.push(buf);
    }
  } catch {
    return { ok: false, status: 400, reason: 'request body could not be read' };
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, status: 400, reason: 'request body is not valid JSON' };
  }
}

/** Writes a JSON answer once; records the status on the request record when given. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  record?: RecordedRequest,
): void {
  if (record) record.status = status;
  if (res.headersSent || res.destroyed) return;
  const data = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(data),
    ...headers,
  });
  res.end(data);
}

export function bearerOk(req: IncomingMessage, apiKey: string): boolean {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return false;
  const m = /^Bearer\s+(.+)$/i.exec(header.trim());
  if (!m?.[1]) return false;
  const got = Buffer.from(m[1]);
  const want = Buffer.from(apiKey);
  return got.length === want.length && timingSafeEqual(got, want);
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function headersWithoutAuth(req: IncomingMessage): Record<string, string | string[] | undefined> {
  const { authorization: _auth, ...rest } = req.headers;
  return rest;
}

/** Resolves after ms (0: after the event loop had a turn), or early when the signal aborts. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      signal?.removeEventListener('abort', done);
      if (timer !== undefined) clearTimeout(timer);
      if (immediate !== undefined) clearImmediate(immediate);
      resolve();
    };
    let timer: NodeJS.Timeout | undefined;
    let immediate: NodeJS.Immediate | undefined;
    if (ms > 0) timer = setTimeout(done, ms);
    else immediate = setImmediate(done);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Resolves when the signal aborts. */
export function whenAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
