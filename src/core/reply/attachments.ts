// Files on a user's message, as the core sees them: the connector downloaded what it could (it
// owns the token) and hands over a platform-neutral list; this module turns that list into the
// text sent upstream, the `metadata.attachments` entries and the files the user is told were
// skipped (the `metadata.attachments` entries: attachmentInfo in upstream-message.ts, which runs
// for every message). Pure: no I/O, no platform knowledge.

/** Why a file's content did not reach the upstream. */
export type AttachmentSkip =
  /** Over ATTACHMENT_MAX_BYTES (by its declared size, Content-Length or the bytes read). */
  | 'too_large'
  /** Looked like text but was not (binary bytes), or the platform offers no download. */
  | 'unsupported'
  /** The download failed, timed out, or returned something else than the file (a login page). */
  | 'failed'
  /** Past the first MAX_ATTACHMENTS files of the message. */
  | 'too_many'
  /** The text would push the message past CHAT_MAX_MESSAGE_CHARS. */
  | 'no_room'
  /** Hosted somewhere other than the platform's file host: not fetched, so no token goes there. */
  | 'untrusted_host';

/** One file of a message, after the connector's download. */
export interface Attachment {
  name: string;
  /** MIME type as the platform reports it, or `application/octet-stream`. */
  type: string;
  /** Bytes, as the platform declares it. */
  size: number;
  /** The file's text (text-like files that were downloaded). */
  text?: string;
  /** A URL that needs no secret (Discord CDN). Never a Slack `url_private`. */
  url?: string;
  skipped?: AttachmentSkip;
}

/** A file described to the upstream in `metadata.attachments` (images, PDFs, archives, …). */
export interface AttachmentInfo {
  name: string;
  type: string;
  size: number;
  url?: string;
}

export interface Skipped {
  name: string;
  reason: AttachmentSkip;
}

export interface AttachmentBlock {
  /** The user's text followed by the files: text-like ones delimited, others one line each. */
  messageText: string;
  skipped: Skipped[];
}

/** Files handled per message; the rest are named in the notice as `too_many`. */
export const MAX_ATTACHMENTS = 5;
export const DEFAULT_ATTACHMENT_MAX_BYTES = 200_000;

const TEXT_TYPES = new Set([
  'application/json',
  'application/ld+json',
  'application/x-ndjson',
  'application/xml',
  'application/javascript',
  'application/typescript',
  'application/x-sh',
  'application/x-yaml',
  'application/yaml',
  'application/toml',
  'application/sql',
  'application/graphql',
  'application/x-httpd-php',
  'application/x-python',
  'application/csv',
]);

// Source code and text formats by extension: platforms often report these as
// application/octet-stream (or not at all).
const TEXT_EXTENSIONS = new Set(
  (
    'txt text md markdown rst adoc csv tsv json jsonl ndjson yaml yml toml ini cfg conf env properties xml ' +
    'html htm css scss sass less svg log diff patch sql graphql gql proto tf hcl ' +
    'py pyi rb php pl pm lua r jl js mjs cjs jsx ts tsx mts cts vue svelte java kt kts scala groovy gradle ' +
    'c h cc cpp cxx hpp hh cs fs fsx go rs swift m mm dart zig nim ex exs erl hrl hs elm clj cljs edn ml mli ' +
    'sh bash zsh fish ps1 bat cmd mk makefile dockerfile cmake tex bib srt vtt'
  ).split(' '),
);

const BARE_TEXT_NAMES = new Set(['makefile', 'dockerfile', 'readme', 'license', 'gemfile', 'procfile']);

function extension(name: string): string {
  const base = name.toLowerCase().split('/').pop() ?? '';
  if (BARE_TEXT_NAMES.has(base)) return base;
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? '' : base.slice(dot + 1);
}

/** Whether a file's content is text the upstream can read (by its MIME type, else its extension). */
export function isTextLike(name: string, type: string | undefined): boolean {
  const mime = (type ?? '').toLowerCase().split(';')[0]?.trim() ?? '';
  if (mime.startsWith('text/')) return true;
  if (TEXT_TYPES.has(mime) || mime.endsWith('+json') || mime.endsWith('+xml')) return true;
  if (mime.startsWith('image/') && mime !== 'image/svg+xml') return false;
  if (mime.startsWith('audio/') || mime.startsWith('video/') || mime === 'application/pdf') return false;
  return TEXT_EXTENSIONS.has(extension(name));
}

/** "120 kB", "3.4 MB", "512 B": for the one-line descriptions and the notice. */
export function formatSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${Math.round(bytes / 1000)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** A fence the text cannot close early: one backtick longer than its longest run. */
function fenceFor(text: string): string {
  let longest = 0;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return '`'.repeat(Math.max(3, longest + 1));
}

/** `File: name.py` and the text in a fenced block tagged with the extension. */
export function fileBlock(name: string, text: string): string {
  const fence = fenceFor(text);
  const lang = /^[a-z0-9]+$/.test(extension(name)) ? extension(name) : '';
  const body = text.endsWith('\n') ? text : `${text}\n`;
  return `File: ${oneLine(name)}\n${fence}${lang}\n${body}${fence}`;
}

const REASONS: Record<AttachmentSkip, string> = {
  too_large: 'too large',
  unsupported: 'unsupported file',
  failed: 'download failed',
  too_many: `more than ${MAX_ATTACHMENTS} files`,
  no_room: 'too long for the message',
  untrusted_host: 'not on the platform file host',
};

export function skipReason(reason: AttachmentSkip): string {
  return REASONS[reason];
}

/** File names come from users: keep them on one line and of reasonable length. */
function oneLine(name: string): string {
  const flat = name.replace(/[\r\n\t]+/g, ' ').trim();
  return flat.length > 120 ? `${flat.slice(0, 119)}…` : flat || 'unnamed';
}

function attachedLine(a: Attachment, note?: string): string {
  const what = `${oneLine(a.name)} (${a.type || 'unknown type'}, ${formatSize(a.size)})`;
  return note === undefined ? `[attached: ${what}]` : `[attached: ${what}; not read: ${note}]`;
}

/**
 * The upstream message for a user's text and files, within `maxChars` (CHAT_MAX_MESSAGE_CHARS)
 * when given. Text-like files follow the user's text in order, each in its own fenced block; a
 * file whose block does not fit is skipped as `no_room`. Every other file gets one
 * `[attached: …]` line (and, unless skipped, an entry in `metadata`), so the upstream knows of
 * every file even when it cannot read it.
 */
export function attachmentBlock(
  files: readonly Attachment[],
  opts: { userText: string; maxChars?: number | undefined },
): AttachmentBlock {
  const skipped: Skipped[] = [];
  const lines: string[] = [];
  const texts: Attachment[] = [];
  for (const a of files) {
    if (a.skipped !== undefined) {
      skipped.push({ name: a.name, reason: a.skipped });
      lines.push(attachedLine(a, skipReason(a.skipped)));
    } else if (a.text !== undefined) {
      texts.push(a);
    } else {
      lines.push(attachedLine(a));
    }
  }

  const user = opts.userText.trim();
  const max = opts.maxChars ?? Number.POSITIVE_INFINITY;
  const join = (parts: string[]) => parts.filter((p) => p !== '').join('\n\n');
  // The lines are short and tell the upstream what it cannot see: they are budgeted first (and
  // left out only when even they do not fit; `metadata` still names the files).
  let linesText = lines.join('\n');
  if (join([user, linesText]).length > max) linesText = '';
  let used = join([user, linesText]).length;
  const blocks: string[] = [];
  const late: string[] = [];
  for (const a of texts) {
    const block = fileBlock(a.name, a.text ?? '');
    const cost = block.length + (used === 0 ? 0 : 2);
    if (used + cost <= max) {
      blocks.push(block);
      used += cost;
    } else {
      skipped.push({ name: a.name, reason: 'no_room' });
      late.push(attachedLine(a, skipReason('no_room')));
    }
  }
  // A "not read" line for a file that did not fit is added only when it fits too.
  let tail = linesText;
  for (const line of late) {
    const next = tail === '' ? line : `${tail}\n${line}`;
    if (join([user, ...blocks, next]).length <= max) tail = next;
  }
  return { messageText: join([user, ...blocks, tail]), skipped };
}

/** One line naming every skipped file with its reason, for the place. */
export function skippedNotice(skipped: readonly Skipped[]): string {
  const list = skipped.map((s) => `${oneLine(s.name)} (${skipReason(s.reason)})`).join(', ');
  return skipped.length === 1
    ? `One file was not passed to the assistant: ${list}.`
    : `${skipped.length} files were not passed to the assistant: ${list}.`;
}
