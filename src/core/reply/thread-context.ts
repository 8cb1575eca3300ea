import type { Logger } from 'pino';
import type { ContextMessage } from '../chat-port.js';
import {
  type Clock,
  type PlaceHistoryPage,
  type HistoryReader,
  type HistoryRequest,
  type IncomingMessage,
  type Place,
  type PlaceMessage,
  placeKey,
} from '../ports.js';
import type { BridgeMetrics, ContextSkipReason } from '../metrics-port.js';
import type { WriteScheduler } from '../budget/write-scheduler.js';
import { cleanHistory, type ContextMode } from './upstream-message.js';

// Thread context: when a new upstream conversation starts in a place that already holds
// messages (the bot mentioned midway through a thread, a conversation renewed), the place's
// recent history is sent along. It comes from two sources, merged by message id, newest kept:
// - the connector's record of the messages the bridge received in the place's events
//   (HistoryReader.recorded, on a SeenMessages below: in memory, bounded, free), so the context
//   ends with the messages just before the user's even when the platform caps or refuses a read;
// - a read from the platform through the connector's HistoryReader, page by page (a capped read,
//   or a thread paged from its start, continues up to MAX_PAGES pages) until it reaches the
//   messages just before the user's. Reading costs platform budget, so every page goes through
//   the one scheduler, and the read is cached per place.
// Context is best effort: a page its learned budget cannot pay now is skipped at once (it never
// waits for budget), a read that takes longer than HISTORY_TIMEOUT_MS or fails is given up; the
// reply goes on with the record and the pages read so far, and a skipped first page is counted
// (bridge_context_skipped_total). The cache serves new conversations that start again before
// anything was written in the place (e.g. when each turn starts one because the upstream names
// none); a reply written there, or a reset, drops the place's entry.

export interface ContextSettings {
  mode: ContextMode;
  /** CONTEXT_MAX_MESSAGES */
  maxMessages: number;
  /** CONTEXT_MAX_CHARS */
  maxChars: number;
  /** How long a history read may take before the reply goes on without it. Default HISTORY_TIMEOUT_MS. */
  timeoutMs?: number;
}

export const CONTEXT_OFF: ContextSettings = { mode: 'off', maxMessages: 0, maxChars: 0 };

/** How long one history read (all its pages) may hold a reply up (it never waits for budget: see readPage). */
export const HISTORY_TIMEOUT_MS = 2000;
/** Pages one read takes at most: a thread of 60 messages under Slack's 15-a-call cap. */
export const MAX_PAGES = 4;
const CACHE_PLACES = 500;
const CACHE_TTL_MS = 3 * 60_000;

/** Recently read histories by place: a bounded LRU, entries expire after a few minutes. */
export class HistoryCache {
  private readonly entries = new Map<string, { at: number; messages: PlaceMessage[] }>();

  constructor(
    private readonly maxPlaces = CACHE_PLACES,
    private readonly ttlMs = CACHE_TTL_MS,
  ) {}

  get(key: string, now: number): PlaceMessage[] | undefined {
    const hit = this.entries.get(key);
    if (hit === undefined) return undefined;
    this.entries.delete(key);
    if (now - hit.at > this.ttlMs) return undefined;
    this.entries.set(key, hit);
    return hit.messages;
  }

  set(key: string, now: number, messages: PlaceMessage[]): void {
    this.entries.delete(key);
    this.entries.set(key, { at: now, messages });
    while (this.entries.size > this.maxPlaces) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

/** The reason a read that the budget cannot pay at once is taken out of the scheduler's queue. */
const NOT_NOW = new Error('history budget cannot pay now');

export interface ThreadContextOptions {
  scheduler: WriteScheduler;
  clock: Clock;
  settings: ContextSettings;
  cache?: HistoryCache;
  /** Where skipped reads are counted (default: nowhere). */
  metrics?: Pick<BridgeMetrics, 'contextSkipped'>;
}

export class ThreadContext {
  private readonly cache: HistoryCache;

  constructor(private readonly o: ThreadContextOptions) {
    this.cache = o.cache ?? new HistoryCache();
  }

  get settings(): ContextSettings {
    return this.o.settings;
  }

  /**
   * The place got messages the cache does not hold (a reply was written there) or was reset: the
   * next new conversation there reads its history again.
   */
  changed(place: Place): void {
    this.cache.delete(placeKey(place));
  }

  /**
   * The place's earlier messages for a new conversation, oldest first; empty when context is off,
   * the place cannot have any, or reading them failed or took too long (logged).
   */
  async load(msg: IncomingMessage, log: Logger): Promise<ContextMessage[]> {
    const { settings, clock } = this.o;
    const reader = msg.history;
    if (settings.mode === 'off' || settings.maxMessages <= 0 || reader === undefined) return [];
    const key = placeKey(msg.place);
    const req: HistoryRequest = { limit: settings.maxMessages + 1, beforeMessageId: msg.messageId };
    // One deadline for the record and every page: context never holds a reply up longer.
    const deadline = clock.now() + (settings.timeoutMs ?? HISTORY_TIMEOUT_MS);
    const recorded = await this.recorded(reader, req, log);
    let messages = this.cache.get(key, clock.now());
    if (messages === undefined) {
      const started = clock.now();
      const read = await this.read(reader, req, log, deadline);
      if (typeof read === 'string') {
        this.o.metrics?.contextSkipped(msg.place.platform, read);
        messages = [];
      } else {
        messages = read;
        this.cache.set(key, clock.now(), messages);
        log.debug({ messages: messages.length, ms: clock.now() - started }, 'read the place history for context');
      }
    }
    return cleanHistory(mergeNewestFirst(recorded, messages, req.limit), msg.messageId, settings.maxMessages);
  }

  /** The connector's record (names may still be looked up): bounded by the read's timeout too. */
  private async recorded(reader: HistoryReader, req: HistoryRequest, log: Logger): Promise<PlaceMessage[]> {
    if (reader.recorded === undefined) return [];
    const timeoutMs = this.o.settings.timeoutMs ?? HISTORY_TIMEOUT_MS;
    try {
      return await within(this.o.clock, timeoutMs, reader.recorded(req), () => {
        log.warn({ timeoutMs }, 'reading the recorded messages took too long; going on without them');
        return [];
      });
    } catch (err) {
      log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not read the recorded messages');
      return [];
    }
  }

  /**
   * The place's newest messages before the user's, page by page: a page from the old end
   * continues toward the newest (always, up to MAX_PAGES), a page from the newest end continues
   * only while fewer than asked are held. A later page skipped or failed keeps the pages so far;
   * a first one gives the reason the reply goes on without a read.
   */
  private async read(
    reader: HistoryReader,
    req: HistoryRequest,
    log: Logger,
    deadline: number,
  ): Promise<PlaceMessage[] | ContextSkipReason> {
    const { clock } = this.o;
    let held: PlaceMessage[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const left = deadline - clock.now();
      if (left <= 0) {
        if (page > 0) break;
        log.warn('the recorded messages took the whole time; answering without a read');
        return 'timeout';
      }
      const got = await this.readPage(reader, cursor === undefined ? req : { ...req, cursor }, left, log, page);
      if (typeof got === 'string') return page === 0 ? got : held;
      const p: PlaceHistoryPage = Array.isArray(got) ? { messages: got } : got;
      held = mergeNewestFirst(held, p.messages, req.limit);
      if (p.next === undefined) break;
      if (p.next.direction === 'older' && held.length >= req.limit) break;
      cursor = p.next.cursor;
    }
    return held;
  }

  /** One page, or why it was not read. */
  private async readPage(
    reader: HistoryReader,
    req: HistoryRequest,
    timeoutMs: number,
    log: Logger,
    page: number,
  ): Promise<PlaceMessage[] | PlaceHistoryPage | ContextSkipReason> {
    const first = page === 0;
    let over = false;
    let got: PlaceMessage[] | PlaceHistoryPage = [];
    // Context never waits for budget: the scheduler grants at once when the buckets can pay now and
    // nobody waits for them; otherwise it queues a waiter, which the abort right after takes out
    // again (NOT_NOW). The read goes on after a timeout (it was sent): its outcome, a 429 included,
    // still teaches the bucket it was granted in.
    const now = new AbortController();
    const read = this.o.scheduler
      .write(
        reader.buckets,
        'first',
        async () => {
          got = await reader.recent(req);
        },
        { signal: now.signal, attempts: 1 },
      )
      .then(
        () => got,
        (err: unknown) => {
          if (err === NOT_NOW) {
            log.info(
              { page },
              first
                ? 'the history budget cannot pay a read now; answering with the recorded messages only'
                : 'the history budget cannot pay the next page now; answering with the pages read',
            );
            return 'budget' as const;
          }
          const reason = err instanceof Error ? err.message : String(err);
          if (!over) log.warn({ err: reason, page }, 'could not read the place history; answering without the rest');
          return 'error' as const;
        },
      );
    now.abort(NOT_NOW);
    return within<PlaceMessage[] | PlaceHistoryPage | ContextSkipReason>(this.o.clock, timeoutMs, read, () => {
      over = true;
      log.warn({ timeoutMs, page }, 'reading the place history took too long; answering without the rest');
      return 'timeout' as const;
    });
  }
}

/** What `work` gives, or what `late()` gives once `ms` passed first (the work is not stopped). */
function within<T>(clock: Clock, ms: number, work: Promise<T>, late: () => T): Promise<T> {
  let timer: { clear(): void } | undefined;
  const timeout = new Promise<T>((resolve) => (timer = clock.setTimeout(() => resolve(late()), ms)));
  return Promise.race([work, timeout]).finally(() => timer?.clear());
}

/** Two lists of a place's messages (newest first) as one, each id once, the newest `limit`. */
export function mergeNewestFirst(
  a: readonly PlaceMessage[],
  b: readonly PlaceMessage[],
  limit: number,
): PlaceMessage[] {
  const byId = new Map<string, PlaceMessage>();
  for (const m of [...b, ...a]) byId.set(m.id, m);
  return [...byId.values()].sort((x, y) => compareIds(y.id, x.id)).slice(0, limit);
}

// ---- The record of seen messages (SeenMessages, the record HistoryReader.recorded reads): the
// messages the bridge received in a place's events, so the context of a new conversation can end
// with the messages just before the user's even when the platform caps or refuses a history read
// (Slack: 15 messages a call and one call a minute for apps outside the Marketplace). Kept in
// memory only, per process: a restart starts it empty, and with several replicas each holds the
// events it received. Bounded three ways: messages per place, places (least recently written
// dropped first), and age (a place idle longer than `ttlMs` is forgotten). Each entry's text is
// cut to `maxChars`. Connectors own one and store what they need to make a PlaceMessage later
// (Slack resolves names when the record is read).

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
