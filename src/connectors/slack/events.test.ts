import { describe, expect, it } from 'vitest';
import { ALLOW_ALL, isAllowed } from '../../core/intake/admission.js';
import type { WorkspaceRef } from '../../core/ports.js';
import { classify, eventTeams, placeOf, slackFile, stripBotMention, tokenOrigins } from './events.js';

const bot = { userId: 'UB', botId: 'BB' };
const base = { type: 'message', channel: 'C1', channel_type: 'channel', user: 'U1', text: 'hi', ts: '2.0' };

describe('classify', () => {
  it('answers mentions, DMs and thread messages (the latter after a membership check)', () => {
    expect(classify({ ...base, type: 'app_mention', text: '<@UB> hi' }, bot)).toEqual({ kind: 'mention' });
    expect(classify({ ...base, text: '<@UB> hi' }, bot)).toEqual({ kind: 'mention' });
    expect(classify({ ...base, channel: 'D1', channel_type: 'im' }, bot)).toEqual({ kind: 'dm' });
    expect(classify({ ...base, thread_ts: '1.0' }, bot)).toEqual({ kind: 'thread', threadTs: '1.0' });
    expect(classify({ ...base, subtype: 'file_share', channel_type: 'im' }, bot)).toEqual({ kind: 'dm' });
  });

  it('ignores bots, itself, edits, joins and plain channel chatter', () => {
    for (const ev of [
      { ...base, bot_id: 'B2', channel_type: 'im' },
      { ...base, subtype: 'bot_message', channel_type: 'im' },
      { ...base, user: 'UB', channel_type: 'im' },
      { ...base, subtype: 'message_changed', channel_type: 'im' },
      { ...base, subtype: 'message_deleted', channel_type: 'im' },
      { ...base, subtype: 'channel_join', text: '<@UB> joined' },
      { ...base },
      { ...base, thread_ts: '2.0' }, // a thread's parent itself
    ]) {
      expect(classify(ev, bot).kind).toBe('ignore');
    }
  });
});

describe('placeOf', () => {
  it('puts a top-level mention in its own thread, a reply in its thread, a DM in its channel', () => {
    expect(placeOf({ ...base }, { kind: 'mention' }, 'T1')).toEqual({
      platform: 'slack',
      workspaceId: 'T1',
      channelId: 'C1',
      threadId: '2.0',
    });
    expect(placeOf({ ...base, thread_ts: '1.0' }, { kind: 'mention' }, 'T1').threadId).toBe('1.0');
    expect(placeOf({ ...base, channel: 'D1' }, { kind: 'dm' }, 'T1')).toEqual({
      platform: 'slack',
      workspaceId: 'T1',
      channelId: 'D1',
    });
    expect(placeOf({ ...base, channel: 'D1', thread_ts: '1.5' }, { kind: 'dm' }, 'T1').threadId).toBe('1.5');
  });
});

describe('stripBotMention', () => {
  it('removes only the bot mention', () => {
    expect(stripBotMention('<@UB> what about <@U2>?', 'UB')).toBe('what about <@U2>?');
    expect(stripBotMention('hey <@UB|assistant>  reset', 'UB')).toBe('hey reset');
    expect(stripBotMention('line one\n<@UB>\nline two', 'UB')).toBe('line one\n\nline two');
  });
});

describe('eventTeams and the allowlist (the core check, with Slack events)', () => {
  const ev = { type: 'message', channel: 'C1', user: 'U1', ts: '1.0' };
  const allow = (teams: string[], workspaces: WorkspaceRef[], channels: string[] = [], channel = 'C1') => {
    const place = { platform: 'slack' as const, workspaceId: workspaces[0]?.id ?? '', channelId: channel };
    return isAllowed(
      { slack: { workspaces: teams, channels }, discord: ALLOW_ALL },
      { place, origin: place, workspaces },
    );
  };
  const token = { teamId: 'T1', enterpriseId: undefined };

  it('the event names the team, not the token', () => {
    const t = eventTeams(
      { team_id: 'T9', authorizations: [{ team_id: 'T9', enterprise_id: null }] },
      { ...ev, team: 'T9' },
      token,
    );
    expect(t.teamId).toBe('T9');
    expect(t.workspaces).toEqual([{ id: 'T9' }]);
    expect(allow(['T1'], t.workspaces)).toBe(false);
    expect(allow(['T9'], t.workspaces)).toBe(true);
    // A body that names no team falls back to the token's.
    expect(eventTeams({}, ev, token).teamId).toBe('T1');
  });

  it('org-wide install: the org id admits its workspaces', () => {
    const body = {
      team_id: 'T5',
      enterprise_id: 'E1',
      authorizations: [{ team_id: null, enterprise_id: 'E1', is_enterprise_install: true }],
    };
    const t = eventTeams(body, { ...ev, team: 'T6' }, token);
    expect(t).toEqual({
      teamId: 'T5',
      enterpriseId: 'E1',
      workspaces: [
        { id: 'T5', organizationId: 'E1' },
        { id: 'T6', organizationId: 'E1' },
      ],
    });
    expect(allow(['E1'], t.workspaces)).toBe(true);
    expect(allow(['T5'], t.workspaces)).toBe(false);
    expect(allow(['T5', 'T6'], t.workspaces)).toBe(true);
  });

  it('Slack Connect: an outside author needs their own team listed, whatever the org', () => {
    const body = {
      team_id: 'T1',
      enterprise_id: 'E1',
      is_ext_shared_channel: true,
      authorizations: [{ team_id: 'T1', enterprise_id: 'E1' }],
    };
    const t = eventTeams(body, { ...ev, team: 'T9', user_team: 'T9', source_team: 'T9' }, token);
    expect(t.workspaces).toEqual([{ id: 'T1', organizationId: 'E1' }, { id: 'T9' }]);
    expect(allow(['T1'], t.workspaces)).toBe(false);
    expect(allow(['E1'], t.workspaces)).toBe(false);
    expect(allow(['T1', 'T9'], t.workspaces)).toBe(true);
    expect(allow([], t.workspaces)).toBe(true);
  });

  it('applies the channel list as before', () => {
    const ws = [{ id: 'T1' }];
    expect(allow(['T1'], ws, ['C2'])).toBe(false);
    expect(allow(['T1'], ws, ['C2'], 'C2')).toBe(true);
    expect(allow(['T1'], [])).toBe(false);
  });
});

describe('slackFile: the token only for Slack file hosts', () => {
  const origins = tokenOrigins('https://slack.com/api/');
  const file = (url: string) => slackFile({ name: 'a.txt', url_private: url }, 'xoxb-t', origins);
  it('gives https://files.slack.com and the API origin the token', () => {
    expect(file('https://files.slack.com/files-pri/T1-F1/a.txt').headers).toEqual({ authorization: 'Bearer xoxb-t' });
    expect(file('https://slack.com/files-pri/T1-F1/a.txt').downloadUrl).toBeDefined();
  });
  it('withholds it from another scheme, port or host', () => {
    for (const url of [
      'http://files.slack.com/a.txt',
      'https://files.slack.com:8443/a.txt',
      'https://files.slack.com.evil.example/a.txt',
      'https://evil.example/a.txt',
      'not a url',
    ]) {
      const f = file(url);
      expect(f.headers).toBeUndefined();
      expect(f.downloadUrl).toBeUndefined();
      expect(f.untrustedHost).toBeDefined();
    }
  });
});
