import type { Logger } from 'pino';
import type { ContextMessage } from '../chat-port.js';
import {
  type Clock,
  type HistoryPage,
  type HistoryReader,
  type HistoryRequest,
  type IncomingMessage,
  type Place,
  type PlaceMessage,
  placeKey,
} from '../ports.js';
import type { BridgeMetrics, ContextSkipReason } from '../metrics-port.js';
import { errorOutcome, type WriteGrant, type WriteScheduler } from '../budget/scheduler.js';
import type { ContextMode } from './upstream-message.js';
import { MESSAGES } from '../user-messages.js';
import { hasVisibleText } from '../intake/admission.js';
import { compareIds } from './seen-messages.js';

// Thread context: when a new upstream conversation starts in a place that already holds
// messages (the bot mentioned midway through a thread, a conversation renewed), the place's
// recent history is sent along. It comes from two sources, merged by message id, newest kept:
// - the connector's record of the messages the bridge received in the place's events
//   (HistoryReader.recorded: in memory, bounded, free), so the context ends with the messages
//   just before the user's even when the platform caps or refuses a read;
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

/** How long one history read (all its pages) may hold a reply up (it never waits for budget: see grantNow). */
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

const NOT_NOW = new Error('history budget cannot pay now');

/**
 * A grant in the reader's buckets only if they can pay now. The scheduler grants at once when the
 * buckets have budget and nobody waits for them; otherwise it queues a waiter, which the abort
 * right after takes out again (rejecting with NOT_NOW). Context never waits for budget.
 */
async function grantNow(scheduler: WriteScheduler, reader: HistoryReader): Promise<WriteGrant | undefined> {
  const now = new AbortController();
  const pending = scheduler.acquire(reader.buckets, 'first', now.signal);
  now.abort(NOT_NOW);
  try {
    return await pending;
  } catch (err) {
    if (err === NOT_NOW) return undefined;
    throw err;
  }
}

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
    let timer: { clear(): void } | undefined;
    const late = new Promise<PlaceMessage[]>((resolve) => {
      timer = this.o.clock.setTimeout(() => {
        log.warn({ timeoutMs }, 'reading the recorded messages took too long; going on without them');
        resolve([]);
      }, timeoutMs);
    });
    try {
      return await Promise.race([reader.recorded(req), late]);
    } catch (err) {
      log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not read the recorded messages');
      return [];
    } finally {
      timer?.clear();
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
      const p: HistoryPage = Array.isArray(got) ? { messages: got } : got;
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
  ): Promise<PlaceMessage[] | HistoryPage | ContextSkipReason> {
    const first = page === 0;
    let grant: WriteGrant | undefined;
    try {
      grant = await grantNow(this.o.scheduler, reader);
    } catch (err) {
      log.warn({ err: err instanceof Error ? err.message : String(err) }, 'no history read; answering without it');
      return 'error';
    }
    if (grant === undefined) {
      log.info(
        { page },
        first
          ? 'the history budget cannot pay a read now; answering with the recorded messages only'
          : 'the history budget cannot pay the next page now; answering with the pages read',
      );
      return 'budget';
    }
    const granted = grant;
    return new Promise((resolve) => {
      let over = false;
      const timer = this.o.clock.setTimeout(() => {
        over = true;
        log.warn({ timeoutMs, page }, 'reading the place history took too long; answering without the rest');
        resolve('timeout');
      }, timeoutMs);
      // The read goes on after a timeout (it was sent): its outcome still teaches the budget.
      reader.recent(req).then(
        (messages) => {
          timer.clear();
          granted.done();
          resolve(messages);
        },
        (err: unknown) => {
          timer.clear();
          // Through the grant like every write: a 429 blocks and teaches the bucket it was granted in.
          granted.done(errorOutcome(err));
          if (!over) {
            log.warn(
              { err: err instanceof Error ? err.message : String(err), page },
              'could not read the place history; answering without the rest',
            );
          }
          resolve('error');
        },
      );
    });
  }
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

// ---- what of a place's history is context ----

const PLACEHOLDER = 987_654_321;

/** Text as compared with the bridge's notices: formatting, entities and spacing aside. */
function normalize(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/[\u200B_*~`]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A notice template as a pattern over normalized text; numbers it names may be any. */
function templatePattern(template: string): string {
  return escapeRegExp(normalize(template)).replace(String(PLACEHOLDER), '\\d+');
}

/** Every text of MESSAGES, with and without a number where it takes one. */
function noticeTemplates(): string[] {
  return Object.values(MESSAGES).flatMap((v: unknown) => {
    if (typeof v === 'string') return [v];
    if (typeof v === 'function') {
      const f = v as (n?: number) => string;
      return [f(), f(PLACEHOLDER)];
    }
    return [];
  });
}

const WHOLE_NOTICES = noticeTemplates().map((t) => new RegExp(`^${templatePattern(t)}$`));
const RESET_NOTICE = normalize(MESSAGES.reset);
/** Notes the bridge puts before a reply's text. */
const PREFIX_NOTES = [MESSAGES.renewed, MESSAGES.renewedWithContext].map(
  (t) => new RegExp(`^\\s*[_*]*${templatePattern(t)}[_*]*\\s*`),
);
/** Notes the bridge appends to a reply's text. */
const SUFFIX_NOTES = [
  MESSAGES.interrupted,
  MESSAGES.streamError,
  MESSAGES.replyDeadline(PLACEHOLDER),
  MESSAGES.replyTooLong(),
  MESSAGES.replyTooLong(PLACEHOLDER),
].map((t) => new RegExp(`\\s*[_*]*${templatePattern(t)}[_*]*\\s*$`));

/** The bridge's own text without its notes; undefined when it is a notice and nothing else. */
export function assistantText(text: string): string | undefined {
  const n = normalize(text);
  if (WHOLE_NOTICES.some((re) => re.test(n))) return undefined;
  let out = text;
  for (const re of PREFIX_NOTES) out = out.replace(re, '');
  for (const re of SUFFIX_NOTES) out = out.replace(re, '');
  out = out.trim();
  return hasVisibleText(out) ? out : undefined;
}

/**
 * A place's messages (newest first, as read) → the context of a new conversation, oldest first:
 * without the user's current message, without the bridge's notices and notes, and nothing from
 * before the last `reset` of the place (its notice marks where the new conversation began).
 */
export function cleanHistory(newestFirst: readonly PlaceMessage[], currentId: string, max: number): ContextMessage[] {
  const out: ContextMessage[] = [];
  for (const m of newestFirst) {
    if (out.length >= max) break;
    if (m.id === currentId) continue;
    let text: string | undefined = m.text;
    if (m.role === 'assistant') {
      if (normalize(m.text) === RESET_NOTICE) break;
      text = assistantText(m.text);
      if (text === undefined) continue;
    } else if (!hasVisibleText(text)) {
      continue;
    }
    out.push({ author: m.author, role: m.role, text: text.trim(), ts: m.ts });
  }
  return out.reverse();
}
