// The one scrubber of the process. Every output path (log lines at any level, `doctor`, CLI
// errors, user notices, /metrics) passes text through `scrubSecrets`, which removes
//  - the configured secret VALUES (CHAT_API_KEY, the Slack bot/app tokens, signing, client and
//    state secrets, the Discord token, the password inside DATABASE_URL), registered when the
//    configuration is read, and
//  - the patterns of credentials nobody configured here (Bearer headers, Slack and Discord
//    tokens, OAuth client secrets in request bodies), e.g. tokens of OAuth installs.
// Values shorter than MIN_SECRET_CHARS are ignored: scrubbing `abc` everywhere would only
// garble logs, and such a value protects nothing anyway.

export const MIN_SECRET_CHARS = 6;
export const REDACTED = '[redacted]';

/** The variables whose values are secrets (DATABASE_URL: only its password). */
export const SECRET_VARIABLES = [
  'CHAT_API_KEY',
  'SLACK_BOT_TOKEN',
  'SLACK_APP_TOKEN',
  'SLACK_SIGNING_SECRET',
  'SLACK_CLIENT_SECRET',
  'SLACK_STATE_SECRET',
  'DISCORD_BOT_TOKEN',
  'PLAYGROUND_TOKEN',
] as const;

/** The secret values an environment configures (raw, before validation: a bad value is still scrubbed). */
export function secretValuesOf(env: Record<string, string | undefined>): string[] {
  const out: string[] = [];
  for (const name of SECRET_VARIABLES) {
    const v = env[name]?.trim();
    if (v) out.push(v);
  }
  out.push(...urlPasswords(env.DATABASE_URL));
  return out;
}

/** The password of a URL as written and as decoded (either may be echoed by a driver). */
export function urlPasswords(url: string | undefined): string[] {
  if (!url) return [];
  try {
    const raw = new URL(url.trim()).password;
    if (raw === '') return [];
    let decoded = raw;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      // a stray % : the raw form only
    }
    return decoded === raw ? [raw] : [raw, decoded];
  } catch {
    return [];
  }
}

/**
 * Applies the credential patterns (no configured values). The token patterns need no word
 * boundary before them: a token glued to other text (`token%3Dxoxb-…`, `a_xoxb-…`) is one still.
 * `Bearer` in any case, followed by a space, `%20` or `+` (a header echoed, or URL-encoded).
 */
export function scrubPatterns(text: string): string {
  return (
    text
      .replace(/(?<![A-Za-z])(bearer)(?:\s+|%20|\+)[A-Za-z0-9._~+/=%-]+/gi, '$1 [redacted]')
      // OAuth client secrets as Slack's (and most) SDKs put them in request bodies: JSON or form.
      // Both stay valid inside a JSON log line (escapes are kept whole or left alone).
      .replace(/("client_secret"\s*:\s*")(?:[^"\\]|\\.)*"/g, '$1[redacted]"')
      .replace(/\b(client_secret=)[^&\s"\\]+/g, '$1[redacted]')
      .replace(/x(?:ox[abposre]|app)-[A-Za-z0-9-]+/g, '[redacted-slack-token]')
      .replace(/[MNO][A-Za-z\d_-]{23,25}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,38}/g, '[redacted-discord-token]')
  );
}

/**
 * The forms a value can take in output: as is, in upper- and lowercase, JSON-escaped (a log line
 * is JSON), URL-encoded (a value echoed inside a query string or form body; also every byte
 * encoded) with upper- and lowercase hex digits, hex (a digest-like dump), HTML-escaped (an
 * error page that echoes a request), and base64 (a Basic credential or a body an upstream
 * encoded). base64 is scrubbed in all three alignments the value can start at inside a longer
 * encoded string (the part of each that depends on the value alone), so a secret encoded
 * together with other text (`user:secret`) is caught too.
 */
function formsOf(value: string): string[] {
  const pct = encodeURIComponent(value);
  const hex = Buffer.from(value, 'utf8').toString('hex');
  const everyByte = hex.replace(/../g, '%$&');
  const forms = new Set([
    value,
    value.toUpperCase(),
    value.toLowerCase(),
    hex,
    hex.toUpperCase(),
    everyByte,
    everyByte.toUpperCase(),
    JSON.stringify(value).slice(1, -1),
    pct,
    pct.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    htmlEscaped(value),
    htmlEscaped(value)
      .replace(/&#39;/g, '&#x27;')
      .replace(/&quot;/g, '&#34;'),
    ...base64Forms(value),
  ]);
  return [...forms].filter((f) => f.length >= MIN_SECRET_CHARS);
}

function htmlEscaped(v: string): string {
  return v
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/**
 * The base64 text that encodes `value` whatever comes before it: with 0, 1 or 2 bytes before it,
 * the characters that depend on those bytes, and the last partial group, are dropped. Standard
 * and URL-safe alphabets.
 */
function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const out: string[] = [];
  for (const lead of [0, 1, 2]) {
    const padded = Buffer.concat([Buffer.alloc(lead), bytes]);
    const text = padded.toString('base64').replace(/=+$/, '');
    // Characters fully determined by the value: skip those touching the lead bytes, and keep
    // whole 4-character groups only up to the last full 3-byte group of the value.
    const start = lead === 0 ? 0 : 4;
    const fullGroups = Math.floor(padded.length / 3);
    const core = text.slice(start, fullGroups * 4);
    if (core.length >= MIN_SECRET_CHARS * 2) out.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  // The value encoded alone, with its padding: the usual case.
  const whole = bytes.toString('base64');
  out.push(whole, whole.replace(/=+$/, ''));
  return out;
}

/**
 * The lengths of the starts forms are indexed by, longest first: a form goes under the longest
 * that it has. Tokens share their first characters (`xoxb-1…`, and their hex and base64 forms
 * likewise), so a short key alone would put every install's token in one bucket.
 */
const KEY_LENGTHS = [24, 16, MIN_SECRET_CHARS] as const;

const keyLengthOf = (form: string): number => KEY_LENGTHS.find((k) => form.length >= k) ?? MIN_SECRET_CHARS;

/**
 * The forms of some values, found in one pass over a text: indexed by their start (KEY_LENGTHS),
 * longest first, so the cost per line grows with its length, not with how many secrets the
 * process holds.
 */
class FormIndex {
  private readonly byStart = new Map<number, Map<string, string[]>>(KEY_LENGTHS.map((k) => [k, new Map()]));
  /** The first two characters of every form: most positions of a text are passed on that alone. */
  private readonly pairs = new Set<number>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(forms: Iterable<string>): void {
    for (const f of forms) {
      const k = keyLengthOf(f);
      const starts = this.byStart.get(k);
      if (starts === undefined) continue;
      const key = f.slice(0, k);
      const bucket = starts.get(key) ?? [];
      if (bucket.includes(f)) continue;
      // Longest first within a bucket.
      const at = bucket.findIndex((x) => x.length < f.length);
      bucket.splice(at === -1 ? bucket.length : at, 0, f);
      starts.set(key, bucket);
      this.pairs.add(f.charCodeAt(0) * 65536 + f.charCodeAt(1));
      this.count++;
    }
  }

  delete(forms: Iterable<string>): void {
    for (const f of forms) {
      const k = keyLengthOf(f);
      const starts = this.byStart.get(k);
      const key = f.slice(0, k);
      const bucket = starts?.get(key);
      if (starts === undefined || bucket === undefined || !bucket.includes(f)) continue;
      const rest = bucket.filter((x) => x !== f);
      if (rest.length === 0) starts.delete(key);
      else starts.set(key, rest);
      this.count--;
    }
    // `pairs` keeps stale entries: they only cost a lookup that finds nothing.
  }

  /** The longest form that starts at `i` of `text`, if any. */
  private at(text: string, i: number): string | undefined {
    if (!this.pairs.has(text.charCodeAt(i) * 65536 + text.charCodeAt(i + 1))) return undefined;
    for (const k of KEY_LENGTHS) {
      if (i + k > text.length) continue;
      const hit = this.byStart
        .get(k)
        ?.get(text.slice(i, i + k))
        ?.find((f) => text.startsWith(f, i));
      if (hit !== undefined) return hit;
    }
    return undefined;
  }

  /** Every form in `text` replaced by REDACTED, the leftmost first, the longest at one start. */
  scrub(text: string): string {
    if (this.count === 0 || text.length < MIN_SECRET_CHARS) return text;
    let out = '';
    let last = 0;
    let i = 0;
    while (i <= text.length - MIN_SECRET_CHARS) {
      const hit = this.at(text, i);
      if (hit === undefined) {
        i++;
        continue;
      }
      out += text.slice(last, i) + REDACTED;
      i += hit.length;
      last = i;
    }
    return last === 0 ? text : out + text.slice(last);
  }
}

/**
 * The shortest piece of a configured secret that is scrubbed on its own: a secret logged in parts
 * (split across two fields of one line, or cut by an upstream that echoes half a header) still
 * leaves no run of this many of its characters. At most half the secret, so a secret split in two
 * loses both halves; at least MIN_SECRET_CHARS, so short values do not garble ordinary text.
 */
export const MIN_PIECE_CHARS = 12;

const pieceLengthOf = (secret: string): number =>
  Math.max(MIN_SECRET_CHARS, Math.min(MIN_PIECE_CHARS, Math.floor(secret.length / 2)));

/**
 * Pieces of secrets: every run of a configured secret (as is, lower- and uppercase) at least its
 * piece length long, found wherever it starts and scrubbed as far as it goes on matching. Only
 * configured secrets (a handful): indexing every window of thousands of install tokens would cost
 * more memory than it protects, and their whole forms are caught by value and by pattern.
 */
class PieceIndex {
  /** A window (piece length characters) to the secrets and offsets it comes from. */
  private readonly windows = new Map<string, { secret: string; at: number }[]>();
  private readonly lengths = new Set<number>();
  private readonly pairs = new Set<number>();

  add(secret: string): void {
    const n = pieceLengthOf(secret);
    for (const form of new Set([secret, secret.toLowerCase(), secret.toUpperCase()])) {
      for (let at = 0; at + n <= form.length; at++) {
        const w = form.slice(at, at + n);
        const list = this.windows.get(w) ?? [];
        list.push({ secret: form, at });
        this.windows.set(w, list);
        this.pairs.add(w.charCodeAt(0) * 65536 + w.charCodeAt(1));
      }
    }
    this.lengths.add(n);
  }

  /** The longest run of a secret that starts at `i` of `text`, as a length (0: none). */
  private runAt(text: string, i: number): number {
    if (!this.pairs.has(text.charCodeAt(i) * 65536 + text.charCodeAt(i + 1))) return 0;
    let best = 0;
    for (const n of this.lengths) {
      for (const { secret, at } of this.windows.get(text.slice(i, i + n)) ?? []) {
        let len = n;
        while (i + len < text.length && at + len < secret.length && text[i + len] === secret[at + len]) len++;
        best = Math.max(best, len);
      }
    }
    return best;
  }

  scrub(text: string): string {
    if (this.windows.size === 0 || text.length < MIN_SECRET_CHARS) return text;
    let out = '';
    let last = 0;
    let i = 0;
    while (i <= text.length - MIN_SECRET_CHARS) {
      const len = this.runAt(text, i);
      if (len === 0) {
        i++;
        continue;
      }
      out += text.slice(last, i) + REDACTED;
      i += len;
      last = i;
    }
    return last === 0 ? text : out + text.slice(last);
  }
}

/** Characters that show nothing: a secret split by one is a secret still. */
const INVISIBLE = /[\u00AD\u180E\u200B-\u200F\u2060-\u2064\uFEFF]/g;

/**
 * Values and patterns out of `text`. When the text holds invisible characters, it is checked
 * again without them; if that finds a secret, the text comes out without them (and redacted).
 */
function scrubWith(text: string, index: FormIndex, patterns: boolean, pieces?: PieceIndex): string {
  const values = (t: string) => (pieces === undefined ? index.scrub(t) : pieces.scrub(index.scrub(t)));
  const once = (t: string) => (patterns ? scrubPatterns(values(t)) : values(t));
  const out = once(text);
  INVISIBLE.lastIndex = 0;
  if (!INVISIBLE.test(text)) return out;
  // From the text, not from `out`: a piece scrubbed on one side of the invisible character would
  // leave the other side too short to be seen as part of the secret.
  const visible = text.replace(INVISIBLE, '');
  const again = once(visible);
  return again === visible ? out : again;
}

export type Scrubber = (text: string) => string;

/** A scrubber for these values plus the patterns; values first, so a pattern cannot split one. */
export function createScrubber(values: Iterable<string | undefined>): Scrubber {
  const index = new FormIndex();
  const pieces = new PieceIndex();
  for (const v of values) {
    const t = usable(v);
    if (t === undefined) continue;
    index.add(formsOf(t));
    pieces.add(t);
  }
  return (text) => scrubWith(text, index, true, pieces);
}

// The process-wide set: filled by config loading (parseRawEnv) and by whatever holds a secret
// (the Slack installation store registers the tokens of every install it loads or stores), read
// by every output path. Configured values stay; held ones are bounded (MAX_HELD_SECRETS, the
// oldest forgotten first: their plain forms are still caught by the token patterns).
const registered = new Set<string>();
const held = new Set<string>();
const registeredIndex = new FormIndex();
const registeredPieces = new PieceIndex();

/** Secrets registered by holders (registerHeldSecrets) kept for scrubbing by value, at most. */
export const MAX_HELD_SECRETS = 5_000;

function usable(v: string | undefined): string | undefined {
  const t = v?.trim();
  return t !== undefined && t.length >= MIN_SECRET_CHARS ? t : undefined;
}

/** How many kept values have each form (two values may share one, a base64 core say). */
const formUses = new Map<string, number>();

function keep(value: string): void {
  for (const f of formsOf(value)) {
    const n = formUses.get(f) ?? 0;
    formUses.set(f, n + 1);
    if (n === 0) registeredIndex.add([f]);
  }
}

function forget(value: string): void {
  for (const f of formsOf(value)) {
    const n = (formUses.get(f) ?? 1) - 1;
    if (n > 0) formUses.set(f, n);
    else {
      formUses.delete(f);
      registeredIndex.delete([f]);
    }
  }
}

/** Configured secrets (the environment's): scrubbed by value for the life of the process. */
export function registerSecrets(values: Iterable<string | undefined>): void {
  for (const v of values) {
    const t = usable(v);
    if (t === undefined || registered.has(t)) continue;
    registered.add(t);
    registeredPieces.add(t);
    // Held already: its forms are kept, and now for good.
    if (!held.delete(t)) keep(t);
  }
}

/**
 * Secrets the process came to hold (tokens of Slack installs as they are stored or loaded):
 * scrubbed by value like configured ones, the MAX_HELD_SECRETS most recently registered of them
 * (an install loaded again counts as new, so the workspaces in use stay).
 */
export function registerHeldSecrets(values: Iterable<string | undefined>): void {
  for (const v of values) {
    const t = usable(v);
    if (t === undefined || registered.has(t)) continue;
    if (held.delete(t)) {
      held.add(t); // most recent last
      continue;
    }
    held.add(t);
    keep(t);
    if (held.size > MAX_HELD_SECRETS) {
      const oldest = held.values().next().value;
      if (oldest !== undefined) {
        held.delete(oldest);
        forget(oldest);
      }
    }
  }
}

/** Configured values and credential patterns out of free text (error messages, bodies, notices). */
export function scrubSecrets(text: string): string {
  return scrubWith(text, registeredIndex, true, registeredPieces);
}

/** Only the configured values: for hot paths where the patterns already ran or cannot occur. */
export function scrubRegisteredValues(text: string): string {
  return registeredIndex.size === 0 ? text : scrubWith(text, registeredIndex, false, registeredPieces);
}

/** A writer that scrubs what goes through it: the stderr of the CLI commands. */
export function scrubbingWriter(w: { write(s: string): unknown }): { write(s: string): unknown } {
  return { write: (s: string) => w.write(scrubSecrets(s)) };
}
