import type { StoreFailure, StoreHealth, Timers } from '../health.js';

// The PostgreSQL store's health: like SQLite's monitor (src/store/sqlite/health.ts) but asynchronous.
// A periodic probe commits a real write; any operation that fails with a storage failure marks
// the store unhealthy at once, and only a successful probe makes it healthy again. Unhealthy, it
// re-probes soon and backs off up to the normal interval.

export interface AsyncHealthMonitorOptions {
  /** Commits a real write; rejects when the database cannot take one. */
  write(): Promise<void>;
  classify(err: unknown): StoreFailure | undefined;
  intervalMs: number;
  retryMs: number;
  timers: Timers;
}

export interface AsyncHealthMonitor {
  health(): StoreHealth;
  probe(): Promise<StoreHealth>;
  report(err: unknown): StoreFailure | undefined;
  onChange(listener: (h: StoreHealth) => void): () => void;
  start(): void;
  stop(): void;
}

export function createAsyncHealthMonitor(opts: AsyncHealthMonitorOptions): AsyncHealthMonitor {
  const listeners = new Set<(h: StoreHealth) => void>();
  const retryMs = Math.min(opts.retryMs, opts.intervalMs || Infinity);
  let current: StoreHealth = { ok: true };
  let failedProbes = 0;
  let timer: unknown;
  let stopped = false;
  let running: Promise<StoreHealth> | undefined;

  const set = (next: StoreHealth) => {
    const changed = next.ok !== current.ok || next.reason !== current.reason;
    current = next;
    if (changed) for (const l of listeners) l(next);
  };

  const probeOnce = async (): Promise<StoreHealth> => {
    if (stopped) return current;
    try {
      await opts.write();
      if (!stopped) set({ ok: true });
    } catch (err) {
      if (!stopped) {
        const message = err instanceof Error ? err.message : String(err);
        set(opts.classify(err) ?? { ok: false, kind: 'io', reason: `probe failed: ${message}` });
      }
    }
    return current;
  };
  // One probe at a time: callers arriving meanwhile share its answer.
  const probe = (): Promise<StoreHealth> => {
    running ??= probeOnce().finally(() => {
      running = undefined;
    });
    return running;
  };

  const schedule = () => {
    if (stopped || opts.intervalMs <= 0) return;
    if (timer !== undefined) opts.timers.clearTimeout(timer);
    const delay = current.ok ? opts.intervalMs : Math.min(opts.intervalMs, retryMs * 2 ** Math.min(failedProbes, 16));
    timer = opts.timers.setTimeout(() => {
      timer = undefined;
      void probe().then((h) => {
        failedProbes = h.ok ? 0 : failedProbes + 1;
        schedule();
      });
    }, delay);
  };

  return {
    health: () => current,
    probe,
    report(err) {
      const bad = opts.classify(err);
      if (!bad || stopped) return undefined;
      const wasOk = current.ok;
      set(bad);
      if (wasOk) {
        failedProbes = 0;
        schedule();
      }
      return bad;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    start: schedule,
    stop() {
      if (timer !== undefined) opts.timers.clearTimeout(timer);
      timer = undefined;
      set({ ok: false, kind: 'closed', reason: 'closed: the database has been closed' });
      stopped = true;
    },
  };
}
