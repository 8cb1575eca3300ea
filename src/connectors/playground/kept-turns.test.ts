import { describe, expect, it } from 'vitest';
import type { PlaygroundTurnRecord, PlaygroundTurnStore } from '../../core/ports.js';
import { silentLogger } from '../../logger.js';
import { ConversationTable } from './conversation-table.js';
import { KEPT_FILE_BYTES_PER_TURN, type KeptTurns, keepTurn, readKept } from './kept-turns.js';

// What the page showed of a turn, kept in the store and read back into a new process's memory
// (issue 41): bounded file bytes, the order of the turns, memory winning over the store for a
// turn both hold, and a record this version cannot read left out.

/** A store in memory with the real one's rules (order of first save, newest `keep`). */
function memoryStore(): PlaygroundTurnStore & { rows: PlaygroundTurnRecord[] } {
  const rows: PlaygroundTurnRecord[] = [];
  return {
    rows,
    async save(t, keep) {
      const i = rows.findIndex((r) => r.conversation === t.conversation && r.turnId === t.turnId);
      if (i >= 0) rows[i] = t;
      else rows.push(t);
      const mine = rows.filter((r) => r.conversation === t.conversation);
      for (const r of mine.slice(0, Math.max(0, mine.length - keep))) rows.splice(rows.indexOf(r), 1);
    },
    async list(conversation) {
      return rows.filter((r) => r.conversation === conversation);
    },
  };
}

const kept = (store: PlaygroundTurnStore): KeptTurns => ({
  store,
  table: new ConversationTable(),
  logger: silentLogger,
  now: () => 1000,
  saving: new Map(),
});

/** A data URL of `n` characters in all. */
const dataUrl = (n: number): string => {
  const head = 'data:text/plain;base64,';
  return head + 'A'.repeat(n - head.length);
};

describe('kept turns', () => {
  it('a turn is read back by a new process as it was shown, files past the byte bound by name only', async () => {
    const store = memoryStore();
    const before = kept(store);
    before.table.keepAsk('c', { eventId: 'e1', text: 'make files' });
    const big = KEPT_FILE_BYTES_PER_TURN - 1000;
    before.table.publish({
      id: 'e1.0',
      conversation: 'c',
      text: 'Here.',
      state: 'final',
      replyKey: 'k1',
      feedback: true,
      writes: 4,
      steps: [{ id: 's1', title: 'Searching', state: 'done' }],
      files: [
        { name: 'a.txt', size: big, dataUrl: dataUrl(big) },
        { name: 'b.txt', size: 2000, dataUrl: dataUrl(2000) },
        { name: 'c.txt', size: 500, dataUrl: dataUrl(500) },
        { name: 'chart.png', url: 'https://example.com/chart.png' },
      ],
    });
    keepTurn(before, 'c', 'e1');
    await before.saving.get('c');

    const after = kept(store);
    await readKept(after, 'c');
    const entry = after.table.get('c');
    expect(entry?.asks).toEqual([{ eventId: 'e1', text: 'make files' }]);
    expect(entry?.replies).toHaveLength(1);
    expect(entry?.replies[0]).toMatchObject({ id: 'e1.0', state: 'final', replyKey: 'k1', feedback: true });
    expect(entry?.replies[0]?.steps).toEqual([{ id: 's1', title: 'Searching', state: 'done' }]);
    // The first fits, the second would pass the bound (named only), the third still fits.
    expect(entry?.replies[0]?.files).toEqual([
      { name: 'a.txt', size: big, dataUrl: dataUrl(big) },
      { name: 'b.txt', size: 2000 },
      { name: 'c.txt', size: 500, dataUrl: dataUrl(500) },
      { name: 'chart.png', url: 'https://example.com/chart.png' },
    ]);
  });

  it('stored turns come before what memory holds, which wins for a turn both have; unreadable ones are left out', async () => {
    const store = memoryStore();
    const shown = (ask: string, replies: unknown[] = []) => JSON.stringify({ ask: { text: ask }, replies });
    await store.save({ conversation: 'c', turnId: 'old', shown: shown('old one'), at: 1 }, 50);
    await store.save({ conversation: 'c', turnId: 'junk', shown: '{"nothing":', at: 2 }, 50);
    await store.save({ conversation: 'c', turnId: 'both', shown: shown('stored copy'), at: 3 }, 50);
    const k = kept(store);
    k.table.keepAsk('c', { eventId: 'both', text: 'memory copy' });
    k.table.keepAsk('c', { eventId: 'new', text: 'new one' });
    await readKept(k, 'c');
    expect(k.table.get('c')?.asks.map((a) => a.text)).toEqual(['old one', 'memory copy', 'new one']);
    // A second read does not add the stored turns again.
    await readKept(k, 'c');
    expect(k.table.get('c')?.asks).toHaveLength(3);
  });

  it('a Retry mark is kept: the replaced turn reads back replaced, its reply gone', async () => {
    const store = memoryStore();
    const k = kept(store);
    k.table.keepAsk('c', { eventId: 'e1', text: 'try me' });
    k.table.publish({ id: 'e1.0', conversation: 'c', text: 'oops', state: 'error', feedback: false, writes: 1 });
    keepTurn(k, 'c', 'e1');
    k.table.replaceTurn('c', 'e1');
    keepTurn(k, 'c', 'e1');
    await k.saving.get('c');
    const again = kept(store);
    await readKept(again, 'c');
    expect(again.table.get('c')?.asks).toEqual([{ eventId: 'e1', text: 'try me', replaced: true }]);
    expect(again.table.get('c')?.replies).toEqual([]);
  });
});
