import type { IncomingMessage, ServerResponse } from 'node:http';

// Small helpers for the fake's HTTP side.

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {
    super(String(body.message ?? status));
  }
}

export const notFound = (code: number, message: string) => new HttpError(404, { code, message });

export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  return parseJson(await readAll(req));
}

export async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export function parseJson(bytes: Buffer): Record<string, unknown> {
  const raw = bytes.toString('utf8');
  if (raw.length === 0) return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    throw new HttpError(400, { code: 50109, message: 'The request body contains invalid JSON.' });
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (status === 204) {
    res.writeHead(204, headers).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** Discord's validation error for content over 2000 characters. */
export function contentTooLong(): HttpError {
  return new HttpError(400, {
    code: 50035,
    message: 'Invalid Form Body',
    errors: { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] } },
  });
}
