import type { Logger } from 'pino';
import { scrubSecrets } from '../../scrub.js';
import { PlatformRateLimitedError, type ReplySink } from '../ports.js';
import { errorOutcome, okOutcome, type WriteScheduler } from '../budget/scheduler.js';

// A short message from the bridge itself (slow down, too long, reset done): one final post,
// through the same scheduler as replies. Best effort: a failure is logged, never thrown.

export async function postNotice(
  sink: ReplySink,
  text: string,
  scheduler: WriteScheduler,
  logger: Logger,
): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const grant = await scheduler.acquire(sink.buckets('post'), 'final');
      try {
        grant.done(okOutcome(await sink.post(scrubSecrets(text), { final: true, part: 0 })));
      } catch (err) {
        grant.done(errorOutcome(err));
        throw err;
      }
      return;
    } catch (err) {
      // A 429 went to the scheduler with the grant: try again when it allows.
      if (err instanceof PlatformRateLimitedError) continue;
      logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not post a notice');
      return;
    }
  }
  logger.warn('could not post a notice: rate limited');
}
