import type { IncomingMessage, ServerResponse } from 'node:http';
import { boundaryOf, parseMultipart } from '../multipart.js';

// Slack's external file upload, as the fake serves it: files.getUploadURLExternal (a filename and
// the byte length) answers an upload URL on this server and a file id; the bytes are POSTed
// there; files.completeUploadExternal (the ids, a channel, a thread) shares them. Checked as
// Slack does: a length that is not a positive whole number, an id never uploaded, or bytes that
// are not the declared length are refused. `refuse` makes getUploadURLExternal answer an error
// (a workspace without files:write, a file over its limit).

export interface CompletedUpload {
  id: string;
  filename: string;
  title: string;
  channel: string;
  threadTs: string | undefined;
  bytes: Buffer;
}

interface Pending {
  filename: string;
  length: number;
  bytes?: Buffer;
}

/** An API error code for web-api.ts to answer with. */
export class UploadError extends Error {}

export class FakeUploads {
  readonly completed: CompletedUpload[] = [];
  /** getUploadURLExternal answers this error (e.g. missing_scope). */
  refuse: string | undefined;
  private readonly pending = new Map<string, Pending>();
  private next = 1;

  constructor(private readonly base: () => string) {}

  getUploadURL(a: Record<string, unknown>): Record<string, unknown> {
    if (this.refuse !== undefined) throw new UploadError(this.refuse);
    const filename = typeof a.filename === 'string' ? a.filename : '';
    const length = Number(a.length);
    if (filename === '' || !Number.isInteger(length) || length < 1) throw new UploadError('invalid_arguments');
    const id = `FUP${String(this.next++).padStart(5, '0')}`;
    this.pending.set(id, { filename, length });
    return { upload_url: `${this.base()}/upload/${id}`, file_id: id };
  }

  complete(a: Record<string, unknown>): Record<string, unknown> {
    const raw = a.files;
    const files: unknown = typeof raw === 'string' ? JSON.parse(raw) : raw;
    if (!Array.isArray(files) || files.length === 0) throw new UploadError('invalid_arguments');
    const channel = typeof a.channel_id === 'string' ? a.channel_id : undefined;
    if (channel === undefined) throw new UploadError('invalid_arguments');
    const threadTs = typeof a.thread_ts === 'string' ? a.thread_ts : undefined;
    const done: Record<string, unknown>[] = [];
    for (const f of files as { id?: unknown; title?: unknown }[]) {
      const id = String(f.id);
      const p = this.pending.get(id);
      if (p?.bytes === undefined || p.bytes.length !== p.length) throw new UploadError('file_not_found');
      this.pending.delete(id);
      const title = typeof f.title === 'string' ? f.title : p.filename;
      this.completed.push({ id, filename: p.filename, title, channel, threadTs, bytes: p.bytes });
      done.push({ id, title });
    }
    return { files: done };
  }

  /** POST /upload/<id>: the bytes of a pending upload. True when handled. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const m = /^\/upload\/(FUP\d+)$/.exec(req.url ?? '');
    if (!m || req.method !== 'POST') return false;
    const p = this.pending.get(m[1] ?? '');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (p === undefined) {
        res.writeHead(404).end();
        return;
      }
      // The bytes as the body, or (the Node SDK's way) the one file part of a multipart form.
      const body = Buffer.concat(chunks);
      const boundary = boundaryOf(req.headers['content-type']);
      const parts = boundary === undefined ? undefined : parseMultipart(body, boundary);
      if (boundary !== undefined && (parts === undefined || parts.length !== 1)) {
        res.writeHead(400).end();
        return;
      }
      p.bytes = parts?.[0]?.data ?? body;
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`OK - ${p.bytes.length}`);
    });
    return true;
  }
}
