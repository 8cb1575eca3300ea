import { afterEach, expect, it } from 'vitest';
import { noopMetrics } from '../../src/core/metrics-port.js';
import type { HandleResult, IncomingMessage, MessageHandler, Place } from '../../src/core/ports.js';
import { systemClock } from '../../src/core/ports.js';
import { type PumpResult, pump } from '../../src/core/reply/reply-to.js';
import { RateLimitScheduler } from '../../src/core/budget/scheduler.js';
import { longMarkdown } from '../../src/emulator/replies.js';
import { silentLogger } from '../../src/logger.js';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { assertNoPings } from '../fakes/discord/writes.js';
import { connectTo, mention } from './discord/harness.js';
import { partsProblems } from './discord/parts.js';
import type { DiscordConnector } from '../../src/connectors/discord/index.js';

// The connector's sinks under the core's pump and scheduler, no upstream: many long replies at
// once in two channels sharing their buckets must finish exact, split right, with no 429.

const BUDGET = { limit: 5, windowMs: 1000 };

class PumpHandler implements MessageHandler {
  readonly results = new Map<string, PumpResult>();
  private waiting: { n: number; resolve: () => void } | undefined;

  /** Resolves once `n` replies have finished (bounded by the test's timeout). */
  finished(n: number): Promise<void> {
    if (this.results.size >= n) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiting = { n, resolve };
    });
  }

  readonly scheduler = new RateLimitScheduler({ clock: systemClock });
  constructor(private readonly replyFor: (msg: IncomingMessage) => string) {}

  async handle(msg: IncomingMessage): Promise<HandleResult> {
    const text = this.replyFor(msg);
    async function* source() {
      for (let i = 0; i < text.length; i += 40) {
        // paced like an upstream stream, so edits happen while text still arrives
        await new Promise((r) => setTimeout(r, 3));
        yield text.slice(i, i + 40);
      }
    }
    await msg.sink.showWorking();
    const res = await pump(source(), {
      sink: msg.sink,
      scheduler: this.scheduler,
      clock: systemClock,
      editIntervalMs: 150,
      platform: 'discord',
      metrics: noopMetrics,
      logger: silentLogger,
      interruptedNote: '\n_(cut off)_',
      describeError: () => ({ outcome: 'failed', replacement: 'failed' }),
    });
    await msg.sink.clearWorking();
    this.results.set(msg.eventId, res);
    if (this.waiting && this.results.size >= this.waiting.n) this.waiting.resolve();
    return { status: 'answered' };
  }

  async reset(_place: Place): Promise<void> {}
}

let fake: FakeDiscord | undefined;
let connector: DiscordConnector | undefined;
afterEach(async () => {
  await connector?.shutdown();
  await fake?.close();
  const record = fake?.record ?? [];
  connector = undefined;
  fake = undefined;
  assertNoPings(record);
});

it('twelve long replies in two channels finish exact, split at 2000 with fences balanced, and never hit a 429', async () => {
  fake = await startFakeDiscord({ rateLimit: BUDGET });
  const f = fake;
  const guild = f.addGuild();
  const channels = [f.addChannel(guild, 'one'), f.addChannel(guild, 'two')];
  const lengths = new Map<string, number>();
  const handler = new PumpHandler((msg) => longMarkdown(lengths.get(msg.eventId) ?? 100));
  connector = await connectTo(f, handler, { replyMode: 'inline', observer: handler.scheduler, assumedBudget: BUDGET });

  const ids: string[] = [];
  for (let i = 0; i < 12; i++) {
    const m = f.dispatchMessage({
      channelId: channels[i % 2] as string,
      authorId: `10000000000000000${i % 3}`,
      content: mention(f, `question ${i}`),
      mentionsBot: true,
    });
    const id = String(m.id);
    lengths.set(id, 4200 + i * 100);
    ids.push(id);
  }
  const started = Date.now();
  await handler.finished(12);
  const elapsed = Date.now() - started;

  expect(f.rateLimitHits).toBe(0);
  // 5 writes per second per channel: the scheduler must not be far slower than the budget allows
  // (end-to-end bound, reason: a scheduler that idles between grants; 1.6× the budget's time + 2 s)
  const writes = f.record.filter((r) => r.path.includes('/messages')).length;
  expect(elapsed).toBeLessThan((writes / 2 / BUDGET.limit) * BUDGET.windowMs * 1.6 + 2000);
  for (const id of ids) {
    const res = handler.results.get(id);
    expect(res?.outcome).toBe('done');
    const parts = (res?.messageIds ?? []).map((mid) => f.state.messages.get(mid)?.content ?? '');
    expect(parts.length).toBeGreaterThanOrEqual(3);
    expect(partsProblems(parts, longMarkdown(lengths.get(id) ?? 0))).toEqual([]);
  }
  for (const w of f.record.filter((r) => r.path.includes('/messages')))
    expect(w.allowed_mentions).toEqual({ parse: [] });
}, 30_000);
