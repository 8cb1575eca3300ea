// Label values come partly from outside (upstream error codes, platform bucket keys with ids in
// them). Every distinct value is a new Prometheus series, so values are normalised and capped:
// a flood of odd codes must not grow the process's memory or the scrape without bound.

/** Remembers up to `max` distinct values; later new values become `other`. */
export class BoundedLabel {
  private readonly seen = new Set<string>();

  constructor(private readonly max = 50) {}

  value(raw: string): string {
    const v = sanitize(raw);
    if (this.seen.has(v)) return v;
    if (this.seen.size >= this.max) return 'other';
    this.seen.add(v);
    return v;
  }
}

/** Printable, short, no quotes or newlines (the exposition format escapes them, but logs and dashboards suffer). */
export function sanitize(raw: string): string {
  const v = raw
    .trim()
    .replace(/[^A-Za-z0-9_.:/-]+/g, '_')
    .slice(0, 64);
  return v === '' ? 'unknown' : v;
}

/**
 * A rate-limit bucket key without its ids: `discord:channel:1234` → `discord:channel`,
 * `slack:T01ABC:chat.update` → `slack:chat.update`. Keeps the platform and the segments that
 * read as names (a lower-case first letter, no digits: `channel`, `chat.update`); drops snowflakes, Slack ids (upper case) and hashes (digits).
 */
export function bucketLabel(key: string): string {
  const parts = key.split(':').filter((p) => p.length > 0);
  const [platform, ...rest] = parts;
  if (platform === undefined) return 'unknown';
  const names = rest.filter((p) => /^[a-z][A-Za-z._-]{0,31}$/.test(p));
  return [platform.toLowerCase(), ...names].join(':');
}
