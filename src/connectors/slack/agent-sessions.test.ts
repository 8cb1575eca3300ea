import { webApi } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from '../../../test/fakes/slack/index.js';
import type { Place, RateLimitObserver } from '../../core/ports.js';
import { silentLogger } from '../../logger.js';
import { AgentSessions, SET_STATUS_METHOD, type StatusClient, withAgentSession } from './agent-sessions.js';
import { clientOptions } from './app.js';
import { DEFAULT_SLACK_LIMITS } from './rate-limits.js';
import { createNativeSink } from './reply-sink-native.js';

// Agent-session status of native streams: processing while a reply runs, active after, in the
// order the replies of a place made them, and never a failure of the reply.

const place: Place = { platform: 'slack', workspaceId: 'T0FAKE', channelId: 'D1', threadId: '100.1' };

/** One turn of the event loop: calls made in promise callbacks have been made. */
const turnOfLoop = () => new Promise((r) => setImmediate(r));

/** A client whose status calls are recorded and answered when the test says so. */
function heldClient() {
  const sent: string[] = [];
  const pending: (() => void)[] = [];
  const client: StatusClient = {
    apiCall: (method: string, args?: Record<string, unknown>) => {
      sent.push(`${method} ${String(args?.channel_id)} ${String(args?.thread_ts)} ${String(args?.status)}`);
      return new Promise<webApi.WebAPICallResult>((resolve) => pending.push(() => resolve({ ok: true })));
    },
  };
  const statuses = () => sent.map((s) => s.split(' ').at(-1));
  /** Answers the calls made so far, one turn of the event loop at a time, until none is waiting. */
  const answerAll = async () => {
    for (let i = 0; i < 20; i++) {
      const next = pending.shift();
      if (next === undefined) {
        await turnOfLoop();
        if (pending.length === 0) return;
        continue;
      }
      next();
      await turnOfLoop();
    }
  };
  return { client, sent, statuses, pending, answerAll };
}

const sessions = (rateLimits: RateLimitObserver = { observe: () => {}, limited: () => {} }) =>
  new AgentSessions({ logger: silentLogger, rateLimits });

describe('agent sessions', () => {
  let fake: FakeSlack | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  it("a top-level DM's reply thread leads a Stop to the DM's place while the reply runs, not before or after", async () => {
    const s = sessions();
    const c = heldClient();
    const dm: Place = { platform: 'slack', workspaceId: 'T0FAKE', channelId: 'D1' };
    const turn = s.turn(c.client, place, dm);
    expect(s.conversationOf(place)).toEqual(place);
    turn.begin();
    expect(s.conversationOf(place)).toBe(dm);
    // Another thread of the DM is its own place.
    const other: Place = { ...place, threadId: '100.9' };
    expect(s.conversationOf(other)).toBe(other);
    turn.end();
    expect(s.conversationOf(place)).toEqual(place);
    await c.answerAll();
    expect(c.statuses()).toEqual(['processing', 'active']);
  });

  it('a turn sets processing at begin and active at end, once each; nothing without begin or thread', async () => {
    const s = sessions();
    const c = heldClient();
    const turn = s.turn(c.client, place);
    turn.begin();
    turn.begin();
    await turnOfLoop();
    expect(c.sent).toEqual([`${SET_STATUS_METHOD} D1 100.1 processing`]);
    turn.end();
    turn.end();
    await c.answerAll();
    expect(c.statuses()).toEqual(['processing', 'active']);
    expect(s.size).toBe(0);

    const never = s.turn(c.client, place);
    never.end();
    never.begin(); // ended before it began: stays quiet
    const noThread = s.turn(c.client, { platform: 'slack', workspaceId: 'T0FAKE', channelId: 'D1' });
    noThread.begin();
    noThread.end();
    await c.answerAll();
    expect(c.statuses()).toEqual(['processing', 'active']);
  });

  it('calls of a place go one after another; a turn that ends after the next began leaves it processing', async () => {
    const s = sessions();
    const c = heldClient();
    const first = s.turn(c.client, place);
    first.begin();
    first.end();
    const second = s.turn(c.client, place);
    second.begin();
    await turnOfLoop();
    // The first call is still unanswered: the others wait for it, so Slack sees them in order.
    expect(c.sent).toHaveLength(1);
    await c.answerAll();
    expect(c.statuses()).toEqual(['processing', 'active', 'processing']);

    const third = s.turn(c.client, place);
    third.begin(); // (the relay never overlaps replies of a place; the sessions hold anyway)
    second.end();
    await c.answerAll();
    expect(c.statuses()).toEqual(['processing', 'active', 'processing', 'processing']);
    third.end();
    await c.answerAll();
    expect(c.statuses().at(-1)).toBe('active');
    expect(s.size).toBe(0);
  });

  it('against Slack: the statuses land on the thread; a 429 goes to the scheduler and throws nothing', async () => {
    fake = await startFakeSlack({ limits: { [SET_STATUS_METHOD]: { limit: 2, windowMs: 60_000, per: 'team' } } });
    const limited: { bucket: string; ms: number }[] = [];
    const s = sessions({ observe: () => {}, limited: (bucket, ms) => limited.push({ bucket, ms }) });
    const client = new webApi.WebClient(fake.botToken, clientOptions(fake.apiUrl));
    const turn = s.turn(client, place);
    turn.begin();
    turn.end();
    await fake.waitForCall((c) => c.method === SET_STATUS_METHOD && c.args.status === 'active');
    expect(fake.agentStatuses('D1', '100.1')).toEqual(['processing', 'active']);

    const over = s.turn(client, place);
    over.begin();
    await expect.poll(() => limited).toEqual([{ bucket: `slack:api:${SET_STATUS_METHOD}`, ms: expect.any(Number) }]);
    over.end();
    await expect.poll(() => s.size).toBe(0);
    expect(fake.agentStatuses('D1', '100.1')).toEqual(['processing', 'active']);
  });

  it('a native sink holds the session from showWorking to its last write; notices leave it alone', async () => {
    fake = await startFakeSlack({ limits: {} });
    const client = new webApi.WebClient(fake.botToken, clientOptions(fake.apiUrl));
    const s = sessions();
    const dest = { client, place, userId: 'U1', userMessageTs: '100.1', assistant: false };
    const deps = { limits: DEFAULT_SLACK_LIMITS, logger: silentLogger };
    const statusCalls = () => fake?.calls.filter((c) => c.method === SET_STATUS_METHOD).length ?? 0;

    const notice = createNativeSink(dest, { ...deps, session: s.turn(client, place) });
    await notice.post('Started a fresh conversation.', { final: true, part: 0 });
    expect(statusCalls()).toBe(0);

    const sink = createNativeSink(dest, { ...deps, session: s.turn(client, place) });
    await sink.showWorking();
    await fake.waitForCall((c) => c.method === SET_STATUS_METHOD);
    const { messageId } = await sink.post('Part one', { final: false, part: 0, replyKey: 'k' });
    await sink.edit(messageId, 'Part one, ended', { final: true, part: 0, replyKey: 'k' });
    expect(fake.agentStatuses('D1', '100.1')).toEqual(['processing']);
    const next = await sink.post('Part two', { final: true, part: 1, replyKey: 'k', last: true });
    expect(next.messageId).not.toBe('');
    await fake.waitForCall((c) => c.method === SET_STATUS_METHOD && c.args.status === 'active');
    expect(fake.agentStatuses('D1', '100.1')).toEqual(['processing', 'active']);
  });

  it('a status Slack refuses costs nothing but the button', async () => {
    fake = await startFakeSlack({ limits: {} });
    fake.switches.failAgentStatus = 'not_allowed_token_type';
    const client = new webApi.WebClient(fake.botToken, clientOptions(fake.apiUrl));
    const s = sessions();
    const sink = withAgentSession(
      s.turn(client, place),
      createNativeSink(
        { client, place, userId: 'U1', userMessageTs: '100.1', assistant: false },
        { limits: DEFAULT_SLACK_LIMITS, logger: silentLogger },
      ),
    );
    await sink.showWorking();
    await sink.post('All of it', { final: true, part: 0, replyKey: 'k', last: true });
    await expect.poll(() => s.size).toBe(0);
    expect(fake.calls.filter((c) => c.method === SET_STATUS_METHOD).map((c) => c.result)).toEqual([
      'not_allowed_token_type',
      'not_allowed_token_type',
    ]);
    expect(fake.botMessages('D1', '100.1')[0]?.text).toBe('All of it');
  });
});
