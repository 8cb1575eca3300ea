import type { Logger } from 'pino';
import type { BridgeMetrics } from '../metrics-port.js';
import type { Clock, IncomingMessage } from '../ports.js';
import { isStoreUnavailable, type StoreHealthSource } from '../store-errors.js';

// Messages kept while the store cannot be used (issue 37). An event may already be acked when
// its first store call (the dedup record, the conversation, the reply in flight, the place's
// queue) fails: Discord's gateway never delivers it again, and a Slack event acked with 200 is
// not retried. So the message is HELD, in memory, with its ticket in its place's queue (the place's later
// messages wait behind it, in order), shows the working indicator, and its store call is tried
// again once the store is back: when the store's own health check says so (it re-checks within
// a few seconds), else on a backoff of its own. The hold is bounded (MAX_HELD_EVENTS messages, each
// HOLD_MAX_MS at most); a message that finds it full is refused with the busy notice. A message leaves the hold answered, refused or
// interrupted by the shutdown; each step is one log line, the gauge bridge_held_events counts
// the messages held now.

/** First wait before a held call is tried again; doubles up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2_000;
/** Held this long, a message is given up with the storage notice: an outage of hours is not waited out. */
export const HOLD_MAX_MS = 10 * 60_000;

/** A held message found no room: the caller tells the busy notice. */
export class HoldFullError extends Error {
  override readonly name = 'HoldFullError';
}

/** Another delivery of the same event is held already (a platform's retry): answered once, by that one. */
export class AlreadyHeldError extends Error {
  override readonly name = 'AlreadyHeldError';
}

export interface StoreHoldDeps {
  /** Messages held at once at most; past it a message is refused (busy notice). */
  max: number;
  clock: Clock;
  logger: Logger;
  metrics: BridgeMetrics;
  /** The store's health (the relay's deps): a held call is tried again once it says ok. */
  health?: StoreHealthSource | undefined;
  /** Default HOLD_MAX_MS. */
  maxHoldMs?: number | undefined;
}

export class StoreHold {
  private readonly heldNow = new Map<string, number>();

  constructor(private readonly d: StoreHoldDeps) {}

  /** Messages held now. */
  get size(): number {
    return this.heldNow.size;
  }

  /**
   * `op` failed with `first` because the store cannot be used (isStoreUnavailable): the message
   * is held and `op` tried again once the store is back, until it settles otherwise. Rejects with
   * HoldFullError when the hold has no room, with the shutdown's reason when `signal` aborts
   * while held, with the store's error after HOLD_MAX_MS, and with `op`'s other errors. (Called
   * only after a failure: a message's ordinary path never runs this file.)
   */
  async after<T>(
    first: unknown,
    msg: IncomingMessage,
    what: string,
    op: () => Promise<T>,
    signal: AbortSignal,
  ): Promise<T> {
    // Two deliveries of one event (a platform's retry, a mention's two events) both held at the
    // dedup step: one is answered. At a later step the message passed the dedup record: its own key.
    const key = what === 'dedup' ? keyOf(msg) : `${keyOf(msg)}#${what}`;
    if (this.heldNow.has(key)) throw new AlreadyHeldError();
    const heldSince = this.take(msg, key, what, first);
    const giveUpAt = heldSince + (this.d.maxHoldMs ?? HOLD_MAX_MS);
    void msg.sink.showWorking().catch(() => {});
    try {
      for (let attempt = 0; ; attempt++) {
        await this.untilBack(attempt, signal, giveUpAt);
        try {
          const result = await op();
          this.released(msg, heldSince);
          return result;
        } catch (err) {
          if (!isStoreUnavailable(err)) throw err;
          if (this.d.clock.now() >= giveUpAt) {
            this.d.logger.error(
              { platform: msg.place.platform, eventId: msg.eventId, heldMs: this.d.clock.now() - heldSince },
              'store still unavailable: held message given up with the storage notice',
            );
            throw err;
          }
        }
      }
    } finally {
      this.leave(key);
    }
  }

  /** The message is held (when it was), or refused because the hold is full (HoldFullError). */
  private take(msg: IncomingMessage, key: string, what: string, err: unknown): number {
    const { platform } = msg.place;
    const reason = err instanceof Error ? err.message : String(err);
    if (this.heldNow.size >= this.d.max) {
      this.d.metrics.deliveryRefused(platform, 'hold_full');
      this.d.logger.warn(
        { platform, eventId: msg.eventId, held: this.heldNow.size, err: reason },
        'store unavailable and the hold is full: message refused with the busy notice',
      );
      throw new HoldFullError(reason);
    }
    const at = this.d.clock.now();
    this.heldNow.set(key, at);
    this.d.metrics.heldEvents(this.heldNow.size);
    this.d.logger.warn(
      { platform, eventId: msg.eventId, held: this.heldNow.size, step: what, err: reason },
      'store unavailable: message held until it is back',
    );
    return at;
  }

  private released(msg: IncomingMessage, since: number): void {
    this.d.logger.info(
      { platform: msg.place.platform, eventId: msg.eventId, heldMs: this.d.clock.now() - since },
      'store back: held message released',
    );
  }

  private leave(key: string): void {
    this.heldNow.delete(key);
    this.d.metrics.heldEvents(this.heldNow.size);
  }

  /**
   * Resolves when a held call should be tried again: after the backoff, and (with a health
   * source) once the store says it is healthy, or at `giveUpAt` (for a last try). Rejects when
   * `signal` aborts first.
   */
  private untilBack(attempt: number, signal: AbortSignal, giveUpAt: number): Promise<void> {
    const health = this.d.health;
    const wait = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.min(attempt, 10));
    return new Promise<void>((resolve, reject) => {
      let timer: { clear(): void } | undefined;
      let unsubscribe: (() => void) | undefined;
      const done = (err?: unknown) => {
        timer?.clear();
        unsubscribe?.();
        signal.removeEventListener('abort', onAbort);
        if (err === undefined) resolve();
        else reject(err instanceof Error ? err : new Error(String(err)));
      };
      const onAbort = () => done(signal.reason ?? new Error('shutting down'));
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      timer = this.d.clock.setTimeout(() => {
        timer = undefined;
        if (health === undefined || health.health().ok) {
          done();
          return;
        }
        // Until the store's own check finds it back; the backoff again then bounds the retry
        // (a store that says ok but still fails is tried at most every RETRY_MAX_MS).
        unsubscribe = health.onHealthChange((h) => {
          if (h.ok) done();
        });
        timer = this.d.clock.setTimeout(() => done(), Math.max(0, giveUpAt - this.d.clock.now()));
        // It may have come back between the check and the subscription.
        if (health.health().ok) done();
      }, wait);
    });
  }
}

const keyOf = (msg: IncomingMessage) => `${msg.place.platform}:${msg.eventId}`;
