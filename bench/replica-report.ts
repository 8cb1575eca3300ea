import { type Pcts, table } from './report.js';
import type { ReplicaResult, ReplicaRun } from './replicas.js';

// The several-replicas section of the printed report (bench/replicas.ts).

/** PostgreSQL's first text p50 must stay within this of SQLite's (issue 15). */
export const STORE_P50_MARGIN_MS = 2;

const f = (x: number | null | undefined) => (x === null || x === undefined ? '–' : String(x));
const p = (x: Pcts) => `${f(x.p50)} / ${f(x.p99)}`;

export function formatReplicas(r: ReplicaResult, machine: { cpu: string; cores: number }): string {
  const o = r.options;
  if (r.skipped !== undefined) return `Several replicas: skipped (${r.skipped}).`;
  const out: string[] = [];
  const host = `${machine.cores} cores (${machine.cpu}) shared by the bench, the fakes, PostgreSQL and every replica`;
  const store = r.runs.filter((x) => x.part === 'store');
  const scale = r.runs.filter((x) => x.part === 'scale');
  const rl = (x: ReplicaRun) =>
    x.rateLimitedBridges === x.rateLimitedFake
      ? String(x.rateLimitedFake)
      : `${x.rateLimitedFake} (bridges counted ${x.rateLimitedBridges})`;
  if (store.length > 0) {
    out.push(
      `Several replicas: the store on the reply's path. One replica on SQLite and one on PostgreSQL side by side, the same messages to one then the other (never both busy); fake Slack in HTTP mode (${o.rateModel} model, edit mode), ${o.storePlaces} DM places, ${o.storeMessages} messages each, after a warm-up message in each place; reply: echo in one chunk (${o.storeDirectives}); ${host}.`,
      '',
      table(
        [
          'store',
          'at once',
          'replies',
          'in order',
          'message → upstream p50/p99 ms',
          'first text p50/p99 ms',
          'message → first text p50/p99 ms',
          'final text p50/p99 ms',
          'writes/reply',
          '429s',
          'load',
        ],
        store.map((x) => [
          x.backend,
          String(x.atOnce),
          `${x.answered}/${x.replies}`,
          `${x.placesInOrder}/${x.places}`,
          p(x.toUpstreamMs),
          p(x.firstTextMs),
          p(x.firstTextFromMessageMs),
          p(x.finalTextMs),
          f(x.writesPerReply),
          rl(x),
          x.loadAverage.map(f).join('→'),
        ]),
      ),
    );
    for (const atOnce of [...new Set(store.map((x) => x.atOnce))]) {
      const lite = store.find((x) => x.backend === 'sqlite' && x.atOnce === atOnce);
      const pg = store.find((x) => x.backend === 'postgres' && x.atOnce === atOnce);
      const d = (k: 'firstTextMs' | 'firstTextFromMessageMs') => {
        const [a, b] = [lite?.[k].p50, pg?.[k].p50];
        return a == null || b == null ? undefined : Math.round((b - a) * 10) / 10;
      };
      const [first, fromMsg] = [d('firstTextMs'), d('firstTextFromMessageMs')];
      const verdict = (x: number | undefined) =>
        x === undefined ? '–' : `${x} ms (${x <= STORE_P50_MARGIN_MS ? 'met' : 'NOT met'})`;
      out.push(
        '',
        `${atOnce} at once, p50 PostgreSQL minus SQLite (target ≤ ${STORE_P50_MARGIN_MS} ms): first text ${verdict(first)}; message → first text ${verdict(fromMsg)}.`,
      );
    }
  }
  if (scale.length > 0) {
    out.push(
      '',
      `Several replicas on PostgreSQL: ${o.scaleWorkspaces} workspaces (OAuth installs), ${o.scalePlaces} DM places dealt out over them, ${o.scaleMessages} messages in each place all sent at once after a warm-up message in each place, events round-robin over the replicas (fake Slack in HTTP mode, ${o.rateModel} model, edit mode); reply: echo ${o.scaleDirectives}; ${host}.`,
      '',
      table(
        [
          'replicas',
          'replies',
          'in order',
          'replies/s',
          'wall s',
          '429s',
          'first text p50/p99 ms',
          'final text p50/p99 ms',
          'message → first text p50/p99 ms',
          'posted once',
          'CPU s/reply',
          'load',
        ],
        scale.map((x) => [
          String(x.replicas),
          `${x.answered}/${x.replies}`,
          `${x.placesInOrder}/${x.places}`,
          f(x.repliesPerSecond),
          f(x.wallSeconds),
          rl(x),
          p(x.firstTextMs),
          p(x.finalTextMs),
          p(x.firstTextFromMessageMs),
          `${x.postedOnce}/${x.answered}`,
          f(x.cpuSecondsPerReply),
          x.loadAverage.map(f).join('→'),
        ]),
      ),
    );
  }
  const notes = [
    ...r.runs.flatMap((x) => x.notes.map((n) => `- ${x.part} ${x.backend} x${x.replicas}, ${x.atOnce} at once: ${n}`)),
    ...r.failures.map((why) => `- failed: ${why}`),
  ];
  if (notes.length > 0) out.push('', 'Notes:', ...notes);
  return out.join('\n');
}
