import { loadavg } from 'node:os';
import type { Pcts } from './report.js';
import { type Backend, type ReplicaWorld, type ReplyTiming, startReplicaWorld } from './replica-world.js';
import { percentile, round } from './text.js';
import type { RateModelName } from '../test/fakes/slack/rate-models.js';
import { pgSkipReason } from '../test/support/pg.js';

// Several replicas (issue 15), in two parts, each on fresh stores and fresh fakes:
// - store: one replica on SQLite and one on PostgreSQL, side by side but never busy at the same
//   time: the same messages go to one, then the other (the order alternating), so the load the
//   rest of the machine puts on the bench falls on both alike. First one message at a time, then
//   rounds of one message in every place at once;
// - scale: one, then three replicas on PostgreSQL, every message sent at once, the events
//   round-robin over the replicas: replies per second, 429s at the fake, first and final text.

export interface ReplicaBenchOptions {
  rateModel: RateModelName;
  /** Store part: places, messages per place, and the reply (one chunk: see storeRuns). */
  storePlaces: number;
  storeMessages: number;
  storeDirectives: string;
  /** Scale part: workspaces (OAuth installs), places dealt out over them, and messages per place
   * (sent at once, after a warm-up message in each place). */
  scaleWorkspaces: number;
  scalePlaces: number;
  scaleMessages: number;
  scaleReplicas: number[];
  scaleDirectives: string;
  /** A run that has not finished by then is stopped and reported as it stands. */
  maxRunMs: number;
}

export const REPLICA_DEFAULTS: ReplicaBenchOptions = {
  rateModel: 'token',
  storePlaces: 20,
  storeMessages: 5,
  storeDirectives: '[chunks 1]',
  scaleWorkspaces: 10,
  scalePlaces: 100,
  scaleMessages: 3,
  scaleReplicas: [1, 3],
  scaleDirectives: '[chunks 5] [delay 20]',
  maxRunMs: 60_000,
};

export interface ReplicaRun {
  part: 'store' | 'scale';
  backend: Backend;
  replicas: number;
  /** Messages sent at once (store: 1 or one per place; scale: all). */
  atOnce: number;
  places: number;
  replies: number;
  /** Replies shown with their final text. */
  answered: number;
  /** Places showing each of their replies once. */
  placesAnswered: number;
  /** Places showing them in the order of their messages. */
  placesInOrder: number;
  /** The user's message (its event posted) to the bridge's upstream request: the path the store is on. */
  toUpstreamMs: Pcts;
  /** The fake's first accepted write of the reply minus the upstream's first text chunk (as the rest of the bench). */
  firstTextMs: Pcts;
  /** The same first write minus the user's message. */
  firstTextFromMessageMs: Pcts;
  /** The reply's last accepted write minus the upstream's end. */
  finalTextMs: Pcts;
  /** Answered replies / seconds from the first message to the last final text. */
  repliesPerSecond: number | null;
  wallSeconds: number | null;
  rateLimitedFake: number;
  rateLimitedBridges: number;
  /** Replies written in one post, whole (post-once: the budgets could not pay a streaming final). */
  postedOnce: number;
  writesPerReply: number | null;
  cpuSecondsPerReply: number | null;
  /** The machine's 1-minute load average before and after (others share it). */
  loadAverage: [number | null, number | null];
  notes: string[];
}

export interface ReplicaResult {
  options: ReplicaBenchOptions;
  skipped?: string;
  runs: ReplicaRun[];
  /** Parts that could not run (e.g. the database went away), with why. */
  failures: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () => round(loadavg()[0], 2);
const pcts = (xs: number[]): Pcts => ({ p50: round(percentile(xs, 50)), p99: round(percentile(xs, 99)) });
const placeName = (i: number) => `D0BENCH${String(i).padStart(4, '0')}`;

/** Waits until every place shows its replies (or until `deadline`); false when not reached. */
async function settle(w: ReplicaWorld, deadline: number): Promise<boolean> {
  while (!w.allAnswered()) {
    if (Date.now() > deadline) return false;
    await sleep(10);
  }
  return true;
}

interface RunMeta {
  part: ReplicaRun['part'];
  backend: Backend;
  replicas: number;
  atOnce: number;
  places: number;
  cpuSeconds: number;
  load0: number | null;
  notes: string[];
}

async function summarise(w: ReplicaWorld, m: RunMeta, measured: (t: ReplyTiming) => boolean): Promise<ReplicaRun> {
  const ts = w.timings().filter(measured);
  const diff = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? [] : [a - b]);
  const answered = ts.filter((t) => t.lastWriteAt !== undefined);
  const start = Math.min(...ts.map((t) => t.sentAt));
  const end = Math.max(...answered.map((t) => t.lastWriteAt ?? 0));
  const wall = answered.length > 0 ? (end - start) / 1000 : null;
  const [missing, disorder] = [w.unanswered(), w.outOfOrder()];
  const notes = [...m.notes];
  if (missing.length > 0)
    notes.push(`${missing.length} places not fully answered: ${missing.slice(0, 3).map(w.describe).join('; ')}`);
  if (disorder.length > 0)
    notes.push(`${disorder.length} places out of order: ${disorder.slice(0, 3).map(w.describe).join('; ')}`);
  const rl = await w.rateLimited();
  return {
    part: m.part,
    backend: m.backend,
    replicas: m.replicas,
    atOnce: m.atOnce,
    places: m.places,
    replies: ts.length,
    answered: answered.length,
    placesAnswered: m.places - missing.length,
    placesInOrder: m.places - missing.length - disorder.length,
    toUpstreamMs: pcts(ts.flatMap((t) => diff(t.requestAt, t.sentAt))),
    firstTextMs: pcts(ts.flatMap((t) => diff(t.firstWriteAt, t.firstChunkAt))),
    firstTextFromMessageMs: pcts(ts.flatMap((t) => diff(t.firstWriteAt, t.sentAt))),
    finalTextMs: pcts(ts.flatMap((t) => diff(t.lastWriteAt, t.endAt))),
    repliesPerSecond: wall === null ? null : round(answered.length / Math.max(0.001, wall), 1),
    wallSeconds: round(wall, 2),
    rateLimitedFake: rl.fake,
    rateLimitedBridges: rl.bridges,
    postedOnce: answered.filter((t) => t.writes === 1).length,
    writesPerReply: answered.length > 0 ? round(answered.reduce((s, t) => s + t.writes, 0) / answered.length, 2) : null,
    cpuSecondsPerReply: ts.length > 0 ? round(m.cpuSeconds / ts.length, 4) : null,
    loadAverage: [m.load0, load()],
    notes,
  };
}

/**
 * The store part. The reply comes in one chunk, so its first write follows the chunk whether the
 * reply streams or posts once (a workspace's chat.update budget decides that, not the store).
 */
async function storeRuns(o: ReplicaBenchOptions, log: (s: string) => void): Promise<ReplicaRun[]> {
  const backends: Backend[] = ['sqlite', 'postgres'];
  const worlds: ReplicaWorld[] = [];
  try {
    for (const backend of backends)
      worlds.push(await startReplicaWorld({ backend, replicas: 1, rateModel: o.rateModel }));
    const both = worlds.map((w, i) => ({ w, backend: backends[i] as Backend, notes: [] as string[] }));
    const load0 = load();
    // Warm-up, not counted: each place's first message opens its conversation (history read, user name).
    for (const b of both) {
      await Promise.all(
        Array.from({ length: o.storePlaces }, (_, p) =>
          b.w.send(placeName(p), `w${b.backend}p${p}`, o.storeDirectives, 0),
        ),
      );
      if (!(await settle(b.w, Date.now() + 20_000))) b.notes.push('warm-up not answered in 20 s');
    }
    const cpu = both.map((b) => b.w.cpuSeconds());
    const order = (i: number) => (i % 2 === 0 ? both : [...both].reverse());
    log(`bench: replicas store: ${o.storePlaces * o.storeMessages} messages one at a time on each ...`);
    for (let i = 0; i < o.storePlaces * o.storeMessages; i++) {
      for (const b of order(i)) {
        await b.w.send(placeName(i % o.storePlaces), `o${b.backend}${i}`, o.storeDirectives, 0);
        if (!(await settle(b.w, Date.now() + 10_000))) b.notes.push(`message ${i} not answered in 10 s`);
      }
    }
    const serial = await Promise.all(
      both.map((b, k) =>
        summarise(
          b.w,
          {
            part: 'store',
            backend: b.backend,
            replicas: 1,
            atOnce: 1,
            places: o.storePlaces,
            cpuSeconds: b.w.cpuSeconds() - (cpu[k] ?? 0),
            load0,
            notes: b.notes.splice(0),
          },
          (t) => t.tag.startsWith('o'),
        ),
      ),
    );
    log(`bench: replicas store: ${o.storeMessages} rounds of ${o.storePlaces} at once on each ...`);
    const cpu1 = both.map((b) => b.w.cpuSeconds());
    const load1 = load();
    for (let r = 0; r < o.storeMessages; r++) {
      for (const b of order(r)) {
        const started = Date.now();
        await Promise.all(
          Array.from({ length: o.storePlaces }, (_, p) =>
            b.w.send(placeName(p), `c${b.backend}r${r}p${p}`, o.storeDirectives, 0),
          ),
        );
        if (!(await settle(b.w, started + 20_000))) b.notes.push(`round ${r} not answered in 20 s`);
        // A DM's post bucket refills at 1 a second: a round never waits for the last one's posts.
        await sleep(Math.max(0, started + 1100 - Date.now()));
      }
    }
    const rounds = await Promise.all(
      both.map((b, k) =>
        summarise(
          b.w,
          {
            part: 'store',
            backend: b.backend,
            replicas: 1,
            atOnce: o.storePlaces,
            places: o.storePlaces,
            cpuSeconds: b.w.cpuSeconds() - (cpu1[k] ?? 0),
            load0: load1,
            notes: b.notes,
          },
          (t) => t.tag.startsWith('c'),
        ),
      ),
    );
    return [...serial, ...rounds];
  } finally {
    for (const w of worlds) await w.close();
  }
}

/** `replicas` on PostgreSQL: a warm-up message in each place, then every message at once, round-robin. */
async function scaleRun(o: ReplicaBenchOptions, replicas: number): Promise<ReplicaRun> {
  const w = await startReplicaWorld({
    backend: 'postgres',
    replicas,
    rateModel: o.rateModel,
    workspaces: o.scaleWorkspaces,
  });
  try {
    const notes: string[] = [];
    const load0 = load();
    let n = 0;
    const round = (tag: (p: number) => string) =>
      Promise.all(
        Array.from({ length: o.scalePlaces }, (_, p) => w.send(placeName(p), tag(p), o.scaleDirectives, n++)),
      );
    await round((p) => `w${replicas}p${p}`);
    if (!(await settle(w, Date.now() + 30_000))) notes.push('warm-up not answered in 30 s');
    const cpu0 = w.cpuSeconds();
    const started = Date.now();
    for (let m = 0; m < o.scaleMessages; m++) await round((p) => `x${replicas}m${m}p${p}`);
    if (!(await settle(w, started + o.maxRunMs))) notes.push(`stopped after ${o.maxRunMs / 1000} s`);
    return await summarise(
      w,
      {
        part: 'scale',
        backend: 'postgres',
        replicas,
        atOnce: o.scalePlaces * o.scaleMessages,
        places: o.scalePlaces,
        cpuSeconds: w.cpuSeconds() - cpu0,
        load0,
        notes,
      },
      (t) => t.tag.startsWith('x'),
    );
  } finally {
    await w.close();
  }
}

export async function runReplicaBench(o: ReplicaBenchOptions, log: (s: string) => void): Promise<ReplicaResult> {
  const skipped = await pgSkipReason();
  if (skipped !== undefined) {
    log(`bench: replicas skipped: ${skipped}`);
    return { options: o, skipped, runs: [], failures: [] };
  }
  const runs: ReplicaRun[] = [];
  const failures: string[] = [];
  const say = (r: ReplicaRun) =>
    log(
      `bench: replicas ${r.part} ${r.backend} x${r.replicas}, ${r.atOnce} at once: ${r.answered}/${r.replies} answered, ${r.placesInOrder}/${r.places} places in order, first text p50 ${r.firstTextMs.p50} ms, ${r.repliesPerSecond} replies/s`,
    );
  // A part that fails is reported and the rest still runs: the whole bench is not lost to it.
  const attempt = async (name: string, part: () => Promise<ReplicaRun[]>) => {
    log(`bench: replicas ${name} ...`);
    try {
      for (const r of await part()) {
        runs.push(r);
        say(r);
      }
    } catch (err) {
      const why = `${name}: ${err instanceof Error ? err.message : String(err)}`.slice(0, 500);
      failures.push(why);
      log(`bench: replicas ${why}`);
    }
  };
  await attempt('store', () => storeRuns(o, log));
  for (const n of o.scaleReplicas) await attempt(`scale x${n}`, async () => [await scaleRun(o, n)]);
  return { options: o, runs, failures };
}
