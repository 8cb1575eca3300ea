import type { RateRule } from './rate-buckets.js';
import { DEFAULT_LIMITS, type MethodLimit } from './rate-limiter.js';

export type { RateRule };
export { floorMs, type FloorReply } from './rate-floor.js';

// Selectable guesses at Slack's unpublished rate-limit algorithm, so tests and the bench can
// check that the bridge holds up under each rather than under the one guess its own scheduler
// makes. A model maps a Web API method to rules; a call is accepted only when every rule of its
// method accepts it. appendStream is limited like chat.update and startStream like
// chat.postMessage, each in its own bucket (Slack limits methods separately).

export const RATE_MODEL_NAMES = ['current', 'token', 'fixed-window', 'sliding-log', 'strict', 'per-channel'] as const;
export type RateModelName = (typeof RATE_MODEL_NAMES)[number];

export interface RateModel {
  name: string;
  rules: Readonly<Record<string, readonly RateRule[]>>;
}

export interface RateNumbers {
  limit: number;
  windowMs: number;
  /** Token bucket capacity (token-based models only). */
  burst: number;
}

/** Numbers that replace a named model's: `update` for chat.update and appendStream, `post` for
 * chat.postMessage and startStream, `channelUpdate` for per-channel's extra per-channel rule. */
export interface RateNumberOverrides {
  update?: Partial<RateNumbers>;
  post?: Partial<RateNumbers>;
  channelUpdate?: Partial<RateNumbers>;
}

const UPDATES = ['chat.update', 'chat.appendStream'];
const POSTS = ['chat.postMessage', 'chat.startStream'];

/** Today's behaviour: fixed windows that start with the first call (per MethodLimit). */
export function currentModel(limits: Record<string, MethodLimit> = DEFAULT_LIMITS): RateModel {
  const rules: Record<string, RateRule[]> = {};
  for (const [method, l] of Object.entries(limits)) rules[method] = [{ kind: 'first-window', ...l }];
  return { name: 'current', rules };
}

interface Shape {
  kind: RateRule['kind'];
  update: RateNumbers;
  post: RateNumbers;
  channelUpdate?: RateNumbers;
}

const SHAPES: Record<Exclude<RateModelName, 'current'>, Shape> = {
  token: {
    kind: 'token',
    update: { limit: 50, windowMs: 60_000, burst: 20 },
    post: { limit: 1, windowMs: 1000, burst: 3 },
  },
  'fixed-window': {
    kind: 'fixed-window',
    update: { limit: 50, windowMs: 60_000, burst: 50 },
    post: { limit: 1, windowMs: 1000, burst: 1 },
  },
  'sliding-log': {
    kind: 'sliding-log',
    update: { limit: 50, windowMs: 60_000, burst: 50 },
    post: { limit: 1, windowMs: 1000, burst: 1 },
  },
  strict: {
    kind: 'token',
    update: { limit: 20, windowMs: 60_000, burst: 5 },
    post: { limit: 1, windowMs: 1000, burst: 1 },
  },
  'per-channel': {
    kind: 'token',
    update: { limit: 50, windowMs: 60_000, burst: 20 },
    post: { limit: 1, windowMs: 1000, burst: 3 },
    channelUpdate: { limit: 10, windowMs: 60_000, burst: 3 },
  },
};

/** A named model, optionally with other numbers. For `current`, update/post override the
 * DEFAULT_LIMITS numbers (burst does not apply). */
export function rateModel(name: RateModelName, o: RateNumberOverrides = {}): RateModel {
  if (name === 'current') {
    const l = (m: string, over: Partial<RateNumbers> | undefined): MethodLimit => {
      const base = DEFAULT_LIMITS[m] ?? { limit: 1, windowMs: 1000, per: 'team' };
      return { per: base.per, limit: over?.limit ?? base.limit, windowMs: over?.windowMs ?? base.windowMs };
    };
    return currentModel(
      Object.fromEntries(Object.keys(DEFAULT_LIMITS).map((m) => [m, l(m, UPDATES.includes(m) ? o.update : o.post)])),
    );
  }
  const s = SHAPES[name];
  const rule = (n: RateNumbers, over: Partial<RateNumbers> | undefined, per: RateRule['per']): RateRule => {
    const r = { ...n, ...over };
    return { kind: s.kind, limit: r.limit, windowMs: r.windowMs, burst: r.burst, per };
  };
  const rules: Record<string, RateRule[]> = {};
  for (const m of UPDATES) {
    const rs = [rule(s.update, o.update, 'team')];
    if (s.channelUpdate) rs.push({ ...rule(s.channelUpdate, o.channelUpdate, 'channel'), label: 'channel' });
    rules[m] = rs;
  }
  for (const m of POSTS) rules[m] = [rule(s.post, o.post, 'channel')];
  return { name, rules };
}

export function isRateModelName(s: string): s is RateModelName {
  return (RATE_MODEL_NAMES as readonly string[]).includes(s);
}

/**
 * The model FAKE_SLACK_RATE_MODEL names, or undefined when it is unset or empty. Only code that
 * starts the fake (tests, bench) reads it; the bridge never does. An unknown name throws, so a
 * typo cannot silently run the default.
 */
export function rateModelFromEnv(env: NodeJS.ProcessEnv = process.env): RateModelName | undefined {
  const v = env.FAKE_SLACK_RATE_MODEL?.trim();
  if (!v) return undefined;
  if (!isRateModelName(v))
    throw new Error(`FAKE_SLACK_RATE_MODEL=${v}: expected one of ${RATE_MODEL_NAMES.join(', ')}`);
  return v;
}

export interface RateModelChoice {
  limits?: Record<string, MethodLimit>;
  rateModel?: RateModelName | RateModel;
  rateNumbers?: RateNumberOverrides;
}

/**
 * Which model a fake enforces: an explicit `rateModel` first (a name takes `rateNumbers`, and
 * `current` also `limits`); else explicit `limits` (the test chose today's limits, `{}` = none,
 * so the env var does not override it); else FAKE_SLACK_RATE_MODEL; else `current`.
 */
export function resolveRateModel(o: RateModelChoice, env: NodeJS.ProcessEnv = process.env): RateModel {
  const named = (name: RateModelName): RateModel =>
    name === 'current' && o.limits && !o.rateNumbers ? currentModel(o.limits) : rateModel(name, o.rateNumbers);
  if (typeof o.rateModel === 'object') return o.rateModel;
  if (o.rateModel !== undefined) return named(o.rateModel);
  if (o.limits) return currentModel(o.limits);
  return named(rateModelFromEnv(env) ?? 'current');
}
