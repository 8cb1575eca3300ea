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

/** Applies the credential patterns (no configured values). */
export function scrubPatterns(text: string): string {
  return (
    text
      .replace(/\bBearer\s+[A-Za-z0-9._~+/=-]+/g, 'Bearer [redacted]')
      // OAuth client secrets as Slack's (and most) SDKs put them in request bodies: JSON or form.
      // Both stay valid inside a JSON log line (escapes are kept whole or left alone).
      .replace(/("client_secret"\s*:\s*")(?:[^"\\]|\\.)*"/g, '$1[redacted]"')
      .replace(/\b(client_secret=)[^&\s"\\]+/g, '$1[redacted]')
      .replace(/\bx(?:ox[abposr]|app)-[A-Za-z0-9-]+/g, '[redacted-slack-token]')
      .replace(/\b[MNO][A-Za-z\d_-]{23,25}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,38}\b/g, '[redacted-discord-token]')
  );
}

/**
 * The forms a value can take in output: as is, JSON-escaped (a log line is JSON), URL-encoded
 * (a value echoed inside a query string or form body) with upper- and lowercase hex digits,
 * HTML-escaped (an error page that echoes a request), and base64 (a Basic credential or a body
 * an upstream encoded). base64 is scrubbed in all three alignments the value can start at inside
 * a longer encoded string (the part of each that depends on the value alone), so a secret
 * encoded together with other text (`user:secret`) is caught too.
 */
function formsOf(value: string): string[] {
  const pct = encodeURIComponent(value);
  const forms = new Set([
    value,
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

/** Replaces every occurrence of the given values, longest first (a value inside another goes too). */
function scrubValues(text: string, forms: readonly string[]): string {
  let out = text;
  for (const f of forms) if (out.includes(f)) out = out.split(f).join(REDACTED);
  return out;
}

export type Scrubber = (text: string) => string;

/** A scrubber for these values plus the patterns; values first, so a pattern cannot split one. */
export function createScrubber(values: Iterable<string | undefined>): Scrubber {
  const forms = sortedForms(values);
  return (text) => scrubPatterns(scrubValues(text, forms));
}

function sortedForms(values: Iterable<string | undefined>): string[] {
  const all = new Set<string>();
  for (const v of values) if (v !== undefined && v.length >= MIN_SECRET_CHARS) for (const f of formsOf(v)) all.add(f);
  return [...all].sort((a, b) => b.length - a.length);
}

// The process-wide set: filled by config loading (parseRawEnv), read by every output path. It
// only grows: scrubbing a value the process no longer uses harms nothing.
const registered = new Set<string>();
let registeredForms: string[] = [];

export function registerSecrets(values: Iterable<string | undefined>): void {
  let added = false;
  for (const v of values) {
    const t = v?.trim();
    if (t !== undefined && t.length >= MIN_SECRET_CHARS && !registered.has(t)) {
      registered.add(t);
      added = true;
    }
  }
  if (added) registeredForms = sortedForms(registered);
}

/** Configured values and credential patterns out of free text (error messages, bodies, notices). */
export function scrubSecrets(text: string): string {
  return scrubPatterns(scrubValues(text, registeredForms));
}

/** Only the configured values: for hot paths where the patterns already ran or cannot occur. */
export function scrubRegisteredValues(text: string): string {
  return registeredForms.length === 0 ? text : scrubValues(text, registeredForms);
}

/** A writer that scrubs what goes through it: the stderr of the CLI commands. */
export function scrubbingWriter(w: { write(s: string): unknown }): { write(s: string): unknown } {
  return { write: (s: string) => w.write(scrubSecrets(s)) };
}
