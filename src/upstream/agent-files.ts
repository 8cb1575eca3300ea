import type { AgentFile } from '../core/chat-port.js';

// A file or image an agent's stream announces, made safe to hand on: bytes sent inline (base64, or
// a `data:` URL) are decoded only up to a size cap and a count per reply; a URL is kept only when
// it is https (the platforms show it; the bridge never fetches it); the name is a plain file name.
// Whatever cannot be carried is still named, so the user learns a file was made.

/** The default largest file taken inline, in bytes (8 MB). */
export const DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024;
/** At most this many files a reply; later ones are ignored. */
export const MAX_FILES = 10;
/** All inline bytes of one reply together: three files at the cap. Beyond it files are named only. */
const TOTAL_FILES_FACTOR = 3;
const MAX_NAME = 200;
const MAX_URL = 4096;

/** What an event said about a file, in whatever spelling (the protocol readers map their fields to it). */
export interface FileFields {
  name?: unknown;
  mime?: unknown;
  url?: unknown;
  data?: unknown;
  size?: unknown;
}

const MIME = /^[a-z0-9][a-z0-9.+-]*\/[a-z0-9][a-z0-9.+-]*$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'text/plain': 'txt',
  'text/csv': 'csv',
  'text/markdown': 'md',
  'application/json': 'json',
  'application/pdf': 'pdf',
};

/** An https URL as given (a safe length), else undefined: the platforms show only those. */
export function httpsUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > MAX_URL) return undefined;
  try {
    return new URL(value).protocol === 'https:' ? value : undefined;
  } catch {
    return undefined;
  }
}

function mimeOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const mime = value.split(';')[0]?.trim().toLowerCase() ?? '';
  return MIME.test(mime) ? mime : undefined;
}

/** A file name to show: the last path segment, without control characters, of a sane length. */
function cleanName(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  const name = (value.split(/[/\\]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return name === '' || name === '.' || name === '..' ? undefined : name.slice(0, MAX_NAME);
}

function nameFromUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return cleanName(decodeURIComponent(new URL(url).pathname));
  } catch {
    return undefined;
  }
}

/** Inline bytes: base64 text, or a data URL (base64 or percent-encoded), with the data URL's type. */
interface Inline {
  mime?: string | undefined;
  /** Base64 without whitespace, or undefined for a percent-encoded data URL (`text`). */
  base64?: string;
  text?: string;
  size: number;
}

function inlineOf(value: unknown): Inline | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  if (value.startsWith('data:')) {
    const comma = value.indexOf(',');
    if (comma === -1) return undefined;
    const params = value.slice(5, comma).split(';');
    const body = value.slice(comma + 1);
    const mime = mimeOf(params[0]);
    if (params.slice(1).some((p) => p.trim().toLowerCase() === 'base64')) return base64Of(body, mime);
    try {
      const text = decodeURIComponent(body);
      return { mime, text, size: Buffer.byteLength(text) };
    } catch {
      return undefined;
    }
  }
  return base64Of(value, undefined);
}

function base64Of(raw: string, mime: string | undefined): Inline | undefined {
  const base64 = /\s/.test(raw) ? raw.replace(/\s+/g, '') : raw;
  if (!BASE64.test(base64)) return undefined;
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return { mime, base64, size: Math.max(0, Math.floor((base64.length * 3) / 4) - padding) };
}

/** Counts the files and inline bytes of one reply against the caps. */
export class FileBudget {
  private files = 0;
  private bytes = 0;

  constructor(readonly maxFileBytes: number = DEFAULT_MAX_FILE_BYTES) {}

  /**
   * The file to pass on, or undefined when the reply already has MAX_FILES (or the event names no
   * file at all). Bytes over the cap (or over the reply's total) are left out; the size stays.
   */
  take(fields: FileFields): AgentFile | undefined {
    if (this.files >= MAX_FILES) return undefined;
    const url = httpsUrl(fields.url);
    const inline = inlineOf(fields.data) ?? (url === undefined ? inlineOf(fields.url) : undefined);
    const mime = mimeOf(fields.mime) ?? inline?.mime;
    const name =
      cleanName(fields.name) ?? nameFromUrl(url) ?? `${mime?.startsWith('image/') ? 'image' : 'file'}.${ext(mime)}`;
    if (fields.name === undefined && url === undefined && inline === undefined) return undefined;
    this.files++;
    const given = typeof fields.size === 'number' && Number.isSafeInteger(fields.size) && fields.size >= 0;
    const size = inline?.size ?? (given ? (fields.size as number) : undefined);
    const file: AgentFile = { name };
    if (size !== undefined) file.size = size;
    if (mime !== undefined) file.mime = mime;
    if (url !== undefined) file.url = url;
    else if (inline !== undefined && this.fits(inline.size)) {
      this.bytes += inline.size;
      const bytes = inline.base64 !== undefined ? Buffer.from(inline.base64, 'base64') : Buffer.from(inline.text ?? '');
      // A copy of its own: a small Buffer is a view of a shared pool.
      file.data = new Uint8Array(bytes);
      file.size = bytes.byteLength;
    }
    return file;
  }

  private fits(size: number): boolean {
    return size <= this.maxFileBytes && this.bytes + size <= this.maxFileBytes * TOTAL_FILES_FACTOR;
  }
}

const ext = (mime: string | undefined): string => (mime && EXTENSIONS[mime]) ?? 'bin';
