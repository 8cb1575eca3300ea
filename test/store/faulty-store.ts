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
  private outageRate = 0;
  private outageMs = 0;
  private random: () => number;
  private readonly listeners = new Set<(h: StoreHealth) => void>();
  /** Calls through the wrapper, and those failed (for a report). */
  readonly counts = { calls: 0, failed: 0, outages: 0 };

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

  /**
   * Each call starts an outage with chance `rate` (seeded): that call and every call for `ms`
   * fail, and health says unreachable meanwhile, as a failover or a pooler restart would.
   */
  outages(rate: number, ms: number, seed = this.seed): void {
    this.outageRate = rate;
    this.outageMs = ms;
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
    if (this.outage === undefined && this.outageRate > 0 && this.random() < this.outageRate) {
      this.counts.outages++;
      this.down('unreachable: injected outage (seeded)');
      setTimeout(() => this.up(), this.outageMs).unref();
    }
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

/**
 * The store fault mode of the integration suite: under `STORE_FAULTS=1` the stacks wrap their
 * store with seeded outages (STORE_FAULTS_RATE of calls start one, default 0.02, each
 * STORE_FAULTS_MS long, default 300), like the fakes' CHAOS=1. The seed comes from
 * STORE_FAULTS_SEED or is drawn, and is printed once so a failing run can be replayed.
 */
export function storeFaultsFromEnv(): StoreFaults | undefined {
  if (process.env.STORE_FAULTS !== '1') return undefined;
  const seed = Number(process.env.STORE_FAULTS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const rate = Number(process.env.STORE_FAULTS_RATE ?? 0.02);
  const ms = Number(process.env.STORE_FAULTS_MS ?? 300);
  if (!printedSeed) {
    printedSeed = true;
    console.log(`store fault mode: STORE_FAULTS_SEED=${seed} rate=${rate} outage=${ms}ms`);
  }
  const faults = new StoreFaults(seed);
  faults.outages(rate, ms);
  return faults;
}

let printedSeed = false;
