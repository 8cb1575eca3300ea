import { request } from 'undici';
import {
  type Attachment,
  type AttachmentSkip,
  DEFAULT_ATTACHMENT_MAX_BYTES,
  isTextLike,
  MAX_ATTACHMENTS,
} from '../core/reply/attachments.js';
import type { Logger } from '../logger.js';

// The connectors' half of attachments: download the text-like files of a message (bounded in
// bytes and time, in parallel) and hand the core a platform-neutral list. Shared by Slack and
// Discord; each says how a file is fetched (Slack: the bot token in a header; Discord: the CDN
// URL as is). A token goes in a request header only: never in a URL, a log line or the result.

/** A file as the platform describes it. */
export interface PlatformFile {
  name: string;
  /** MIME type the platform reports (may be empty). */
  type: string;
  size: number;
  /** Where its bytes are; undefined when the platform offers no download (Slack external files). */
  downloadUrl?: string;
  /** Headers for the download (Slack's `Authorization`). Never logged. */
  headers?: Record<string, string>;
  /** A URL the upstream may be given: it must need no secret (Discord CDN yes, Slack url_private no). */
  publicUrl?: string;
  /**
   * Set when the platform names a file somewhere its token must not go (the origin, for the log):
   * the file is skipped as `untrusted_host`, nothing is fetched.
   */
  untrustedHost?: string;
}

export interface DownloadOptions {
  /** ATTACHMENT_MAX_BYTES. */
  maxBytes?: number;
  /** Per file: connect, headers and body. */
  timeoutMs?: number;
  logger: Logger;
}

export const DOWNLOAD_TIMEOUT_MS = 10_000;

class Skip extends Error {
  constructor(
    readonly reason: AttachmentSkip,
    detail: string,
  ) {
    super(detail);
  }
}

/** Every file of a message, in order: the first MAX_ATTACHMENTS handled, the rest `too_many`. */
export async function collectAttachments(files: readonly PlatformFile[], opts: DownloadOptions): Promise<Attachment[]> {
  return Promise.all(
    files.map((f, i) => {
      const type = f.type || 'application/octet-stream';
      const base: Attachment = {
        name: f.name,
        type,
        size: f.size,
        ...(f.publicUrl !== undefined ? { url: f.publicUrl } : {}),
      };
      if (i >= MAX_ATTACHMENTS) return { ...base, skipped: 'too_many' as const };
      if (f.untrustedHost !== undefined) {
        // Logged once, here: the origin only (never the path, its query or a header).
        opts.logger.warn(
          { file: f.name, origin: f.untrustedHost, reason: 'untrusted_host' },
          "attachment not on the platform's file host: not fetched, no token sent",
        );
        return { ...base, skipped: 'untrusted_host' as const };
      }
      if (!isTextLike(f.name, f.type)) return base;
      return readText(f, opts).then(
        (text) => ({ ...base, text }),
        (err: unknown) => {
          const reason = err instanceof Skip ? err.reason : 'failed';
          // Name, reason and a short cause: never the URL's query or a header.
          opts.logger.info(
            { file: f.name, reason, cause: err instanceof Error ? err.message : String(err) },
            'attachment not passed on',
          );
          return { ...base, skipped: reason };
        },
      );
    }),
  );
}

async function readText(f: PlatformFile, opts: DownloadOptions): Promise<string> {
  const max = opts.maxBytes ?? DEFAULT_ATTACHMENT_MAX_BYTES;
  if (f.size > max) throw new Skip('too_large', `declared ${f.size} bytes`);
  if (f.downloadUrl === undefined) throw new Skip('unsupported', 'no download URL');
  const signal = AbortSignal.timeout(opts.timeoutMs ?? DOWNLOAD_TIMEOUT_MS);
  const res = await request(f.downloadUrl, {
    method: 'GET',
    headers: { ...f.headers, 'accept-encoding': 'identity' },
    signal,
  });
  const { body } = res;
  try {
    if (res.statusCode !== 200) throw new Skip('failed', `HTTP ${res.statusCode}`);
    const contentType = String(res.headers['content-type'] ?? '').toLowerCase();
    // Slack answers a missing or refused token with 200 and its HTML login page: that page must
    // never pass for the file's text.
    if (contentType.startsWith('text/html') && !/html?$/i.test(f.name) && !f.type.includes('html')) {
      throw new Skip('failed', 'an HTML page instead of the file');
    }
    const length = Number(res.headers['content-length'] ?? NaN);
    if (Number.isFinite(length) && length > max) throw new Skip('too_large', `Content-Length ${length}`);
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > max) throw new Skip('too_large', `more than ${max} bytes`);
      chunks.push(chunk);
    }
    // The platform said how big the file is: another size is another document (a login page).
    if (f.size > 0 && total !== f.size) throw new Skip('failed', `got ${total} bytes, expected ${f.size}`);
    const bytes = Buffer.concat(chunks);
    if (bytes.includes(0)) throw new Skip('unsupported', 'binary content');
    try {
      return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
    } catch {
      throw new Skip('unsupported', 'not UTF-8 text');
    }
  } finally {
    // Stop reading what is left (too large, wrong page): the connection is not reused. undici
    // reports the destroy as an abort error, which is expected here and must not go unhandled.
    if (!body.destroyed) {
      body.on('error', () => {});
      body.destroy();
    }
  }
}
