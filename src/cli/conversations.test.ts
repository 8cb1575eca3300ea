import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../store/sqlite/index.js';
import { type Emulator, startEmulator } from '../emulator/index.js';
import { createChatService } from '../upstream/index.js';
import { run, table } from './conversations.js';

const KEY = 'cli-conv-key';
let emu: Emulator;
beforeAll(async () => {
  emu = await startEmulator({ apiKey: KEY, bots: ['demo-bot'], chunkDelayMs: 0 });
});
afterAll(async () => emu.close());
beforeEach(async () => emu.reset());

const env = (form: 'a' | 'b', extra: Record<string, string> = {}) => ({
  CHAT_API_URL: emu.url,
  CHAT_API_KEY: KEY,
  CHAT_BOT_ID: 'demo-bot',
  CHAT_API_FORM: form,
  ...extra,
});

async function cli(args: string[], form: 'a' | 'b' = 'a', extra: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env: env(form, extra),
  });
  return { code, stdout, stderr };
}

async function seed(form: 'a' | 'b', messages: string[][]): Promise<string[]> {
  const service = createChatService({
    url: emu.url,
    apiKey: KEY,
    form,
    requestTimeoutMs: 5000,
    streamIdleTimeoutMs: 5000,
  });
  const ids: string[] = [];
  for (const turns of messages) {
    let id = service.mintConversationId();
    for (const message of turns) {
      const r = await service.send({ botId: 'demo-bot', message, ...(id ? { conversationId: id } : {}) });
      id ??= r.conversationId;
    }
    ids.push(id as string);
  }
  await service.close();
  return ids;
}

describe('conversations list', () => {
  it.each(['a', 'b'] as const)('Form %s: an aligned table', async (form) => {
    const ids = await seed(form, [['first\nline two'], ['second', 'more']]);
    const r = await cli(['list'], form);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+MESSAGES\s+UPDATED\s+PREVIEW$/);
    for (const id of ids) expect(r.stdout).toContain(id);
    const rows = lines.slice(2, 4);
    // Aligned: every column starts at the same offset in every row.
    const col = (l: string) => l.search(/\d{4}-\d\d-\d\dT/); // the UPDATED timestamp
    expect(new Set(rows.map(col)).size).toBe(1);
    expect(lines[0]?.indexOf('UPDATED')).toBe(col(rows[0] ?? ''));
    expect(r.stdout).not.toContain('first\nline');
    expect(r.stdout).toContain('page 1, 2 shown of 2\n');
  });

  it('Form B: --limit, and a footer without a made-up total', async () => {
    await seed('b', [['1'], ['2'], ['3']]);
    const r = await cli(['list', '--limit', '2'], 'b');
    expect(emu.requests.at(-1)?.query).toMatchObject({ bot_id: 'demo-bot', limit: '2' });
    expect(r.stdout).toContain('page 1, 2 shown, more on the next page\n');
  });

  it('Form A: page, limit and since are passed; the footer shows the paging', async () => {
    await seed('a', [['1'], ['2'], ['3']]);
    const r = await cli(['list', '--page', '2', '--limit=2', '--since', '2000-01-01T00:00:00Z']);
    expect(r.code).toBe(0);
    expect(emu.requests.at(-1)?.query).toEqual({ page: '2', limit: '2', since: '2000-01-01T00:00:00Z' });
    expect(r.stdout).toContain('page 2, 1 shown of 3');
  });

  it('no conversations', async () => {
    expect((await cli(['list'])).stdout).toBe('no conversations\n');
  });
});

describe('conversations show', () => {
  it.each(['a', 'b'] as const)('Form %s: the messages of one conversation', async (form) => {
    const [id] = await seed(form, [['hello', 'two\nlines']]);
    const r = await cli(['show', id as string], form);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toContain(`conversation ${id}`);
    expect(lines[1]).toMatch(/^TIME\s+ROLE\s+MESSAGE$/);
    expect(r.stdout).toMatch(/user\s+hello\n/);
    expect(r.stdout).toMatch(/assistant\s+You said: hello\n/);
    // A second line of a message continues under the MESSAGE column.
    const at = lines[1]?.indexOf('MESSAGE') ?? -1;
    const cont = lines.find((l) => l.trim() === 'lines' && l.indexOf('lines') === at);
    expect(cont).toBeDefined();
  });

  it('lists the votes kept in the local database below the history', async () => {
    const [id] = await seed('b', [['hello']]);
    const dir = mkdtempSync(join(tmpdir(), 'cli-votes-'));
    try {
      const path = join(dir, 'bridge.db');
      const store = openStore(path, { checkIntervalMs: 0 });
      const at = Date.parse('2025-01-02T03:04:05Z');
      const base = { placeKey: 'slack:T1:C1:1.2', upstreamId: id, messageId: 'm-1', at };
      await store.feedback.vote({ ...base, replyKey: 'r1', userId: 'U1', vote: 'up' });
      await store.feedback.vote({ ...base, replyKey: 'r1', userId: 'U2', vote: 'down', at: at + 1000 });
      await store.feedback.vote({ ...base, replyKey: 'r9', userId: 'U1', vote: 'up', upstreamId: 'another' });
      await store.feedback.delivered([{ replyKey: 'r1', userId: 'U1' }], at + 5);
      await store.close();
      const r = await cli(['show', id as string], 'b', { DATABASE_PATH: path });
      expect(r.code).toBe(0);
      const after = r.stdout.slice(r.stdout.indexOf('feedback (2 votes)'));
      expect(after).toMatch(/TIME\s+USER\s+VOTE\s+UPSTREAM\s+MESSAGE\n/);
      expect(after).toMatch(/2025-01-02T03:04:05.000Z\s+U1\s+up\s+sent\s+m-1\n/);
      expect(after).toMatch(/2025-01-02T03:04:06.000Z\s+U2\s+down\s+pending\s+m-1\n/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('with DATABASE_URL', async () => {
    const { dropSchema, PG_TEST_URL, pgSkipReason, testSchemaName } = await import('../../test/support/pg.js');
    const skip = await pgSkipReason();
    const schema = testSchemaName();
    afterEach(async () => {
      if (!skip) await dropSchema(schema);
    });

    it.skipIf(skip !== undefined)('lists the votes kept in PostgreSQL, not those of DATABASE_PATH', async () => {
      const [id] = await seed('b', [['hello']]);
      const { createPgStore } = await import('../store/pg/index.js');
      const store = await createPgStore(PG_TEST_URL, { schema, checkIntervalMs: 0 });
      const at = Date.parse('2025-01-02T03:04:05Z');
      const base = { placeKey: 'discord::42:', upstreamId: id, messageId: 'm-7', at };
      try {
        await store.feedback.vote({ ...base, replyKey: 'r1', userId: 'U1', vote: 'down' });
        await store.feedback.vote({ ...base, replyKey: 'r2', userId: 'U1', vote: 'up', at: at + 60_000 });
        await store.feedback.delivered([{ replyKey: 'r2', userId: 'U1' }], at + 61_000);
      } finally {
        await store.close();
      }
      const u = new URL(PG_TEST_URL);
      u.password = 'not-needed-with-trust';
      u.searchParams.set('options', `-c search_path=${schema}`);
      const dir = mkdtempSync(join(tmpdir(), 'cli-votes-pg-'));
      try {
        // A SQLite file beside it, with a vote of its own: not the bridge's database now.
        const local = openStore(join(dir, 'bridge.db'), { checkIntervalMs: 0 });
        await local.feedback.vote({ ...base, replyKey: 'r9', userId: 'U9', vote: 'up' });
        await local.close();
        const r = await cli(['show', id as string], 'b', {
          DATABASE_URL: u.toString(),
          DATABASE_PATH: join(dir, 'bridge.db'),
        });
        expect(r).toMatchObject({ code: 0, stderr: '' });
        expect(r.stdout).not.toContain('U9');
        const after = r.stdout.slice(r.stdout.indexOf('feedback (2 votes)'));
        expect(after).toMatch(/2025-01-02T03:04:05.000Z\s+U1\s+down\s+pending\s+m-7\n/);
        expect(after).toMatch(/2025-01-02T03:05:05.000Z\s+U1\s+up\s+sent\s+m-7\n/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('a PostgreSQL that does not answer: the history still, one line about the votes, no password', async () => {
      const [id] = await seed('b', [['hello']]);
      const r = await cli(['show', id as string], 'b', { DATABASE_URL: 'postgres://bridge:s3cret@127.0.0.1:1/bridge' });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('You said: hello');
      expect(r.stderr).toMatch(/^could not read the votes from postgres:\/\/bridge@127\.0\.0\.1:1\/bridge: /);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stdout + r.stderr).not.toContain('s3cret');
    });
  });

  it('Form B: --limit and --before page the history', async () => {
    const [id] = await seed('b', [['one', 'two']]);
    const r = await cli(['show', id as string, '--limit', '2'], 'b');
    expect(r.stdout).toContain('You said: two');
    expect(r.stdout).not.toContain('You said: one');
    expect(r.stdout).toContain('more messages');
  });

  it('an unknown conversation: one error line, exit 1', async () => {
    const r = await cli(['show', 'nope']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^error: unknown conversation: the upstream does not know this id \(mistyped, deleted or expired\): A3 history: upstream answered 404/,
    );
  });

  it('usage mistakes: exit 2', async () => {
    for (const args of [
      [],
      ['what'],
      ['show'],
      ['list', '--limit', '0'],
      ['list', '--since', 'yesterday'],
      ['list', '--before', 'x'],
    ]) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain('usage:');
    }
  });
});

describe('table', () => {
  it('pads all but the last column and continues multi-line cells under it', async () => {
    expect(
      table(
        ['A', 'BB', 'C'],
        [
          ['xyz', '1', 'p\nq'],
          ['é', '', 'r'],
        ],
      ),
    ).toBe(['A    BB  C', '---  --  -', 'xyz  1   p', '         q', 'é        r', ''].join('\n'));
  });
});

describe('the OpenAI-compatible forms', () => {
  let openAi: Emulator;
  beforeAll(async () => {
    openAi = await startEmulator({ apiKey: KEY, bots: ['demo-bot'], chunkDelayMs: 0, form: 'all' });
  });
  afterAll(async () => openAi.close());

  async function cliOn(form: 'chat-completions' | 'responses', args: string[]) {
    let stdout = '';
    let stderr = '';
    const code = await run(args, {
      stdout: { write: (s: string) => (stdout += s) },
      stderr: { write: (s: string) => (stderr += s) },
      env: { CHAT_API_URL: openAi.url, CHAT_API_KEY: KEY, CHAT_BOT_ID: 'demo-bot', CHAT_API_FORM: form },
    });
    return { code, stdout, stderr };
  }

  it('chat-completions: list and show say plainly the form cannot, and call no server', async () => {
    const before = openAi.requests.length;
    for (const args of [['list'], ['show', 'c1']]) {
      const got = await cliOn('chat-completions', args);
      expect(got.code).toBe(1);
      expect(got.stdout).toBe('');
      expect(got.stderr).toBe(
        `conversations ${args[0]} is not supported by CHAT_API_FORM=chat-completions: Chat Completions servers keep no conversations (the bridge keeps each transcript in its own database, for the replies only)\n`,
      );
    }
    expect(openAi.requests.length).toBe(before);
  });

  it('responses: list says plainly the form cannot; show reads a conversation by a response id', async () => {
    const got = await cliOn('responses', ['list']);
    expect(got.code).toBe(1);
    expect(got.stderr).toContain('conversations list is not supported by CHAT_API_FORM=responses');
    expect(got.stderr).not.toContain(' at ');

    const service = createChatService({
      url: openAi.url,
      apiKey: KEY,
      form: 'responses',
      requestTimeoutMs: 5000,
      streamIdleTimeoutMs: 5000,
    });
    const first = await service.send({ botId: 'demo-bot', message: 'hello' });
    const second = await service.send({ botId: 'demo-bot', message: 'again', conversationId: first.conversationId! });
    await service.close();
    const shown = await cliOn('responses', ['show', second.conversationId!]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('You said: hello');
    expect(shown.stdout).toContain('You said: again');
  });
});
