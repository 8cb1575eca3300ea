import type { Logger } from 'pino';
import type { WriteScheduler } from '../budget/write-scheduler.js';
import { partyOf } from './place-order.js';
import { type Clock, type IncomingMessage, PlatformRateLimitedError, type RefusalChannel } from '../ports.js';

// Why a message is not answered (over the per-user limit, busy, restarting), told to its asker:
// privately where the platform allows (ReplySink.refusal); otherwise publicly, at most once per
// user per minute, so a flood of refused messages is not answered by a flood of notices. Notices
// have the lowest priority in the scheduler: they never take a write ahead of an answer. A notice
// that cannot go within NOTICE_WAIT_MS (429s included) is dropped (logged).

export const PUBLIC_NOTICE_EVERY_MS = 60_000;
const NOTICE_WAIT_MS = 60_000;

export type RefusalOutcome = 'private' | 'public' | 'suppressed' | 'failed';

export interface RefusalDeps {
  scheduler: WriteScheduler;
  clock: Clock;
  logger: Logger;
}

export class Refusals {
  /** Party → when its last public notice was sent; entries older than a minute are swept. */
  private readonly lastPublic = new Map<string, number>();
  private lastSweep = 0;

  constructor(private readonly d: RefusalDeps) {}

  /** Tell `msg`'s asker `text`; resolves when it was sent, suppressed or given up. Never throws. */
  async tell(msg: IncomingMessage, text: string): Promise<RefusalOutcome> {
    const sink = msg.sink;
    const channel: RefusalChannel = sink.refusal ?? {
      private: false,
      buckets: sink.buckets('post'),
      send: (t) => sink.post(t, { final: true, part: 0 }),
    };
    const party = partyOf(msg);
    if (!channel.private && !this.mayPost(party)) {
      this.d.logger.debug({ platform: msg.place.platform }, 'refusal notice suppressed: one a minute per user');
      return 'suppressed';
    }
    const give = new AbortController();
    const timer = this.d.clock.setTimeout(() => give.abort(new Error('notice waited too long')), NOTICE_WAIT_MS);
    try {
      // A 429 goes back to the scheduler and the notice goes again when it allows (WriteScheduler.write).
      await this.d.scheduler.write(channel.buckets, 'notice', () => channel.send(text), { signal: give.signal, party });
      return channel.private ? 'private' : 'public';
    } catch (err) {
      if (err instanceof PlatformRateLimitedError) this.d.logger.warn('could not tell a refusal: rate limited');
      else this.d.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not tell a refusal');
      return 'failed';
    } finally {
      timer.clear();
    }
  }

  /** At most one public notice per party a minute: true (and counted) if this one may go. */
  private mayPost(party: string): boolean {
    const now = this.d.clock.now();
    if (now - this.lastSweep >= PUBLIC_NOTICE_EVERY_MS) {
      this.lastSweep = now;
      for (const [p, at] of this.lastPublic) if (now - at >= PUBLIC_NOTICE_EVERY_MS) this.lastPublic.delete(p);
    }
    const last = this.lastPublic.get(party);
    if (last !== undefined && now - last < PUBLIC_NOTICE_EVERY_MS) return false;
    this.lastPublic.set(party, now);
    return true;
  }

  /** Parties remembered (tests: memory stays bounded). */
  get size(): number {
    return this.lastPublic.size;
  }
}
