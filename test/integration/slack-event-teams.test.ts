import { afterEach, expect, it } from 'vitest';
import { parseBotRoutes } from '../../src/config/routes.js';
import { botRouter } from '../../src/core/place.js';
import type { AllowList } from '../../src/core/intake/admission.js';
import { LogLines } from '../support/log-lines.js';
import { BOT, type SlackStack, startSlackStack } from './slack-stack.js';

// "Allowlists on the event's workspace": SLACK_ALLOWED_TEAMS and BOT_ROUTES see the team the
// event comes from (team_id, authorizations, enterprise_id; the author's own team in a Slack
// Connect channel), not the one bot token's team from auth.test. Signed events through the
// bridge's Events API listener, Bolt, the relay and the fake Slack (whose token is T0FAKE's).

let s: SlackStack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const NONE: AllowList = { workspaces: [], channels: [] };

async function stack(allowedTeams: string[], logs?: LogLines, routes = '') {
  s = await startSlackStack({
    mode: 'http',
    slack: { allowedTeams },
    relay: { allow: { slack: { workspaces: allowedTeams, channels: [] }, discord: NONE } },
    ...(logs !== undefined ? { logger: logs.logger } : {}),
    botFor: botRouter(parseBotRoutes(routes), BOT),
    bots: ['bot-nine'],
  });
  return s;
}

/** A signed mention in `channel`, its body shaped by `shape`; resolves with the HTTP status. */
async function mention(
  st: SlackStack,
  channel: string,
  text: string,
  teamId: string,
  shape: (body: Record<string, unknown>, event: Record<string, unknown>) => void = () => {},
) {
  const post = st.fake.userPost({ channel, text: `<@U0BOT> ${text}`, teamId });
  const event = { ...(post.mention ?? {}) };
  const body = st.fake.envelope(event, teamId);
  shape(body, event);
  body.event = event;
  const res = await st.fake.postSignedEvent(st.eventsUrl, body);
  return { status: res.status, ts: post.ts };
}

it('one token of T0FAKE, SLACK_ALLOWED_TEAMS=T0FAKE: an event whose team_id and authorizations name T9 is not answered', async () => {
  const logs = new LogLines('debug');
  const st = await stack(['T0FAKE'], logs);
  const foreign = await mention(st, 'C9', 'from T9', 'T9');
  expect(foreign.status).toBe(200);
  await logs.waitFor('slack event outside the allowed teams/channels', (l) => JSON.stringify(l.teams) === '["T9"]');

  const home = await mention(st, 'C1', 'from home', 'T0FAKE');
  expect(home.status).toBe(200);
  await st.settled(1);
  expect(st.chatRequests().map((r) => r.message)).toEqual(['from home']);
  expect(st.fake.botMessages('C9', foreign.ts)).toEqual([]);
  expect(st.fake.botMessages('C1', home.ts)[0]?.text).toBe('You said: from home');
});

it('an org-wide install: SLACK_ALLOWED_TEAMS=E1 admits the workspaces whose events carry E1, and no other', async () => {
  const logs = new LogLines('debug');
  const st = await stack(['E1'], logs);
  const orgWide = (enterprise: string) => (body: Record<string, unknown>) => {
    body.enterprise_id = enterprise;
    body.authorizations = [
      { enterprise_id: enterprise, team_id: null, user_id: 'U0BOT', is_bot: true, is_enterprise_install: true },
    ];
  };
  const other = await mention(st, 'C8', 'org two', 'T8', orgWide('E2'));
  expect(other.status).toBe(200);
  await logs.waitFor('slack event outside the allowed teams/channels', (l) => JSON.stringify(l.teams) === '["T8"]');
  const ours = await mention(st, 'C5', 'org one', 'T5', orgWide('E1'));
  expect(ours.status).toBe(200);
  await st.settled(1);
  expect(st.chatRequests().map((r) => [r.message, (r.metadata as { workspaceId?: string }).workspaceId])).toEqual([
    ['org one', 'T5'],
  ]);
  expect(st.fake.botMessages('C8', other.ts)).toEqual([]);
});

it('a Slack Connect channel: an outside author is answered only when their own team is allowed', async () => {
  const logs = new LogLines('debug');
  const st = await stack(['T0FAKE'], logs);
  const outside = (body: Record<string, unknown>, event: Record<string, unknown>) => {
    body.is_ext_shared_channel = true;
    event.user_team = 'T9';
    event.source_team = 'T9';
    event.team = 'T9';
  };
  const guest = await mention(st, 'C3', 'guest asks', 'T0FAKE', outside);
  expect(guest.status).toBe(200);
  await logs.waitFor('slack event outside the allowed teams/channels', (l) => JSON.stringify(l.teams).includes('"T9"'));
  const member = await mention(st, 'C3', 'member asks', 'T0FAKE', (body) => {
    body.is_ext_shared_channel = true;
  });
  expect(member.status).toBe(200);
  await st.settled(1);
  expect(st.chatRequests().map((r) => r.message)).toEqual(['member asks']);
  expect(st.fake.botMessages('C3', guest.ts)).toEqual([]);
});

it("BOT_ROUTES follow the event's team, not the token's", async () => {
  const st = await stack([], undefined, 'slack:T9=bot-nine');
  await mention(st, 'C9', 'routed', 'T9');
  await st.settled(1);
  await mention(st, 'C1', 'default', 'T0FAKE');
  await st.settled(2);
  expect(st.chatRequests().map((r) => [r.message, r.botId])).toEqual([
    ['routed', 'bot-nine'],
    ['default', BOT],
  ]);
});
