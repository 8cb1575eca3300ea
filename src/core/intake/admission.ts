import type { Logger } from 'pino';
import type { BridgeMetrics } from '../metrics-port.js';
import {
  type Clock,
  type EventStore,
  type HandleResult,
  type IncomingMessage,
  placeKey,
  type WorkspaceRef,
} from '../ports.js';
import { MESSAGES } from '../user-messages.js';
import { type FairSlots, partyOf, type PlaceOrder, type Ticket } from './place-order.js';
import type { Refusals } from './refusals.js';
import { isStoreUnavailable } from '../store-errors.js';
import { AlreadyHeldError, type StoreHold } from './store-hold.js';

// Whether a message is answered, in one step, in this order: not a bot's; the allowlist; any
// visible text (or files); not refused by the drain; the bounded queues (fair: one user may fill
// three quarters of them at most); its ticket in its place's queue (taken before the first await, so
// replies keep the order of handle() calls); the dedup record (once, by whichever replica
// records it first). Then, for a message that is neither a reset nor a Stop: the per-user limit,
// the length, room in its place's queue. A refused message is told why (refusals.ts).

const RESET_RE = /^reset$/i;
const STOP_RE = /^stop$/i;

export type Files = NonNullable<IncomingMessage['attachments']>;

/** A message past the first checks, its delivery recorded, with its ticket in its place's queue. */
export interface Admitted {
  msg: IncomingMessage;
  /** The text, trimmed. */
  text: string;
  files: Files;
  ticket: Ticket;
  /** `reset` (in a DM or mentioning the bot), `stop` (a typed Stop, no files), or an ordinary message. */
  kind: 'reset' | 'stop' | 'message';
}

export interface AdmissionDeps {
  allow: { slack: AllowList; discord: AllowList };
  userMessagesPerMinute: number;
  maxMessageChars: number | undefined;
  /** MAX_QUEUED_REPLIES: messages waiting for a slot or their place. */
  maxQueued: number;
  events: EventStore;
  metrics: BridgeMetrics;
  clock: Clock;
  logger: Logger;
  order: PlaceOrder;
  slots: FairSlots;
  refusals: Refusals;
  /** The bridge's own notice in the place (not a refusal). */
  notice(msg: IncomingMessage, text: string): Promise<unknown>;
  /** A store failure or a bug, a full hold, a held message the shutdown gave up on: the user still gets a word. */
  unexpected(msg: IncomingMessage, err: unknown): Promise<HandleResult>;
  /** Messages kept while the store cannot be used (store-hold.ts). */
  hold: StoreHold;
  /** The process's shutdown: a held message waits no longer. */
  shutdown: AbortSignal;
}

export class Admission {
  private readonly userLimits: UserRateLimiter;
  /** One user may fill three quarters of the slots' queue at most: the rest is for everyone else. */
  private readonly maxQueuedPerUser: number;

  constructor(private readonly d: AdmissionDeps) {
    this.userLimits = new UserRateLimiter(d.userMessagesPerMinute);
    this.maxQueuedPerUser = d.maxQueued - Math.floor(d.maxQueued / 4);
  }

  /** The checks up to the dedup record: the message admitted (with its ticket), or what became of it. */
  admit(msg: IncomingMessage): Promise<Admitted | HandleResult> {
    const d = this.d;
    const r = (status: HandleResult['status']) => Promise.resolve<HandleResult>({ status });
    if (msg.isFromBot) return r('ignored');
    if (!isAllowed(d.allow, msg)) return r('not_allowed');
    const text = msg.text.trim();
    const files = msg.attachments ?? [];
    // Files are content too: a file sent without a word is still a question.
    if (!hasVisibleText(text) && files.length === 0) return r('ignored');
    // Refusals before recordDelivery leave its delivery unrecorded: a platform retry may still be answered
    // (by another replica, say). A retry of an event already taken gets no notice.
    // An event that arrived before the drain began may have been acked: it is still answered.
    if (d.order.isDraining && !d.order.arrivedBeforeDrain(msg.arrival)) {
      return this.refuseUnrecorded(msg, MESSAGES.restarting, 'interrupted');
    }
    const waiting = d.order.waiting + d.slots.waiting;
    if (waiting >= d.maxQueued || d.slots.waitingFor(partyOf(msg)) >= this.maxQueuedPerUser) {
      d.logger.warn({ platform: msg.place.platform, waiting }, 'queue full: busy notice');
      return this.refuseUnrecorded(msg, MESSAGES.overloaded, 'queue_full');
    }
    // The ticket in the place's queue now, in handle() order.
    const ticket = d.order.enter(placeKey(msg.place), msg.eventId, msg.receivedAt, msg.arrival);
    const kind =
      RESET_RE.test(text) && (msg.isDm || msg.mentionsBot)
        ? 'reset'
        : STOP_RE.test(text) && files.length === 0
          ? 'stop'
          : 'message';
    return this.recordDelivery(msg).then(
      (fresh): Promise<Admitted | HandleResult> | Admitted => {
        if (fresh) return { msg, text, files, ticket, kind };
        d.order.leave(ticket);
        return r('duplicate');
      },
      (err: unknown) => {
        d.order.leave(ticket);
        return this.deliveryNotRecorded(msg, err);
      },
    );
  }

  /** The dedup record could not be written, even after the store's outage was waited out (store-hold.ts). */
  private deliveryNotRecorded(msg: IncomingMessage, err: unknown): Promise<HandleResult> {
    if (err instanceof AlreadyHeldError) {
      this.d.metrics.duplicateDelivery(msg.place.platform);
      return Promise.resolve({ status: 'duplicate' });
    }
    return this.d.unexpected(msg, err);
  }

  /** An ordinary message's limits: a refusal, or undefined when it goes on to its reply. */
  limits(a: Admitted): Promise<HandleResult> | undefined {
    const max = this.d.maxMessageChars;
    if (!this.userLimits.tryTake(`${a.msg.place.platform}:${a.msg.userId}`, this.d.clock.now())) {
      return this.refuse(a, MESSAGES.slowDown, 'user_rate_limited');
    }
    if (max !== undefined && a.text.length > max) return this.refuse(a, MESSAGES.tooLong(max), 'failed');
    if (a.ticket.local === undefined) return this.refuse(a, MESSAGES.queueFull, 'queue_full');
    return undefined;
  }

  /** Tell the user why the message is not answered (a limit or a full queue: a refusal), leave the queue. */
  refuse(a: Admitted, message: string, status: HandleResult['status']): Promise<HandleResult> {
    this.d.order.leave(a.ticket);
    const refusal = status === 'user_rate_limited' || status === 'queue_full';
    if (refusal) this.d.metrics.deliveryRefused(a.msg.place.platform, status);
    const told = refusal ? this.d.refusals.tell(a.msg, message) : this.d.notice(a.msg, message);
    return told.then((): HandleResult => ({ status }));
  }

  /**
   * Records the event; false (counted) when it was already taken. While the store cannot be used
   * the message is held (its ticket kept) and the record tried again once it is back.
   */
  private async recordDelivery(msg: IncomingMessage): Promise<boolean> {
    const mark = () => this.d.events.recordDelivery(msg.place.platform, msg.eventId, this.d.clock.now());
    const fresh = await mark().catch((err: unknown) => {
      if (!isStoreUnavailable(err)) throw err;
      return this.d.hold.after(err, msg, 'dedup', mark, this.d.shutdown);
    });
    if (!fresh) this.d.metrics.duplicateDelivery(msg.place.platform);
    return fresh;
  }

  /**
   * A refusal that leaves the event unrecorded (a retry may be answered, by another replica
   * say): the notice, unless the event was already taken, whose retry gets no word.
   */
  private async refuseUnrecorded(
    msg: IncomingMessage,
    text: string,
    status: HandleResult['status'],
  ): Promise<HandleResult> {
    const platform = msg.place.platform;
    const known = await Promise.resolve(this.d.events.wasDelivered(platform, msg.eventId)).catch(() => false);
    if (known) {
      this.d.metrics.duplicateDelivery(platform);
      return { status: 'duplicate' };
    }
    this.d.metrics.deliveryRefused(platform, status === 'interrupted' ? 'restarting' : 'queue_full');
    await this.d.refusals.tell(msg, text);
    return { status };
  }
}

// SLACK_ALLOWED_* / DISCORD_ALLOWED_*: the one allowlist check (the relay's, and the connectors'
// early one before they spend anything on a message). A workspace list checks every workspace
// the message comes from (`msg.workspaces`, else the origin's): each must be listed, by its own
// id or by its organisation's (a Slack Enterprise Grid org id admits the org's workspaces). A
// channel list accepts the channel or thread of either the origin or the place (a thread under an
// allowed channel is allowed).

export interface AllowList {
  workspaces: string[];
  channels: string[];
}

export const ALLOW_ALL: AllowList = { workspaces: [], channels: [] };

export type AllowInput = Pick<IncomingMessage, 'origin' | 'place' | 'workspaces'>;

export function isAllowed(allow: { slack: AllowList; discord: AllowList }, msg: AllowInput): boolean {
  const { origin, place } = msg;
  if (place.platform === 'test' || place.platform === 'playground') return true;
  const list = allow[place.platform];
  if (list.workspaces.length > 0) {
    const from: WorkspaceRef[] =
      msg.workspaces ?? (origin.workspaceId !== undefined ? [{ id: origin.workspaceId }] : []);
    const listed = (w: WorkspaceRef) =>
      list.workspaces.includes(w.id) || (w.organizationId !== undefined && list.workspaces.includes(w.organizationId));
    if (from.length === 0 || !from.every(listed)) return false;
  }
  if (list.channels.length > 0) {
    const ids = [origin.channelId, origin.threadId, place.channelId, place.threadId];
    if (!ids.some((id) => id !== undefined && list.channels.includes(id))) return false;
  }
  return true;
}

// "Does this message say anything?": a message of whitespace and invisible characters only
// (zero-width spaces and joiners, word joiner, BOM, bidi marks, variation selectors, Hangul
// fillers, the blank Braille pattern people use as "empty") is not a question, so it is dropped
// (no upstream call, nothing posted). White_Space covers Unicode spaces incl. NBSP;
// Default_Ignorable_Code_Point covers U+200B-U+200F, U+2060-U+206F, U+FEFF, U+00AD, U+034F,
// U+115F/U+1160, U+3164, U+FFA0, U+FE00-U+FE0F, tags, …
const INVISIBLE = /^[\p{White_Space}\p{Default_Ignorable_Code_Point}\p{Cc}\u2800]*$/u;

/** True when `text` has at least one character a reader would see. */
export function hasVisibleText(text: string): boolean {
  return !INVISIBLE.test(text);
}

// USER_MESSAGES_PER_MINUTE: a sliding window per platform user. Only accepted messages count.
// Users idle for a whole window are forgotten, so memory stays bounded by the active users.
export class UserRateLimiter {
  private readonly hits = new Map<string, number[]>();
  private lastSweep = 0;

  constructor(
    private readonly perWindow: number,
    private readonly windowMs = 60_000,
  ) {}

  /** Records a message for `key` and returns true, or returns false when the user is over the limit. */
  tryTake(key: string, now: number): boolean {
    this.sweep(now);
    const recent = (this.hits.get(key) ?? []).filter((t) => t > now - this.windowMs);
    if (recent.length >= this.perWindow) {
      this.hits.set(key, recent);
      return false;
    }
    recent.push(now);
    this.hits.set(key, recent);
    return true;
  }

  get size(): number {
    return this.hits.size;
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    for (const [key, times] of this.hits) {
      if ((times.at(-1) ?? 0) <= now - this.windowMs) this.hits.delete(key);
    }
  }
}
