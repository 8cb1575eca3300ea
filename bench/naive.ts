import { startEmulator } from '../src/emulator/index.js';
import { startFakeDiscord } from '../test/fakes/discord/index.js';
import type { NaiveResult } from './report.js';
import { joinSplit, percentile, round } from './text.js';

// The baseline a bridge is measured against: read the same upstream stream and write to the
// same fake Discord, posting the first text and then editing the message on EVERY chunk, one
// write at a time, with no scheduler. A 429 drops that edit (a retry would only fall further
// behind); the last write is retried after Retry-After until it lands, so the text ends whole.

export interface NaiveReply {
  firstChunkAt?: number;
  endAt?: number;
  firstTextAt?: number;
  finalAt?: number;
  writes: number;
  rateLimited: number;
  exact: boolean;
}

const MAX = 2000;

async function* sseDeltas(body: ReadableStream<Uint8Array>, onFirst: () => void): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buf = '';
  let first = true;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buf += decoder.decode(chunk, { stream: true });
    for (let end = buf.indexOf('\n\n'); end !== -1; end = buf.indexOf('\n\n')) {
      const event = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const data = event
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (!data) continue;
      const json = JSON.parse(data) as { type?: string; delta?: string };
      if (json.type === 'delta' && typeof json.delta === 'string') {
        if (first) {
          first = false;
          onFirst();
        }
        yield json.delta;
      }
    }
  }
}

export async function runNaive(opts: {
  level: number;
  upstreamUrl: string;
  apiKey: string;
  message: (tag: string) => string;
  expected: string;
}): Promise<{ replies: NaiveReply[]; rateLimitHits: number; startedAt: number; endedAt: number }> {
  const fake = await startFakeDiscord();
  const guild = fake.addGuild('naive');
  const auth = { authorization: `Bot ${fake.token}`, 'content-type': 'application/json' };
  const api = `${fake.apiUrl}/v10`;

  const write = async (
    r: NaiveReply,
    method: 'POST' | 'PATCH',
    path: string,
    content: string,
  ): Promise<{ id?: string; retryMs?: number }> => {
    const res = await fetch(`${api}${path}`, {
      method,
      headers: auth,
      body: JSON.stringify({ content, allowed_mentions: { parse: [] } }),
    });
    const body = (await res.json()) as { id?: string; retry_after?: number };
    if (res.status === 429) {
      r.rateLimited += 1;
      return { retryMs: Math.max(50, (body.retry_after ?? 1) * 1000) };
    }
    r.writes += 1;
    return body.id === undefined ? {} : { id: body.id };
  };

  const one = async (i: number): Promise<NaiveReply> => {
    const channel = fake.addChannel(guild, `naive-${i}`);
    const r: NaiveReply = { writes: 0, rateLimited: 0, exact: false };
    const res = await fetch(`${opts.upstreamUrl}/api/v1/chat/demo-bot/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${opts.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: opts.message(`naive${i}`) }),
    });
    if (!res.body) return r;
    const ids: string[] = [];
    const texts: string[] = [];
    // Write the current message (post it if new), keeping each under Discord's limit naively.
    const flush = async (final: boolean) => {
      const idx = texts.length - 1;
      const content = texts[idx] ?? '';
      for (let attempt = 0; attempt < 100; attempt++) {
        const out =
          ids[idx] === undefined
            ? await write(r, 'POST', `/channels/${channel}/messages`, content)
            : await write(r, 'PATCH', `/channels/${channel}/messages/${ids[idx]}`, content);
        if (out.id !== undefined && ids[idx] === undefined) {
          ids[idx] = out.id;
          r.firstTextAt ??= Date.now();
        }
        if (out.retryMs === undefined) return;
        // Only a message that does not exist yet or the last write must land; other edits are dropped.
        if (!final && ids[idx] !== undefined) return;
        await new Promise((res2) => setTimeout(res2, out.retryMs));
      }
    };
    for await (const delta of sseDeltas(res.body, () => {
      r.firstChunkAt = Date.now();
    })) {
      let rest = delta;
      if (texts.length === 0) texts.push('');
      while (rest.length > 0) {
        const cur = texts[texts.length - 1] ?? '';
        const room = MAX - cur.length;
        if (room <= 0) {
          await flush(true);
          texts.push('');
          continue;
        }
        texts[texts.length - 1] = cur + rest.slice(0, room);
        rest = rest.slice(room);
      }
      await flush(false);
    }
    r.endAt = Date.now();
    await flush(true);
    r.finalAt = Date.now();
    const shown = fake.botMessages(channel).map((m) => m.content);
    r.exact = joinSplit(shown, opts.expected) === opts.expected;
    return r;
  };

  const startedAt = Date.now();
  const replies = await Promise.all(Array.from({ length: opts.level }, (_, i) => one(i)));
  const endedAt = Date.now();
  const rateLimitHits = fake.rateLimitHits;
  await fake.close();
  return { replies, rateLimitHits, startedAt, endedAt };
}

/** The naive client at one level against the emulator, as a row of the bench's table. */
export async function runNaiveLevel(
  level: number,
  o: { apiKey: string; directives: string; expected: string },
): Promise<NaiveResult> {
  const emulator = await startEmulator({ port: 0, apiKey: o.apiKey, bots: ['demo-bot'], maxRecordedRequests: 1000 });
  try {
    const out = await runNaive({
      level,
      upstreamUrl: emulator.url,
      apiKey: o.apiKey,
      message: (tag) => `bench-${tag} ${o.directives}`,
      expected: o.expected,
    });
    const firstText = out.replies.flatMap((r) =>
      r.firstTextAt !== undefined && r.firstChunkAt !== undefined ? [r.firstTextAt - r.firstChunkAt] : [],
    );
    const finalText = out.replies.flatMap((r) =>
      r.finalAt !== undefined && r.endAt !== undefined ? [r.finalAt - r.endAt] : [],
    );
    const writes = out.replies.reduce((s, r) => s + r.writes, 0);
    const attempts = writes + out.replies.reduce((s, r) => s + r.rateLimited, 0);
    return {
      platform: 'discord',
      level,
      replies: level,
      exact: out.replies.filter((r) => r.exact).length,
      firstTextMs: { p50: round(percentile(firstText, 50)), p99: round(percentile(firstText, 99)) },
      finalTextMs: { p50: round(percentile(finalText, 50)), p99: round(percentile(finalText, 99)) },
      writesPerReply: round(writes / level, 2),
      attemptsPerReply: round(attempts / level, 2),
      rateLimited: out.rateLimitHits,
      wallSeconds: round((out.endedAt - out.startedAt) / 1000, 2),
    };
  } finally {
    await emulator.close();
  }
}
