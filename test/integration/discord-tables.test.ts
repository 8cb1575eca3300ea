import { expect, it } from 'vitest';
import { DISCORD_TABLES } from '../../src/connectors/discord/reply-sink.js';
import { fencesBalanced } from '../../src/core/reply/fences.js';
import { findTables } from '../../src/core/reply/table-parser.js';
import { monospaceTable } from '../../src/core/reply/tables.js';
import { tableMarkdown } from '../../src/emulator/replies.js';
import { type Stack, stackPerTest } from './discord/stack.js';

// Discord has no table: a reply's Markdown table arrives, through the real discord.js against
// the fake Discord, as a code block whose columns line up (alignment kept); a long table is split
// between rows, a wide one cut by columns with a note, and nothing is lost.

const start = stackPerTest();

async function ask(stack: Stack, text: string): Promise<string[]> {
  const { fake } = stack;
  const { threadId } = stack.ask(text);
  return fake.waitUntil(
    () => {
      const msgs = fake.botMessages(threadId).map((m) => m.content);
      return msgs.some((m) => m.includes('That is all.')) ? msgs : undefined;
    },
    20_000,
    'the whole reply',
  );
}

/** Every message fits and balances its fences; every row of the table is on one line, in order. */
function expectRowsWhole(msgs: string[], rows: number) {
  for (const m of msgs) {
    expect(m.length).toBeLessThanOrEqual(2000);
    expect(fencesBalanced(m)).toBe(true);
  }
  const lines = msgs.join('\n').split('\n');
  let next = 1;
  for (const l of lines) {
    const m = /^row (\d+) +\|/.exec(l);
    if (m === null) continue;
    if (Number(m[1]) === next) next++;
    expect(l).toMatch(/^row \d+ +\| +\d+ \| +[bc]\d+/);
  }
  expect(next - 1).toBe(rows);
}

it('a table becomes an aligned code block, alignment kept, the words around it in order', async () => {
  const s = await start({ chunkDelayMs: 0 });
  const [msg, ...more] = await ask(s, 'show me [table 3]');
  expect(more).toHaveLength(0);
  expect(msg).toBe(
    [
      'Here is the table:',
      '',
      '```',
      'Item  | Col 2 | Col 3',
      '------|-------|------',
      'row 1 |     7 |  b1',
      'row 2 |    14 |  c2',
      'row 3 |    21 |  b3',
      '```',
      '',
      'That is all.',
    ].join('\n'),
  );
});

it('a 150-row table is split between rows over messages of at most 2000 characters', async () => {
  const s = await start({ chunkDelayMs: 0 });
  const msgs = await ask(s, 'show me [table 150]');
  expect(msgs.length).toBeGreaterThanOrEqual(2);
  expectRowsWhole(msgs, 150);
});

it('a 25-column table is cut by columns, the first column in each block, with a note; every cell kept', async () => {
  const s = await start({ chunkDelayMs: 0 });
  const msgs = await ask(s, 'show me [table 4] [cols 25]');
  const all = msgs.join('\n');
  expect(all).toContain('Table too wide for one block: columns 1 and 2–');
  for (let i = 1; i <= 4; i++) for (let j = 4; j <= 25; j++) expect(all).toContain(`r${i}c${j}`);
  for (const line of all.split('\n')) expect(DISCORD_TABLES.widthOf(line)).toBeLessThanOrEqual(100);
  const expected = monospaceTable(findTables(tableMarkdown(4, 25))[0]!.table, DISCORD_TABLES);
  expect(all.replace(/```\n```\n/g, '')).toContain(expected.split('\n').slice(0, 8).join('\n'));
});

it('a table after a long text: the reply is split, no row cut, the table whole', async () => {
  const s = await start({ chunkDelayMs: 0 });
  const msgs = await ask(s, 'show me [long 3000] [table 60]');
  expect(msgs.length).toBeGreaterThanOrEqual(2);
  expectRowsWhole(msgs, 60);
});
