// The chaos controller: one seeded source of faults every fake asks, per call, whether to
// misbehave. Under `CHAOS=1` the fakes' constructors pick it up themselves (only fakes read the
// variable; src never does), so the whole integration suite runs with a small share of answers
// lost after the write took effect (and, where a fake knows how, rich writes refused). The seed
// comes from CHAOS_SEED or is drawn, and is printed once so a failing run can be replayed.

/** How a write's answer is lost once the platform applied it. */
export type LostAnswer = 'cut' | '5xx';

/** A fault source one fake consults per call. Each decision takes one draw of the seeded PRNG. */
export interface FaultSource {
  /** Lose the answer of this write (it took effect): how, or undefined to answer it. */
  loseAnswer(platform: 'slack' | 'discord', what: string): LostAnswer | undefined;
  /** Refuse this rich write for its form (the rich content fakes' `refuse` option asks this). */
  refuseRich(platform: 'slack' | 'discord', what: string): boolean;
}

export interface ChaosOptions {
  seed: number;
  /** Share of writes whose answer is lost (default 0.05). */
  loseRate?: number;
  /** Share of rich writes refused (default 0.05). */
  refuseRate?: number;
  /** Only these writes (fake-specific names, e.g. `chat.postMessage`) lose answers; default all asked. */
  only?: (what: string) => boolean;
}

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class ChaosController implements FaultSource {
  readonly seed: number;
  readonly loseRate: number;
  readonly refuseRate: number;
  private readonly random: () => number;
  private readonly only: ((what: string) => boolean) | undefined;
  /** What was injected, for a report (bounded counts, not a log). */
  readonly injected = { lost: 0, refused: 0, asked: 0 };

  constructor(o: ChaosOptions) {
    this.seed = o.seed;
    this.loseRate = o.loseRate ?? 0.05;
    this.refuseRate = o.refuseRate ?? 0.05;
    this.random = seededRandom(o.seed);
    this.only = o.only;
  }

  loseAnswer(_platform: 'slack' | 'discord', what: string): LostAnswer | undefined {
    if (this.only !== undefined && !this.only(what)) return undefined;
    this.injected.asked += 1;
    const r = this.random();
    if (r >= this.loseRate) return undefined;
    this.injected.lost += 1;
    // Half the lost answers are a cut connection, half a 5xx after the write took effect.
    return r < this.loseRate / 2 ? 'cut' : '5xx';
  }

  refuseRich(_platform: 'slack' | 'discord', _what: string): boolean {
    if (this.random() >= this.refuseRate) return false;
    this.injected.refused += 1;
    return true;
  }
}

let fromEnv: ChaosController | null | undefined;

/**
 * The controller of a `CHAOS=1` run (one per process, so one seed per test file's worker), or
 * undefined. The seed is printed once.
 */
export function chaosFromEnv(): ChaosController | undefined {
  if (fromEnv !== undefined) return fromEnv ?? undefined;
  const on = process.env.CHAOS;
  if (on === undefined || on === '' || on === '0' || on === 'off') {
    fromEnv = null;
    return undefined;
  }
  const given = Number(process.env.CHAOS_SEED);
  const seed = Number.isInteger(given) && process.env.CHAOS_SEED !== '' ? given : Math.floor(Math.random() * 2 ** 31);
  const rate = (name: string): number | undefined => {
    const v = Number(process.env[name]);
    return process.env[name] !== undefined && Number.isFinite(v) && v >= 0 && v <= 1 ? v : undefined;
  };
  const loseRate = rate('CHAOS_LOSE_RATE');
  const refuseRate = rate('CHAOS_REFUSE_RATE');
  fromEnv = new ChaosController({
    seed,
    ...(loseRate !== undefined ? { loseRate } : {}),
    ...(refuseRate !== undefined ? { refuseRate } : {}),
  });
  console.log(
    `[chaos] seed ${seed} (replay: CHAOS=1 CHAOS_SEED=${seed}); lose ${fromEnv.loseRate}, refuse ${fromEnv.refuseRate}`,
  );
  return fromEnv;
}

/**
 * The fault source a fake uses: the one given, none when `false` (a test that counts calls
 * exactly), else the chaos run's.
 */
export function faultSourceFor(given: FaultSource | false | undefined): FaultSource | undefined {
  if (given === false) return undefined;
  return given ?? chaosFromEnv();
}
