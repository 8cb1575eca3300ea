import { describe, expect, it } from 'vitest';
import { Greetings, Viewing, viewedItems } from './agent-home.js';

// What the Agent messaging experience's context events say, read defensively, and the bounded
// memories of who was greeted and what each user views.

describe('viewedItems', () => {
  it('reads channels, canvases, lists and messages in Slack order, teams kept', () => {
    const context = {
      entities: [
        { type: 'slack#/types/channel_id', value: 'C1', team_id: 'T1' },
        { type: 'slack#/types/message_context', value: { channel_id: 'C2', message_ts: '1.5' } },
        { type: 'slack#/types/canvas_id', value: 'F1' },
        { type: 'slack#/types/list_id', value: 'F2' },
      ],
    };
    expect(viewedItems(context)).toEqual([
      { kind: 'channel', id: 'C1', workspaceId: 'T1' },
      { kind: 'message', id: 'C2', messageId: '1.5' },
      { kind: 'canvas', id: 'F1' },
      { kind: 'list', id: 'F2' },
    ]);
  });

  it('leaves out what it does not know or cannot read; an empty context is nothing', () => {
    const odd = [
      null,
      'C1',
      { type: 'slack#/types/future_thing', value: 'X' },
      { type: 'slack#/types/channel_id', value: 7 },
      { type: 'slack#/types/message_context', value: 'C1' },
      { type: 'slack#/types/channel_id', value: '' },
    ];
    expect(viewedItems({ entities: odd })).toEqual([]);
    expect(viewedItems({})).toEqual([]);
    expect(viewedItems(undefined)).toEqual([]);
    expect(viewedItems({ entities: 'C1' })).toEqual([]);
  });

  it('keeps at most 5', () => {
    const entities = Array.from({ length: 9 }, (_, i) => ({ type: 'slack#/types/channel_id', value: `C${i}` }));
    expect(viewedItems({ entities }).map((v) => v.id)).toEqual(['C0', 'C1', 'C2', 'C3', 'C4']);
  });
});

describe('Viewing', () => {
  it("a message's own context wins; the user's last is kept an hour, per workspace and user", () => {
    let now = 0;
    const v = new Viewing(() => now);
    v.note('T1', 'U1', [{ kind: 'channel', id: 'C1' }]);
    expect(v.of('T1', 'U1', undefined)).toEqual([{ kind: 'channel', id: 'C1' }]);
    expect(v.of('T1', 'U1', { entities: [{ type: 'slack#/types/channel_id', value: 'C9' }] })).toEqual([
      { kind: 'channel', id: 'C9' },
    ]);
    expect(v.of('T2', 'U1', undefined)).toEqual([]);
    expect(v.of('T1', 'U2', undefined)).toEqual([]);
    now = 60 * 60_000 + 1;
    expect(v.of('T1', 'U1', undefined)).toEqual([]);
    expect(v.size).toBe(0);
  });

  it('is bounded: the oldest user is forgotten first', () => {
    const v = new Viewing(() => 0);
    for (let i = 0; i <= 10_000; i++) v.note('T1', `U${i}`, [{ kind: 'channel', id: 'C1' }]);
    expect(v.size).toBe(10_000);
    expect(v.of('T1', 'U0', undefined)).toEqual([]);
    expect(v.of('T1', 'U10000', undefined)).toHaveLength(1);
  });
});

describe('Greetings', () => {
  it('says first once per workspace and user, and stays bounded', () => {
    const g = new Greetings();
    expect(g.first('T1', 'U1')).toBe(true);
    expect(g.first('T1', 'U1')).toBe(false);
    expect(g.first('T2', 'U1')).toBe(true);
    for (let i = 0; i < 10_005; i++) g.first('T3', `U${i}`);
    expect(g.size).toBe(10_000);
  });
});
