import { webApi } from '@slack/bolt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from '../../../test/fakes/slack/index.js';
import { PlatformRateLimitedError, PlatformWriteError } from '../../core/ports.js';
import { silentLogger } from '../../logger.js';
import { clientOptions } from './app.js';
import type { SlackDestination } from './destination.js';
import { DEFAULT_SLACK_LIMITS } from './rate-limits.js';
import { createEditSink } from './reply-sink-edit.js';
import { createNativeSink } from './reply-sink-native.js';

// The sinks against the fake Slack through a real WebClient: errors become the port's errors,
// and native appends send exactly the new text.

describe('Slack reply sinks', () => {
  let fake: FakeSlack;
  let dest: SlackDestination;
  const deps = { limits: DEFAULT_SLACK_LIMITS, logger: silentLogger };
  const first = { final: false, part: 0 };
  const last = { final: true, part: 0 };

  beforeEach(async () => {
    fake = await startFakeSlack({ limits: { 'chat.update': { limit: 2, windowMs: 60_000, per: 'team' } } });
    const client = new webApi.WebClient(fake.botToken, clientOptions(fake.apiUrl));
    dest = {
      client,
      place: { platform: 'slack', workspaceId: 'T0FAKE', channelId: 'D1', threadId: '1.0' },
      userId: 'U1',
      userMessageTs: '1.0',
      assistant: false,
    };
  });
  afterEach(() => fake.close());

  it('edit sink: a 429 is a PlatformRateLimitedError on the update bucket, unknown messages a write error', async () => {
    const sink = createEditSink(dest, deps);
    const { messageId } = await sink.post('one', first);
    await sink.edit(messageId, 'one two', first);
    await sink.edit(messageId, 'one two three', first);
    const err = await sink.edit(messageId, 'one two three four', last).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformRateLimitedError);
    expect((err as PlatformRateLimitedError).bucket).toBe('slack:T0FAKE:update');
    expect((err as PlatformRateLimitedError).retryAfterMs).toBeGreaterThanOrEqual(1000);
    expect(fake.message('D1', messageId)?.text).toBe('one two three');
    fake.switches.missingChannels.add('D1');
    const gone = await sink.post('x', first).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(PlatformWriteError);
    expect((gone as PlatformWriteError).code).toBe('channel_not_found');
    expect((gone as PlatformWriteError).retryable).toBe(false);
  });

  it("native sink: the stream is addressed to the asker's own team (Slack Connect), else the place's", async () => {
    await createNativeSink({ ...dest, userTeamId: 'T0OTHER' }, deps).post('hi', first);
    await createNativeSink(dest, deps).post('hi', first);
    const teams = fake.calls.filter((c) => c.method === 'chat.startStream').map((c) => c.args.recipient_team_id);
    expect(teams).toEqual(['T0OTHER', 'T0FAKE']);
  });

  it('native sink: appends only new, stable text; the final write sends the rest and stops', async () => {
    const sink = createNativeSink(dest, deps);
    const { messageId } = await sink.post('Hello wor', first);
    await sink.edit(messageId, 'Hello world and @chan', first);
    await sink.edit(messageId, 'Hello world and @chan', first); // nothing new is stable: no call
    await sink.edit(messageId, 'Hello world and @channel folks', last);
    const appends = fake.calls.filter((c) => c.method === 'chat.appendStream').map((c) => c.args.markdown_text);
    expect(appends).toEqual(['ld and ', '@\u200Bchannel folks']);
    const m = fake.message('D1', messageId);
    expect(m?.text).toBe('Hello world and @\u200Bchannel folks');
    expect(m?.streaming).toBe(false);
  });

  it('native sink: a shown word that later turns into a broadcast is replaced by an edit', async () => {
    const sink = createNativeSink(dest, deps);
    const { messageId } = await sink.post('hi @chan', first);
    await sink.edit(messageId, 'hi @channel', last);
    expect(fake.message('D1', messageId)?.text).toBe('hi @\u200Bchannel');
    expect(fake.calls.map((c) => c.method)).toEqual(['chat.startStream', 'chat.stopStream', 'chat.update']);
  });

  it('native sink: once a message fell back to edits, its edits count against the update bucket', async () => {
    const sink = createNativeSink(dest, deps);
    const keys = (op: 'post' | 'edit') => sink.buckets(op).map((b) => b.key);
    const { messageId } = await sink.post('Hello', first);
    expect(keys('edit')).toEqual(['slack:T0FAKE:append']);
    fake.switches.failAppendStream = 'message_not_in_streaming_state';
    await sink.edit(messageId, 'Hello world, ', first);
    expect(keys('edit')).toEqual(['slack:T0FAKE:update', 'slack:T0FAKE:D1:update']);
    // A new message starts a stream: the channel's posts and chat.startStream's Tier 2 bucket.
    expect(keys('post')).toEqual(['slack:T0FAKE:D1:post', 'slack:T0FAKE:start']);
    await sink.edit(messageId, 'Hello world, again', last);
    expect(fake.calls.map((c) => c.method)).toEqual([
      'chat.startStream',
      'chat.appendStream',
      'chat.stopStream',
      'chat.update',
      'chat.update',
    ]);
    expect(fake.message('D1', messageId)?.text).toBe('Hello world, again');
    // A new message streams again: its edits are appends once more.
    delete fake.switches.failAppendStream;
    await sink.post('Next', { final: false, part: 1 });
    expect(keys('edit')).toEqual(['slack:T0FAKE:append']);
  });

  it('native sink: after chat.startStream failed, posts and edits use the edit-mode buckets', async () => {
    const sink = createNativeSink(dest, deps);
    const edit = createEditSink(dest, deps);
    fake.switches.failStartStream = 'channel_type_not_supported';
    const { messageId } = await sink.post('Hello', first);
    await sink.edit(messageId, 'Hello world', last);
    for (const op of ['post', 'edit'] as const) expect(sink.buckets(op)).toEqual(edit.buckets(op));
    expect(fake.calls.map((c) => c.method)).toEqual(['chat.startStream', 'chat.postMessage', 'chat.update']);
  });
});
