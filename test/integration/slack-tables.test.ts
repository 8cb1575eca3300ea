import { takeEveryForm } from '../fakes/chaos-refusals.js';
import { afterEach, expect, it } from 'vitest';
import { tableMarkdown } from '../../src/emulator/replies.js';
import { allBlocks, cellText, shownBlocks } from '../fakes/slack/shown.js';
import { type SlackStack, startSlackStack } from './slack-stack.js';

interface Cell {
  type: string;
  text?: string;
  elements?: { elements: { type: string; text?: string; url?: string; style?: Record<string, boolean> }[] }[];
}

// A reply with a Markdown table, through the real Bolt against the fake Slack (which validates
// table blocks as Slack documents them): the final message shows a Block Kit table with the
// words around it in order; beyond the block's limits the table is an aligned monospace block;
// nothing is lost, however the reply is split.

// About the table block itself: a chaos run may lose answers here, not refuse the block.
const TABLE_FORMS = { refuse: takeEveryForm };

let s: SlackStack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

type Block = Record<string, unknown>;

/** What a user reads in a message's blocks: section texts and table cells, in order. */
const shown = (blocks: Block[] | undefined): string => shownBlocks(blocks ?? []);

async function ask(stack: SlackStack, channel: string, text: string) {
  const post = stack.fake.userPost({ channel, text: `<@U0BOT> ${text}` });
  await stack.fake.sendEvent(post.mention ?? {});
  await stack.settled(1);
  if (stack.results[0]?.status !== 'answered') console.log(JSON.stringify(stack.results[0]).slice(0, 2000));
  expect(stack.results[0]?.status).toBe('answered');
  return stack.fake.botMessages(channel, post.ts);
}

it('a table becomes a table block (cells, alignment, styled cells), the words before and after around it', async () => {
  s = await startSlackStack({ chunkDelayMs: 0, fake: TABLE_FORMS });
  const [msg, ...more] = await ask(s, 'C1', 'show me [table 3]');
  expect(more).toHaveLength(0);
  const blocks = allBlocks(msg);
  const types = blocks.map((b) => b.type);
  expect(types.slice(0, 3)).toEqual(['section', 'table', 'section']);
  expect(shown([blocks[0]!])).toBe('Here is the table:');
  expect(shown([blocks[2]!])).toBe('That is all.');
  const table = blocks[1] as { rows: Cell[][]; column_settings: unknown[] };
  expect(table.rows.map((r) => r.map(cellText))).toEqual([
    ['Item', 'Col 2', 'Col 3'],
    ['row 1', '7', 'b1'],
    ['row 2', '14', 'c2'],
    ['row 3', '21', 'b3'],
  ]);
  expect(table.column_settings).toEqual([{ align: 'left' }, { align: 'right' }, { align: 'center' }]);
  expect(table.rows[1]?.[2]?.elements?.[0]?.elements[0]?.style).toEqual({ bold: true });
  expect(table.rows[2]?.[2]?.elements?.[0]?.elements[0]?.style).toEqual({ code: true });
  expect(table.rows[1]?.[0]).toEqual({ type: 'raw_text', text: 'row 1' });
  // The notification text carries the table's content too.
  expect(msg?.text).toContain('row 3');
});

/** Every cell of the emulator's table appears in what the messages show, in order of rows. */
function expectWholeTable(texts: string[], rows: number, cols: number) {
  const all = texts.join('\n');
  let at = 0;
  for (let i = 1; i <= rows; i++) {
    const re = new RegExp(`row ${i}(?!\\d)`, 'g');
    re.lastIndex = at;
    const m = re.exec(all);
    expect(m, `row ${i} after row ${i - 1}`).not.toBeNull();
    at = m?.index ?? at;
    for (let j = 4; j <= cols; j++) expect(all).toContain(`r${i}c${j}`);
  }
  expect(all).toContain('That is all.');
}

it('a 150-row table (over the block’s 100 rows) arrives whole and readable, in monospace', async () => {
  s = await startSlackStack({ chunkDelayMs: 0, fake: TABLE_FORMS });
  const msgs = await ask(s, 'C2', 'show me [table 150]');
  expect(tableMarkdown(150, 3).length).toBeGreaterThan(3900);
  for (const m of msgs) expect(allBlocks(m).filter((b) => b.type === 'table').length).toBeLessThanOrEqual(1);
  expectWholeTable(
    msgs.map((m) => shown(allBlocks(m))),
    150,
    3,
  );
  expect(shown(allBlocks(msgs[0]))).toContain('```');
  // The message after the cut continues the table under its header again, as a table block.
  const rest = msgs
    .slice(1)
    .flatMap((m) => allBlocks(m))
    .find((b) => b.type === 'table') as { rows: Cell[][] } | undefined;
  expect(rest?.rows[0]?.map(cellText)).toEqual(['Item', 'Col 2', 'Col 3']);
  expect(rest?.rows.at(-1)?.map(cellText)).toEqual(['row 150', '1050', 'c150']);
});

it('a 25-column table (over the block’s 20 cells) is an aligned monospace block with every column', async () => {
  s = await startSlackStack({ chunkDelayMs: 0, fake: TABLE_FORMS });
  const msgs = await ask(s, 'C3', 'show me [table 4] [cols 25]');
  const text = msgs.map((m) => shown(allBlocks(m))).join('\n');
  expect(msgs.flatMap((m) => allBlocks(m)).some((b) => b.type === 'table')).toBe(false);
  for (let j = 2; j <= 25; j++) expect(text).toContain(`Col ${j}`);
  expectWholeTable([text], 4, 25);
  expect(text).toMatch(/row 1 +\| +7 \|/);
});

it('a table after a long text that must be split: every part valid, the table whole', async () => {
  s = await startSlackStack({ chunkDelayMs: 0, fake: TABLE_FORMS });
  const msgs = await ask(s, 'C4', 'show me [long 5000] [table 30]');
  expect(msgs.length).toBeGreaterThanOrEqual(2);
  expectWholeTable(
    msgs.map((m) => shown(allBlocks(m))),
    30,
    3,
  );
  expect(msgs.flatMap((m) => allBlocks(m)).filter((b) => b.type === 'table')).toHaveLength(1);
});
