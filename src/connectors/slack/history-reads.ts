import type { BucketRef } from '../../core/ports.js';
import { historyBucket, type SlackLimits, translateSlackError } from './rate-limits.js';

// Slack's history methods (conversations.replies/.history) share one budget per workspace, which
// the scheduler keeps as the history bucket (thread context reads pay it, history.ts). The reads
// the connector makes on its own (is the bot in this thread? has this DM a message yet?) pay the
// same bucket through the scheduler: otherwise they spend Slack's budget unseen and the context
// reads meet 429s the scheduler never planned for (commercial apps outside the Marketplace get
// one call a minute). A 429 on such a read teaches the bucket like any other.

/** The scheduler as these reads use it (core WriteScheduler.write). */
export interface ReadScheduler {
  write(
    buckets: readonly BucketRef[],
    priority: 'first',
    send: () => Promise<void>,
    opts?: { signal?: AbortSignal; attempts?: number },
  ): Promise<void>;
}

/** How long a read waits for the budget at most; then it fails (the caller's "unsure"). */
export const HISTORY_READ_WAIT_MS = 10_000;

export class HistoryReads {
  constructor(
    private readonly limits: SlackLimits,
    /** Absent (tests of one piece): reads go straight to Slack. */
    private readonly scheduler: ReadScheduler | undefined,
    private readonly waitMs = HISTORY_READ_WAIT_MS,
  ) {}

  /** One history call of `team`, paid from its history bucket. */
  async read<T>(team: string, call: () => Promise<T>): Promise<T> {
    if (this.scheduler === undefined) return call();
    const bucket = historyBucket(this.limits, team);
    let out: { value: T } | undefined;
    await this.scheduler.write(
      [bucket],
      'first',
      async () => {
        try {
          out = { value: await call() };
        } catch (err) {
          throw translateSlackError(err, bucket.key);
        }
      },
      { signal: AbortSignal.timeout(this.waitMs), attempts: 2 },
    );
    if (out === undefined) throw new Error('history read not made');
    return out.value;
  }
}
