import { seededRandom } from '../fakes/chaos.js';
import { type StoreHealth, StoreUnavailableError } from '../../src/store/health.js';

// The store fault mode (issue 37): a wrapper of a store's ports (SQLite, PostgreSQL, the memory
// store) where every call can fail as an outage would, with the StoreUnavailableError the real
// stores throw when the database cannot be used. A test toggles an outage (`down()` / `up()`:
// every call fails meanwhile, and health() says so, as the store's own monitor would), or turns
// on seeded blips (`blips(rate)`: each call fails with that chance, health untouched, like a
// connection cut under one statement). What the wrapped store says about itself (health,
// onHealthChange, close, backend, location) is passed through, merged with the injected outage.

/** Methods of the store object itself that are not ports: passed through as they are. */
const OWN = new Set(['health', 'onHealthChange', 'check', 'close', 'isOpen', 'backend', 'location', 'signals']);

export class StoreFaults {
  private outage: string | undefined;
  private rate = 0;
  private random: () => number;
  private readonly listeners = new Set<(h: StoreHealth) => void>();
  /** Calls through the wrapper, and those failed (for a report). */
  readonly counts = { calls: 0, failed: 0 };

  constructor(readonly seed = 1) {
    this.random = seededRandom(seed);
  }

  /** Every call fails from now on, until up(); health says unreachable. */
  down(reason = 'unreachable: injected outage'): void {
    this.outage = reason;
    this.emit({ ok: false, kind: 'io', reason });
  }

  up(): void {
    if (this.outage === undefined) return;
    this.outage = undefined;
    this.emit({ ok: true });
  }

  get isDown(): boolean {
    return this.outage !== undefined;
  }

  /** Each call fails with chance `rate` (seeded), the store staying healthy otherwise. */
  blips(rate: number, seed = this.seed): void {
    this.rate = rate;
    this.random = seededRandom(seed);
  }

  /** The injected outage, if any (health merges it with the store's own). */
  injected(): StoreHealth | undefined {
    return this.outage === undefined ? undefined : { ok: false, kind: 'io', reason: this.outage };
  }

  onChange(listener: (h: StoreHealth) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The error this call fails with, or undefined to let it through. */
  fault(what: string): StoreUnavailableError | undefined {
    this.counts.calls++;
    const blip = this.rate > 0 && this.random() < this.rate;
    if (this.outage === undefined && !blip) return undefined;
    this.counts.failed++;
    return new StoreUnavailableError('io', `${this.outage ?? 'unreachable: injected blip'} (${what})`);
  }

  private emit(h: StoreHealth): void {
    for (const l of this.listeners) l(h);
  }
}

/** What a store says about its own health (SQLite, PostgreSQL); the memory store has none. */
interface HealthSide {
  health?: () => StoreHealth;
  onHealthChange?: (l: (h: StoreHealth) => void) => () => void;
}

/**
 * `store` with every port method (a function of a nested object: conversations, events,
 * inflight, …) failing while `faults` say so. The store's health is the injected outage first,
 * then its own.
 */
export function faultyStore<T extends object>(store: T, faults: StoreFaults): T {
  const own = store as T & HealthSide;
  const ports = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'health') {
        return (): StoreHealth => faults.injected() ?? own.health?.() ?? { ok: true };
      }
      if (prop === 'onHealthChange') {
        return (l: (h: StoreHealth) => void) => {
          const offFaults = faults.onChange((h) => l(h.ok ? (own.health?.() ?? h) : h));
          const offOwn = own.onHealthChange?.((h) => {
            if (!faults.isDown) l(h);
          });
          return () => {
            offFaults();
            offOwn?.();
          };
        };
      }
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof prop === 'symbol' || OWN.has(prop) || typeof value !== 'object' || value === null) return value;
      let port = ports.get(prop);
      if (port === undefined) {
        port = faultyPort(value, prop, faults);
        ports.set(prop, port);
      }
      return port;
    },
  });
}

function faultyPort(port: object, name: string, faults: StoreFaults): object {
  return new Proxy(port, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || typeof prop === 'symbol') return value;
      const fn = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        const err = faults.fault(`${name}.${prop}`);
        if (err !== undefined) return Promise.reject(err);
        return fn.apply(target, args);
      };
    },
  });
}
