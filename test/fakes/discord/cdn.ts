import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

// The fake's CDN: attachments served at their signed URL, no token involved (like Discord's CDN).

export interface FakeAttachmentInput {
  name: string;
  /** `content_type` (omitted when undefined, as Discord does for unknown types). */
  contentType?: string;
  content: string | Buffer;
  /** Declared `size` (default the content's byte length). */
  size?: number;
}

/** A request for an attachment's CDN URL. */
export interface CdnDownload {
  path: string;
  authorization: string | undefined;
}

export class FakeCdn {
  private readonly files = new Map<string, { content: Buffer; contentType: string | undefined }>();
  /** Requests for attachments' CDN URLs, in order. */
  readonly downloads: CdnDownload[] = [];

  constructor(private readonly base: () => string) {}

  /** Store a file of a message in `channelId`; returns its attachment object as the gateway sends it. */
  attach(channelId: string, id: string, a: FakeAttachmentInput): Record<string, unknown> {
    const content = typeof a.content === 'string' ? Buffer.from(a.content) : a.content;
    const path = `/attachments/${channelId}/${id}/${encodeURIComponent(a.name)}`;
    this.files.set(path, { content, contentType: a.contentType });
    // Discord signs CDN URLs (expiry and HMAC in the query); the signature is no secret.
    const url = `http://${this.base()}${path}?ex=${Math.floor(Date.now() / 1000 + 86_400).toString(16)}&is=0&hm=${randomBytes(8).toString('hex')}&`;
    return {
      id,
      filename: a.name,
      size: a.size ?? content.length,
      url,
      proxy_url: url,
      ...(a.contentType !== undefined ? { content_type: a.contentType } : {}),
    };
  }

  /** Answer a CDN request; false when `req` is not one. */
  serve(req: IncomingMessage, res: ServerResponse): boolean {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (!path.startsWith('/attachments/') || req.method !== 'GET') return false;
    this.downloads.push({ path: req.url ?? '', authorization: req.headers.authorization });
    const file = this.files.get(path);
    if (file === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('This content is no longer available.');
      return true;
    }
    res.writeHead(200, {
      'content-type': file.contentType ?? 'application/octet-stream',
      'content-length': String(file.content.length),
    });
    res.end(file.content);
    return true;
  }
}
