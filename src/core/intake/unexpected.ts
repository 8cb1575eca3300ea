import type { Logger } from 'pino';
import type { BridgeMetrics } from '../metrics-port.js';
import type { HandleResult, IncomingMessage } from '../ports.js';
import { isStoreUnavailable } from '../store-errors.js';
import { MESSAGES } from '../user-messages.js';
import type { Refusals } from './refusals.js';
import { HoldFullError } from './store-hold.js';

// A message that failed before its reply showed anything still gets a word: why, in its place.

/** What the word needs: where refusals go, the shutdown, the relay's notice. */
export interface UnexpectedParts {
  refusals: Refusals;
  shutdown: AbortSignal;
  metrics: BridgeMetrics;
  logger: Logger;
  notice(msg: IncomingMessage, text: string): Promise<void>;
}

/**
 * A store failure or a bug before anything was shown: the user still gets a word. A message the
 * store's outage held (store-hold.ts) and that cannot wait any longer: the hold is full (busy,
 * privately), the shutdown came first (restarting), or the outage outlasted the hold (storage).
 */
export async function tellUnexpected(p: UnexpectedParts, msg: IncomingMessage, err: unknown): Promise<HandleResult> {
  const { metrics, logger, shutdown } = p;
  const platform = msg.place.platform;
  if (err instanceof HoldFullError) {
    await p.refusals.tell(msg, MESSAGES.overloaded);
    return { status: 'queue_full' };
  }
  if (shutdown.aborted && err === shutdown.reason) {
    await msg.sink.clearWorking().catch(() => {});
    metrics.deliveryRefused(platform, 'restarting');
    await p.notice(msg, MESSAGES.restarting);
    return { status: 'interrupted' };
  }
  const storage = isStoreUnavailable(err);
  const reason = err instanceof Error ? err.message : String(err);
  if (storage) logger.error({ err: reason }, 'the store is unavailable; message answered with a notice');
  else logger.error({ err: reason }, 'reply failed unexpectedly');
  metrics.replyFailed(platform, storage ? 'storage' : 'internal');
  if (storage) await msg.sink.clearWorking().catch(() => {});
  await p.notice(msg, storage ? MESSAGES.storageDown : MESSAGES.error);
  return { status: 'failed' };
}
