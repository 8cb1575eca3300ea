import { envSchema } from './env-schema.js';

// Typos in variable names: zod ignores keys it does not know, so `CHAT_API_BASE_URL=…` (meant:
// CHAT_API_URL) used to be silently dropped and `start` ran on the built-in emulator. A name that
// looks like one of ours but is not one is reported with the nearest known name, by `start` (a
// warning line) and `doctor` (a row). The known names come from the schema, so a variable added
// there is known here at once.

/** Every variable the bridge reads: the schema's, and the few read outside it. */
export const KNOWN_VARIABLES: readonly string[] = [...Object.keys(envSchema.shape), 'NO_COLOR'];

/**
 * Prefixes only this project's variables use: any unknown name with one of them is a mistake.
 * (Generic prefixes such as LOG_ or DATABASE_ are left to the edit distance below: other
 * programs' variables share them.)
 */
const OUR_PREFIXES = ['CHAT_', 'SLACK_', 'DISCORD_', 'PLAYGROUND_', 'CONTEXT_', 'BOT_', 'REPLICA_'];

export interface UnknownVariable {
  name: string;
  /** Where it was set. */
  source: '.env' | 'environment';
  /** The known name it most likely meant, if any is close. */
  suggestion?: string;
}

/** Levenshtein distance, bounded: returns `max + 1` as soon as it is clearly above `max`. */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const v = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      cur.push(v);
      rowMin = Math.min(rowMin, v);
    }
    if (rowMin > max) return max + 1;
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/** How far a name may be from a known one and still be taken for a typo of it. */
const closeEnough = (known: string) => (known.length <= 6 ? 1 : 2);

/** The known name `name` most likely meant (nearest first, schema order on a tie), if close. */
function nearest(name: string, known: readonly string[], anyDistance: boolean): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const k of known) {
    const d = editDistance(name, k);
    if (best === undefined || d < best.d) best = { name: k, d };
  }
  if (best === undefined) return undefined;
  if (best.d <= closeEnough(best.name)) return best.name;
  // A name with our prefix gets the nearest of the same prefix when they share most of it.
  return anyDistance && best.d <= Math.ceil(name.length / 2) ? best.name : undefined;
}

/**
 * Names in `env` that look like the bridge's but are not: with one of the project's prefixes,
 * a case slip (`chat_api_url`), or a small edit away from a known name. `fromFile` lists the
 * names the `.env` set (to say where each came from).
 */
export function unknownVariables(
  env: Readonly<Record<string, string | undefined>>,
  fromFile: ReadonlySet<string> = new Set(),
  known: readonly string[] = KNOWN_VARIABLES,
): UnknownVariable[] {
  const knownSet = new Set(known);
  const out: UnknownVariable[] = [];
  for (const name of Object.keys(env).sort()) {
    if (knownSet.has(name) || env[name] === undefined) continue;
    const upper = name.toUpperCase();
    const ours = OUR_PREFIXES.some((p) => upper.startsWith(p));
    const suggestion = knownSet.has(upper) ? upper : nearest(upper, known, ours);
    if (!ours && suggestion === undefined) continue;
    const source = fromFile.has(name) ? '.env' : 'environment';
    out.push(suggestion === undefined ? { name, source } : { name, source, suggestion });
  }
  return out;
}

/** One line for `start`'s log and `doctor`'s row. */
export function describeUnknown(u: UnknownVariable): string {
  const where = u.source === '.env' ? 'in .env' : 'in the environment';
  const hint =
    u.suggestion === undefined
      ? 'see .env.example for the names the bridge reads'
      : u.suggestion.toUpperCase() === u.name.toUpperCase()
        ? `did you mean ${u.suggestion}? (names are case-sensitive)`
        : `did you mean ${u.suggestion}?`;
  return `${u.name} ${where} is not a variable the bridge reads and is ignored: ${hint}`;
}
