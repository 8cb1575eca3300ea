import { boundaryOf, parseMultipart } from '../multipart.js';
import type { IncomingMessage } from 'node:http';
import { HttpError, parseJson, readAll } from './http-util.js';

// Message attachments as the fake Discord takes them: a multipart/form-data body whose
// `payload_json` part is the JSON body and whose `files[n]` parts are the files (what discord.js's
// REST sends for `files`). Checked as Discord does: each file has a filename and at most
// MAX_FILE_BYTES (a bot's upload limit), at most 10 files a message; a bigger one is 40005.

export const MAX_FILE_BYTES = 10 * 1024 * 1024;
const MAX_FILES = 10;
/** Where a multipart body's files ride in the body the routes see. */
export const UPLOADED = '__uploaded_files';

export interface UploadedFile {
  filename: string;
  contentType?: string;
  data: Buffer;
}

/** The body of a multipart request, its files under UPLOADED; undefined when it is not multipart. */
export function multipartBody(contentType: string | undefined, raw: Buffer): Record<string, unknown> | undefined {
  const boundary = boundaryOf(contentType);
  if (boundary === undefined) return undefined;
  const parts = parseMultipart(raw, boundary);
  if (parts === undefined) throw new HttpError(400, { code: 50035, message: 'Invalid Form Body' });
  const payload = parts.find((p) => p.name === 'payload_json');
  let body: Record<string, unknown> = {};
  if (payload !== undefined) {
    try {
      body = JSON.parse(payload.data.toString('utf8')) as Record<string, unknown>;
    } catch {
      throw new HttpError(400, { code: 50109, message: 'The request body contains invalid JSON.' });
    }
  }
  const files = parts.filter((p) => /^files\[\d+\]$/.test(p.name));
  if (files.length > MAX_FILES || files.some((f) => f.filename === undefined || f.filename === '')) {
    throw new HttpError(400, { code: 50035, message: 'Invalid Form Body', errors: { files: {} } });
  }
  if (files.some((f) => f.data.length > MAX_FILE_BYTES)) {
    throw new HttpError(413, { code: 40005, message: 'Request entity too large' });
  }
  body[UPLOADED] = files.map((f): UploadedFile => ({
    filename: f.filename as string,
    data: f.data,
    ...(f.contentType !== undefined ? { contentType: f.contentType } : {}),
  }));
  return body;
}

/** The files a (multipart) body uploaded, if any. */
export function uploadedOf(body: Record<string, unknown>): UploadedFile[] | undefined {
  const files = body[UPLOADED];
  return Array.isArray(files) && files.length > 0 ? (files as UploadedFile[]) : undefined;
}

/** A request's body: a multipart form's (its files under UPLOADED), else its JSON. */
export async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const bytes = await readAll(req);
  return multipartBody(req.headers['content-type'], bytes) ?? parseJson(bytes);
}
