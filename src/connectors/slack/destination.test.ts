import { webApi } from '@slack/bolt';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import { type FakeSlack, startFakeSlack } from '../../../test/fakes/slack/index.js';
import { silentLogger } from '../../logger.js';
import { clientOptions } from './app.js';
import type { SlackDestination } from './destination.js';
import { DEFAULT_SLACK_LIMITS } from './rate-limits.js';
import { LOADING_MESSAGES, STATUS_REFRESH_MS, createWorkingIndicator } from './destination.js';

// The assistant status of a long reply, through a real WebClient against the fake Slack: Slack
// clears it after about two minutes without a message, so it is set again every 90 s while the
// work goes on, with rotating loading messages; clearing it stops the refresh.

let fake: FakeSlack;
let dest: SlackDestination;
beforeEach(async () => {
  fake = await startFakeSlack();
  dest = {
    client: new webApi.WebClient(fake.botToken, clientOptions(fake.apiUrl)),
    place: { platform: 'slack', workspaceId: 'T0FAKE', channelId: 'D1', threadId: '1.0' },
    userId: 'U1',
    userMessageTs: '1.0',
    assistant: true,
  };
});
afterEach(() => fake.close());

const statusCalls = () =>
  fake.calls
    .filter((c) => c.method === 'assistant.threads.setStatus')
    // The WebClient sends arrays form-encoded as JSON, as Slack reads them.
    .map((c) => ({ status: c.args.status, loading: parsed(c.args.loading_messages) }));
const parsed = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);

it('a long reply keeps its status: set again every 90 s with loading_messages, until cleared', async () => {
  const clock = new ManualClock();
  const working = createWorkingIndicator(dest, { limits: DEFAULT_SLACK_LIMITS, logger: silentLogger, clock });
  await working.show();
  const set = { status: 'is thinking…', loading: LOADING_MESSAGES };
  expect(statusCalls()).toEqual([set]);
  await clock.advance(STATUS_REFRESH_MS - 1);
  expect(statusCalls()).toEqual([set]);
  await clock.advance(1);
  await expect.poll(statusCalls).toEqual([set, set]);
  // 90 s after the refresh, well before Slack's two minutes run out again.
  await clock.advance(STATUS_REFRESH_MS);
  await expect.poll(statusCalls).toEqual([set, set, set]);
  await working.clear();
  expect(statusCalls().at(-1)).toEqual({ status: '', loading: undefined });
  const n = statusCalls().length;
  await clock.advance(STATUS_REFRESH_MS * 3);
  expect(statusCalls()).toHaveLength(n);
  expect(clock.pendingTimers).toBe(0);
});
