import type { Logger } from 'pino';
import { scrubSecrets } from '../../scrub.js';
import { PlatformRateLimitedError, type ReplySink } from '../ports.js';
import type { WriteScheduler } from '../budget/write-scheduler.js';

// A short message from the bridge itself (slow down, too long, reset done): one final post,
// through the same scheduler as replies. Best effort: a failure is logged, never thrown.

export async function postNotice(
  sink: ReplySink,
  text: string,
  scheduler: WriteScheduler,
  logger: Logger,
): Promise<void> {
  try {
    // A 429 goes back to the scheduler and the post goes again when it allows (WriteScheduler.write).
    await scheduler.write(sink.buckets('post'), 'final', () => sink.post(scrubSecrets(text), { final: true, part: 0 }));
  } catch (err) {
    if (err instanceof PlatformRateLimitedError) logger.warn('could not post a notice: rate limited');
    else logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not post a notice');
  }
}
