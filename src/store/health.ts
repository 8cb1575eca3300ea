// Storage health, what both backends share. A database that cannot take writes (read-only file or folder, the file deleted
// or replaced under the process, disk full, a write lock held by someone else) must show on
// /readyz and must not drop messages silently. Two sources feed it: a periodic probe that checks
// the file is still the one opened and commits a real write, and every store operation, whose
// write errors mark the store unhealthy at once. Only a successful probe makes it healthy again.

/** Why the store cannot be used; doctor picks its hint from this. */
export type StoreFailureKind = 'readonly' | 'missing' | 'locked' | 'full' | 'io' | 'corrupt' | 'closed';

export interface StoreHealth {
  ok: boolean;
  /** Set when !ok: one line for /readyz, e.g. "not writable: attempt to write a readonly database". */
  reason?: string;
  kind?: StoreFailureKind;
}

/** The error code callers (the core) can test without importing the store. */
export const STORE_UNAVAILABLE = 'STORE_UNAVAILABLE';

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
    // The probe must never keep a process (a CLI, a test) alive on its own.
    t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};
