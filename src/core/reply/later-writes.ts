import type { Logger } from 'pino';

export interface LaterWrites {
  (what: string, fn: () => Promise<unknown>): void;
  /** Resolves once every write queued so far is done (or failed and was logged). */
  settled(): Promise<void>;
}

/**
 * A reply's bookkeeping writes (progress, ids, the end), one after another in the order queued,
 * without the reply waiting for them: a database round trip must not delay the user's text.
 * Crash-repair bookkeeping must not break a reply the user is already seeing either: a store that
 * fails mid-reply (it went read-only, the disk filled) costs the repair record, not the reply.
 */
export function laterWrites(log: Logger): LaterWrites {
  let tail: Promise<void> = Promise.resolve();
  const queue = (what: string, fn: () => Promise<unknown>) => {
    tail = tail.then(fn).then(
      () => {},
      (err: unknown) => log.warn({ err: err instanceof Error ? err.message : String(err) }, `${what} failed`),
    );
  };
  return Object.assign(queue, { settled: () => tail });
}
