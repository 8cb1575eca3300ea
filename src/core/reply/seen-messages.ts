// A bounded record of the messages the bridge received in a place's events, so the context of a
// new conversation can end with the messages just before the user's even when the platform caps
// or refuses a history read (Slack: 15 messages a call and one call a minute for apps outside
// the Marketplace). Kept in memory only, per process: a restart starts it empty, and with
// several replicas each holds the events it received. Bounded three ways: messages per place,
// places (least recently written dropped first), and age (a place idle longer than `ttlMs` is
// forgotten). Each entry's text is cut to `maxChars`. Connectors own one and store what they
// need to make a PlaceMessage later (Slack resolves names when the record is read).

export interface SeenLimits {
  /** Messages kept per place (the oldest dropped first). */
  perPlace: number;
  /** Places kept (the least recently written dropped first). */
  places: number;
  /** A place not written to for this long is forgotten. */
  ttlMs: number;
  /** Characters of one message's text kept. */
  maxChars: number;
}

export const DEFAULT_SEEN_LIMITS: SeenLimits = {
  perPlace: 100,
  places: 1000,
  ttlMs: 24 * 60 * 60_000,
  maxChars: 4000,
};

/** Platform message ids that are numbers written out (Slack `1700000000.000100`, Discord snowflakes), compared as numbers. */
export function compareIds(a: string, b: string): number {
  const [ai = '', af = ''] = a.split('.');
  const [bi = '', bf = ''] = b.split('.');
  if (ai.length !== bi.length) return ai.length - bi.length;
  if (ai !== bi) return ai < bi ? -1 : 1;
  const width = Math.max(af.length, bf.length);
  const x = af.padEnd(width, '0');
  const y = bf.padEnd(width, '0');
  return x === y ? 0 : x < y ? -1 : 1;
}

/** Cuts a text to `max` characters (an ellipsis marks the cut). */
export function cutText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

interface PlaceEntries<T> {
  at: number;
  /** Oldest first, by id. */
  items: { id: string; value: T }[];
}

export class SeenMessages<T> {
  private readonly places = new Map<string, PlaceEntries<T>>();

  constructor(
    private readonly now: () => number,
    readonly limits: SeenLimits = DEFAULT_SEEN_LIMITS,
  ) {}

  /** Places held now (for tests and the bound). */
  get size(): number {
    return this.places.size;
  }

  /** Records a message of a place, or replaces the one with the same id. */
  add(place: string, id: string, value: T): void {
    const now = this.now();
    let entry = this.places.get(place);
    if (entry !== undefined) this.places.delete(place);
    if (entry === undefined || now - entry.at > this.limits.ttlMs) entry = { at: now, items: [] };
    entry.at = now;
    const items = entry.items;
    const same = items.findIndex((i) => i.id === id);
    if (same >= 0) items[same] = { id, value };
    else {
      // Events arrive nearly in order: look for the place from the newest end.
      let i = items.length;
      while (i > 0 && compareIds((items[i - 1] as { id: string }).id, id) > 0) i--;
      items.splice(i, 0, { id, value });
      if (items.length > this.limits.perPlace) items.splice(0, items.length - this.limits.perPlace);
    }
    this.places.set(place, entry);
    this.evict(now);
  }

  /** Changes a recorded message (an edit); nothing when it is not held. */
  update(place: string, id: string, change: (value: T) => T): void {
    const item = this.places.get(place)?.items.find((i) => i.id === id);
    if (item !== undefined) item.value = change(item.value);
  }

  remove(place: string, id: string): void {
    const entry = this.places.get(place);
    if (entry !== undefined) entry.items = entry.items.filter((i) => i.id !== id);
  }

  /** The place's messages older than `beforeId` (all when undefined), newest first, at most `limit`. */
  before(place: string, beforeId: string | undefined, limit: number): T[] {
    const entry = this.places.get(place);
    if (entry === undefined || this.now() - entry.at > this.limits.ttlMs) return [];
    const out: T[] = [];
    for (let i = entry.items.length - 1; i >= 0 && out.length < limit; i--) {
      const item = entry.items[i] as { id: string; value: T };
      if (beforeId === undefined || compareIds(item.id, beforeId) < 0) out.push(item.value);
    }
    return out;
  }

  /** One message of a place, by id. */
  get(place: string, id: string): T | undefined {
    return this.places.get(place)?.items.find((i) => i.id === id)?.value;
  }

  private evict(now: number): void {
    for (const [key, entry] of this.places) {
      if (this.places.size <= this.limits.places && now - entry.at <= this.limits.ttlMs) break;
      this.places.delete(key);
    }
  }
}
