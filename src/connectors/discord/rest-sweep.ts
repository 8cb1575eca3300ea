import type { REST } from 'discord.js';

// discord.js keeps a request queue ("handler") per route and channel: two or three per thread.
// Its own sweep (handlerSweepInterval) drops only `inactive` handlers, and a handler is not
// inactive while the whole client is at Discord's global limit (50 requests a second), which a
// busy bridge reaches every second: a sweep that falls inside such a second drops nothing, and
// under steady load that is every sweep, so the handlers of every thread ever answered stayed
// (issue 31: about 0.7 MB per 1,000 threads). This sweep runs once the global second is over,
// when `inactive` says only "queue empty and the route's own limit not hit".

/** How often idle handlers are dropped. */
export const REST_SWEEP_MS = 60_000;

/**
 * Drops the idle handlers now, unless the client is at its global limit: then nothing is dropped
 * and the answer says how long until that limit's second is over (sweep again then).
 */
export function sweepIdleHandlers(rest: REST, now: number = Date.now()): { swept: number; retryInMs?: number } {
  if (rest.globalRemaining <= 0 && now < rest.globalReset) {
    return { swept: 0, retryInMs: rest.globalReset - now + 1 };
  }
  return { swept: rest.handlers.sweep((h) => h.inactive) };
}

/** Sweeps every REST_SWEEP_MS (and again after a global second, when one was in the way). */
export function startRestSweep(rest: REST): { stop(): void } {
  let retry: NodeJS.Timeout | undefined;
  const run = () => {
    const r = sweepIdleHandlers(rest);
    if (r.retryInMs !== undefined) retry = setTimeout(run, r.retryInMs).unref();
  };
  const every = setInterval(run, REST_SWEEP_MS).unref();
  return {
    stop() {
      clearInterval(every);
      if (retry !== undefined) clearTimeout(retry);
    },
  };
}
