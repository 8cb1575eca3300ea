import { describe, expect, it } from 'vitest';
import { call, conversationEvents, pageHeaders, playgroundPerBlock, post } from './playground-http.js';

// The playground's API for the page's chat features, at the HTTP level (the browser tests show
// them in a page): the stream says when a turn starts and ends (`event: turn`), a Stop by
// conversation stops a reply before its first word, the history carries this browser's votes,
// and the icon is answered like the page (this machine's names only).

describe('the playground API for typing, early Stop, votes and the icon', () => {
  const pg = playgroundPerBlock({ allowRemote: false });

  const events = (conversation: string) => conversationEvents(pg.w.port, pg.s, conversation);
  const history = async (conversation: string) =>
    JSON.parse(
      (
        await call(pg.w.port, 'GET', `/playground/api/history?conversation=${conversation}`, {
          host: pg.s.host,
          cookie: pg.s.cookie,
          'x-playground-token': pg.s.token,
        })
      ).body,
    ) as { messages: { role: string; replyKey?: string; vote?: string }[] };

  it('a turn is announced working, then done with its result, after its reply', async () => {
    const stream = await events('turns');
    const sent = await post(pg.w.port, 'send', pageHeaders(pg.s), { conversation: 'turns', text: 'hi' });
    const { eventId } = JSON.parse(sent.body) as { eventId: string };
    const working = await stream.next((e) => e.event === 'turn');
    expect(working.data).toEqual({ eventId, state: 'working' });
    const done = await stream.next((e) => e.event === 'turn' && (e.data as { state: string }).state === 'done');
    expect(done.data).toEqual({ eventId, state: 'done', result: 'answered' });
    const replies = stream.events.filter((e) => e.event === 'reply');
    // Every write of the reply came before the end of its turn.
    expect(stream.events.indexOf(done)).toBeGreaterThan(stream.events.indexOf(replies.at(-1) ?? done));
    expect(replies.at(-1)?.data).toMatchObject({ id: `${eventId}.0`, state: 'final', text: 'You said: hi' });
    stream.close();
  });

  it('Stop by conversation before the first word: the reply ends stopped, with no answer text', async () => {
    const stream = await events('early');
    const sent = await post(pg.w.port, 'send', pageHeaders(pg.s), {
      conversation: 'early',
      text: 'wait for it [chunks 1] [delay 20000]',
    });
    const { eventId } = JSON.parse(sent.body) as { eventId: string };
    await stream.next((e) => e.event === 'turn');
    const stop = await post(pg.w.port, 'stop', pageHeaders(pg.s), { conversation: 'early' });
    expect(JSON.parse(stop.body)).toEqual({ result: 'stopped' });
    const done = await stream.next((e) => e.event === 'turn' && (e.data as { state: string }).state === 'done');
    // The relay counts a stopped reply as answered: the reply's own state says it was stopped.
    expect(done.data).toMatchObject({ eventId, state: 'done' });
    const last = stream.events.filter((e) => e.event === 'reply').at(-1)?.data as { state: string; text: string };
    expect(last.state).toBe('stopped');
    expect(last.text).not.toContain('You said');
    // Nothing left to stop.
    expect(JSON.parse((await post(pg.w.port, 'stop', pageHeaders(pg.s), { conversation: 'early' })).body)).toEqual({
      result: 'not_found',
    });
    stream.close();
  });

  it("the history carries this browser's vote on a reply, and no one else's", async () => {
    const stream = await events('voted');
    await post(pg.w.port, 'send', pageHeaders(pg.s), { conversation: 'voted', text: 'rate me' });
    const final = await stream.next((e) => e.event === 'reply' && (e.data as { state: string }).state === 'final');
    const { replyKey } = final.data as { replyKey: string };
    stream.close();
    expect((await history('voted')).messages.find((m) => m.replyKey === replyKey)?.vote).toBeUndefined();
    const voted = await post(pg.w.port, 'vote', pageHeaders(pg.s), { replyKey, vote: 'up' });
    expect(JSON.parse(voted.body)).toEqual({ result: 'recorded' });
    expect((await history('voted')).messages.find((m) => m.replyKey === replyKey)?.vote).toBe('up');
  });

  it('/favicon.ico: an SVG for this machine, 403 under a name that is not its own', async () => {
    const icon = await call(pg.w.port, 'GET', '/favicon.ico', { host: pg.s.host });
    expect(icon.status).toBe(200);
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    expect((await call(pg.w.port, 'GET', '/favicon.ico', { host: 'attacker.example' })).status).toBe(403);
  });
});
