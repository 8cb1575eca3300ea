import { STORE_UNAVAILABLE } from '../core/store-errors.js';
import type { Logger } from '../logger.js';

// Storage health, what both backends share. A database that cannot take writes (read-only file or folder, the file deleted
// or replaced under the process, disk full, a write lock held by someone else) must show on
// /readyz and must not drop messages silently. Two sources feed it: a periodic check that makes sure
// the file is still the one opened and commits a real write, and every store operation, whose
// write errors mark the store unhealthy at once. Only a successful check makes it healthy again.

/** Why the store cannot be used; doctor picks its hint from this. */
export type StoreFailureKind = 'readonly' | 'missing' | 'locked' | 'full' | 'io' | 'corrupt' | 'closed';

export interface StoreHealth {
  ok: boolean;
  /** Set when !ok: one line for /readyz, e.g. "not writable: attempt to write a readonly database". */
  reason?: string;
  kind?: StoreFailureKind;
}

/** The error code callers (the core) test without importing the store: the core's own. */
export { STORE_UNAVAILABLE };

/**
 * A store operation failed because the database cannot be used right now (see `kind`), not because
 * of the data. Recognisable by `instanceof` or by `code === 'STORE_UNAVAILABLE'`.
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  readonly code = STORE_UNAVAILABLE;
  constructor(
    readonly kind: StoreFailureKind,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(reason, options);
  }
}

const PREFIX: Record<StoreFailureKind, string> = {
  readonly: 'not writable',
  missing: 'missing',
  locked: 'locked',
  full: 'disk full',
  io: 'I/O error',
  corrupt: 'corrupt',
  closed: 'closed',
};

/** An unhealthy StoreHealth, with its kind and reason always set. */
export interface StoreFailure extends StoreHealth {
  ok: false;
  kind: StoreFailureKind;
  reason: string;
}

export function failure(kind: StoreFailureKind, detail: string): StoreFailure {
  return { ok: false, kind, reason: `${PREFIX[kind]}: ${detail}` };
}

export type Timers = {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
};

export const nodeTimers: Timers = {
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    // The check must never keep a process (a CLI, a test) alive on its own.
    t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** How a store is checked and what it logs: the same options for both backends' open. */
export interface StoreCheckOptions {
  logger?: Logger | undefined;
  /** Between health checks. 0: no periodic check (check() still works). Default 5000. */
  checkIntervalMs?: number | undefined;
  /** First re-check after a failure, doubling up to checkRetryMaxMs. Default 250. */
  checkRetryMs?: number | undefined;
  /**
   * Re-checks of an unhealthy store are at most this far apart (and never further than
   * checkIntervalMs): the messages an outage held wait for its return (core/intake/store-hold.ts),
   * so it must be seen within seconds. Default 2000.
   */
  checkRetryMaxMs?: number | undefined;
  timers?: Timers | undefined;
}

export interface HealthMonitorOptions extends StoreCheckOptions {
  /**
   * The backend's check: looks at the database and commits a real write, resolving to what it found
   * (it never rejects; a failure is an unhealthy StoreHealth).
   */
  check(): Promise<StoreHealth>;
  /** Which errors of a store operation mean the database as a whole is unusable. */
  classify(err: unknown): StoreFailure | undefined;
}

export interface HealthMonitor {
  health(): StoreHealth;
  /** Checks now; callers arriving while a check runs share its answer. */
  check(): Promise<StoreHealth>;
  /** What a check run by the backend itself found (SQLite checks synchronously at open). */
  record(health: StoreHealth): StoreHealth;
  /** A store operation failed with `err`: when it is a storage failure, unhealthy at once. */
  report(err: unknown): StoreFailure | undefined;
  /**
   * A synchronous store call (SQLite's) as a promise. A storage failure is reported here and
   * becomes a StoreUnavailableError; while the store is unhealthy a `write` fails at once without
   * touching the database, so a held lock costs the event loop one busy timeout per check, not one
   * per message.
   */
  guard<A extends unknown[], R>(fn: (...args: A) => R, write?: boolean): (...args: A) => Promise<R>;
  onChange(listener: (health: StoreHealth) => void): () => void;
  start(): void;
  /** Stops checking and reports 'closed'. */
  stop(): void;
}

/**
 * The one health monitor both backends use, each giving it its check. A periodic check commits a
 * real write; any operation that fails with a storage failure marks the store unhealthy at once,
 * and only a successful check makes it healthy again. Unhealthy, it re-checks soon (off the hot
 * path) and backs off up to the normal interval.
 */
export function createHealthMonitor(opts: HealthMonitorOptions): HealthMonitor {
  const intervalMs = opts.checkIntervalMs ?? 5000;
  const retryMs = Math.min(opts.checkRetryMs ?? 250, intervalMs || Infinity);
  const retryMaxMs = Math.min(opts.checkRetryMaxMs ?? 2000, intervalMs || Infinity);
  const timers = opts.timers ?? nodeTimers;
  const log = opts.logger;
  const listeners = new Set<(h: StoreHealth) => void>([
    (h) => {
      if (h.ok) log?.info('database writable again');
      else if (h.kind !== 'closed') log?.error({ reason: h.reason }, 'database unavailable');
    },
  ]);
  let current: StoreHealth = { ok: true };
  let failedChecks = 0;
  let timer: unknown;
  let stopped = false;
  let running: Promise<StoreHealth> | undefined;

  const set = (next: StoreHealth) => {
    if (stopped) return current;
    const changed = next.ok !== current.ok || next.reason !== current.reason;
    current = next;
    if (changed) for (const l of listeners) l(next);
    return current;
  };

  const check = (): Promise<StoreHealth> => {
    running ??= opts
      .check()
      .then(set)
      .finally(() => {
        running = undefined;
      });
    return running;
  };

  const schedule = () => {
    if (stopped || intervalMs <= 0) return;
    if (timer !== undefined) timers.clearTimeout(timer);
    const delay = current.ok ? intervalMs : Math.min(retryMaxMs, retryMs * 2 ** Math.min(failedChecks, 16));
    timer = timers.setTimeout(() => {
      timer = undefined;
      void check().then((h) => {
        failedChecks = h.ok ? 0 : failedChecks + 1;
        schedule();
      });
    }, delay);
  };

  const report = (err: unknown): StoreFailure | undefined => {
    const bad = opts.classify(err);
    if (!bad || stopped) return undefined;
    const wasOk = current.ok;
    set(bad);
    if (wasOk) {
      failedChecks = 0;
      schedule();
    }
    return bad;
  };

  return {
    health: () => current,
    check,
    record: set,
    report,
    guard:
      <A extends unknown[], R>(fn: (...args: A) => R, write = false) =>
      async (...args: A): Promise<R> => {
        if (write && !current.ok) {
          throw new StoreUnavailableError(current.kind ?? 'io', current.reason ?? 'database unavailable');
        }
        try {
          return fn(...args);
        } catch (err) {
          // A closed store's monitor no longer records failures; the error is still a storage one.
          const bad = report(err) ?? opts.classify(err);
          if (!bad) throw err;
          throw new StoreUnavailableError(bad.kind, bad.reason, { cause: err });
        }
      },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    start: schedule,
    stop() {
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
      set(failure('closed', 'the database has been closed'));
      stopped = true;
    },
  };
}

/** A synchronous repository's methods, each answering a promise. */
export type Guarded<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<R> : never;
};

/**
 * Every method of a synchronous repository guarded by the monitor (`guard`); the ones named in
 * `writes` fail at once while the store is unhealthy.
 */
export function guardEach<T extends { [K in keyof T]: (...args: never[]) => unknown }>(
  monitor: HealthMonitor,
  repo: T,
  writes: readonly (keyof T)[],
): Guarded<T> {
  const out: Partial<Record<keyof T, unknown>> = {};
  for (const name of Object.keys(repo) as (keyof T)[]) {
    // The repositories' methods are closures over their statements: calling one detached is safe.
    out[name] = monitor.guard(repo[name] as unknown as (...args: unknown[]) => unknown, writes.includes(name));
  }
  return out as Guarded<T>;
}
