import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import {
  call,
  openEvents,
  openPage,
  pageHeaders,
  type PlaygroundWorld,
  post,
  type Session,
  startPlayground,
} from './playground-http.js';

// Issue 41: what the page showed survives a restart of the bridge, not only a reload. A bridge
// on a store file answers an agent's reply (steps, sources, a file) that gets a vote, and a reply
// that fails; it stops, a new bridge opens the same file (the same upstream), and its history
// route shows the same: the steps, sources, file and vote, the failed reply as failed. A Retry
// made after the restart names a turn only the store remembers, and the history leaves it out.

interface Entry {
  id: string;
  role: string;
  text: string;
  state?: string;
  replyKey?: string;
  feedback?: boolean;
  vote?: string;
  files?: { name: string; dataUrl?: string }[];
  steps?: { id: string; title: string; state: string }[];
}

describe('the playground after a restart of the bridge (issue 41)', () => {
  let dir: string;
  let emulator: Emulator;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'playground-restart-'));
    emulator = await startEmulator();
  });
  afterAll(async () => {
    await emulator?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = () => startPlayground({ allowRemote: false }, {}, { reuse: { dir, emulator } });

  /** A message and the end of its turn; answers the turn's eventId. */
  async function turn(w: PlaygroundWorld, s: Session, body: Record<string, string>): Promise<string> {
    const events = await openEvents(w.port, `/playground/events?conversation=kept&page_token=${s.token}`, {
      host: s.host,
      cookie: s.cookie,
    });
    try {
      const sent = await post(w.port, 'send', pageHeaders(s), { conversation: 'kept', ...body });
      expect(sent.status).toBe(202);
      const { eventId } = JSON.parse(sent.body) as { eventId: string };
      await events.next((e) => {
        const d = e.data as { eventId?: string; state?: string };
        return e.event === 'turn' && d.eventId === eventId && d.state === 'done';
      });
      return eventId;
    } finally {
      events.close();
    }
  }

  async function history(w: PlaygroundWorld, s: Session): Promise<Entry[]> {
    const r = await call(w.port, 'GET', '/playground/api/history?conversation=kept', {
      host: s.host,
      cookie: s.cookie,
      'x-playground-token': s.token,
    });
    expect(r.status).toBe(200);
    return (JSON.parse(r.body) as { messages: Entry[] }).messages;
  }

  /** The same browser (its id cookie outlives the process) with the new process's page token. */
  async function again(w: PlaygroundWorld, s: Session): Promise<Session> {
    const host = `127.0.0.1:${w.port}`;
    const page = await call(w.port, 'GET', '/', { host, cookie: s.cookie });
    const token = /<meta name="playground-token" content="([^"]+)">/.exec(page.body)?.[1] ?? '';
    return { ...s, host, origin: `http://${host}`, token };
  }

  it('steps, sources, files, votes and a failed reply are read back; a Retry after it replaces that reply', async () => {
    let w = await start();
    let s: Session;
    let failed: string;
    let before: Entry[];
    try {
      s = await openPage(w.port);
      await turn(w, s, { text: 'show your work [agent]' });
      emulator.injectFault({ error: 1, times: 1, endpoint: 'any' });
      failed = await turn(w, s, { text: 'try me' });
      before = await history(w, s);
      const agent = before.find((m) => m.role === 'assistant' && m.text.includes('show your work'));
      const vote = await post(w.port, 'vote', pageHeaders(s), { replyKey: agent?.replyKey, vote: 'up' });
      expect(JSON.parse(vote.body)).toEqual({ result: 'recorded' });
      before = await history(w, s);
    } finally {
      await w.close();
    }

    w = await start();
    try {
      s = await again(w, s);
      const after = await history(w, s);
      // What the page showed, as it showed it, with the vote.
      expect(after).toEqual(before);
      expect(after.map((m) => [m.role, m.state ?? 'sent'])).toEqual([
        ['user', 'sent'],
        ['assistant', 'final'],
        ['user', 'sent'],
        ['assistant', 'error'],
      ]);
      const agent = after[1];
      expect(agent?.vote).toBe('up');
      expect(agent?.feedback).toBe(true);
      expect(agent?.steps).toEqual([
        { id: 'call_1', title: 'Searching the docs', state: 'done' },
        { id: 'call_2', title: 'Checking the weather', state: 'done' },
      ]);
      expect(agent?.text).toContain('https://example.com/docs/streaming');
      expect(agent?.text).toContain('https://example.org/weather/paris');
      // The image by its https link, the CSV by its bytes (small: kept whole).
      expect(agent?.files?.map((f) => f.name)).toEqual(['chart.png', 'table.csv']);
      expect(agent?.files?.[1]?.dataUrl).toMatch(/^data:text\/csv;base64,/);

      // Retry on the failed reply, in the new process: the failed turn leaves the history.
      await turn(w, s, { text: 'try me', retryOf: failed });
      const retried = await history(w, s);
      expect(retried.map((m) => [m.role, m.state ?? 'sent', m.text])).toEqual([
        ['user', 'sent', 'show your work [agent]'],
        ['assistant', 'final', agent?.text],
        ['user', 'sent', 'try me'],
        ['assistant', 'final', 'You said: try me'],
      ]);
    } finally {
      await w.close();
    }

    // And the Retry's mark outlives a second restart.
    w = await start();
    try {
      s = await again(w, s);
      const kept = await history(w, s);
      expect(kept.map((m) => [m.role, m.state ?? 'sent'])).toEqual([
        ['user', 'sent'],
        ['assistant', 'final'],
        ['user', 'sent'],
        ['assistant', 'final'],
      ]);
      expect(kept[1]?.steps).toHaveLength(2);
    } finally {
      await w.close();
    }
  }, 120_000);
});
