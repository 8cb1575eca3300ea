import { describe, expect, it } from 'vitest';
import { relayWorld } from '../../../test/fakes/relay-world.js';
import { testRelaySettings } from '../../../test/fakes/relay-settings.js';
import type { ScriptedEvent } from '../../../test/fakes/fake-chat.js';
import type { HandleResult } from '../ports.js';
import type { TestConnectorOptions } from '../../../test/fakes/test-connector.js';
import type { RelaySettings } from '../intake/relay.js';

// An agent's work as the user sees it, through the real relay and writer into the test
// connector's sinks: a step while its tool runs (a message of its own before any text, the
// working indicator naming it), the answer exactly and without any step in it, the sources as a
// numbered list of links after it, images handed to a sink that shows them, other files named;
// SHOW_STEPS and SHOW_SOURCES off; and steps never costing the final its budget.

const SOURCES =
  '\n\n**Sources**\n1. [Example A](<https://example.com/a>)\n2. [b.example.org](<https://b.example.org/x?q=1>)';

function gate(): { promise: Promise<void>; open(): void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** A reply with a tool call that runs until `tool` opens, two sources, then the answer. */
function agentReply(tool: Promise<void>): ScriptedEvent[] {
  return [
    { type: 'step', step: { id: 's1', title: 'Searching the web', state: 'running' } },
    { type: 'gate', gate: tool },
    { type: 'step', step: { id: 's1', title: 'Searching the web', state: 'done' } },
    { type: 'source', source: { url: 'https://example.com/a', title: 'Example A' } },
    { type: 'source', source: { url: 'https://b.example.org/x?q=1' } },
    { type: 'source', source: { url: 'https://example.com/a', title: 'the same again' } },
    { type: 'source', source: { url: 'javascript:alert(1)', title: 'never a link' } },
    { type: 'text', text: 'Hello ' },
    { type: 'text', text: 'world.' },
  ];
}

function world(
  settings: Partial<RelaySettings>,
  connector: Omit<TestConnectorOptions, 'clock'>,
  events: ScriptedEvent[],
) {
  const w = relayWorld({ settings: testRelaySettings({ streamEditIntervalMs: 1000, ...settings }) }, connector);
  w.chat.script = () => ({ events });
  return w;
}

describe('an agent reply shown', () => {
  it('the running step shows while its tool runs; the answer and its sources replace it', async () => {
    const tool = gate();
    const { conn, clock } = world({}, { bucketLimit: 50, showsSteps: true }, agentReply(tool.promise));
    let result: HandleResult | undefined;
    void conn.send({ text: 'weather?' }).then((r) => (result = r));
    await clock.advanceUntil(() => conn.contentsIn('C1').length > 0, 5_000, 50);
    expect(conn.contentsIn('C1')).toEqual(['-# Searching the web…']);
    // Before the step's message was posted, the working indicator named it.
    expect(conn.statusShown).toEqual(['Searching the web']);
    tool.open();
    await clock.advanceUntil(() => result !== undefined, 10_000, 50);
    expect(result).toEqual({ status: 'answered' });
    expect(conn.contentsIn('C1')).toEqual([`Hello world.${SOURCES}`]);
    const [msg] = conn.messagesIn('C1');
    expect(msg?.final).toBe(true);
    expect(conn.writes.filter((w) => w.final).every((w) => w.steps === undefined)).toBe(true);
    expect(conn.violations).toEqual([]);
  });

  it('SHOW_STEPS=off: nothing is posted while the tool runs; the answer and sources only', async () => {
    const tool = gate();
    const { conn, clock } = world(
      { showSteps: false },
      { bucketLimit: 50, showsSteps: true },
      agentReply(tool.promise),
    );
    let result: HandleResult | undefined;
    void conn.send({ text: 'weather?' }).then((r) => (result = r));
    await clock.advance(3_000);
    expect(conn.contentsIn('C1')).toEqual([]);
    expect(conn.statusShown).toEqual([]);
    tool.open();
    await clock.advanceUntil(() => result !== undefined, 10_000, 50);
    expect(conn.contentsIn('C1')).toEqual([`Hello world.${SOURCES}`]);
    expect(conn.writes.some((w) => w.steps !== undefined)).toBe(false);
    expect(conn.violations).toEqual([]);
  });

  it('SHOW_SOURCES=off: the answer alone', async () => {
    const tool = gate();
    tool.open();
    const { conn, clock } = world(
      { showSources: false },
      { bucketLimit: 50, showsSteps: true },
      agentReply(tool.promise),
    );
    let result: HandleResult | undefined;
    void conn.send({ text: 'weather?' }).then((r) => (result = r));
    await clock.advanceUntil(() => result !== undefined, 10_000, 50);
    expect(conn.contentsIn('C1')).toEqual(['Hello world.']);
    expect(conn.violations).toEqual([]);
  });

  it('a sink that shows no steps gets no write of them: nothing before the text', async () => {
    const tool = gate();
    const { conn, clock } = world({}, { bucketLimit: 50 }, agentReply(tool.promise));
    let result: HandleResult | undefined;
    void conn.send({ text: 'weather?' }).then((r) => (result = r));
    await clock.advance(3_000);
    expect(conn.contentsIn('C1')).toEqual([]);
    tool.open();
    await clock.advanceUntil(() => result !== undefined, 10_000, 50);
    expect(conn.contentsIn('C1')).toEqual([`Hello world.${SOURCES}`]);
    expect(conn.violations).toEqual([]);
  });

  it('a step while the answer streams joins its edits and is gone from the final text', async () => {
    const tool = gate();
    const events: ScriptedEvent[] = [
      { type: 'text', text: 'Let me check. ' },
      { type: 'step', step: { id: 'call_1', title: 'get_weather', state: 'running' } },
      { type: 'gate', gate: tool.promise },
      { type: 'step', step: { id: 'call_1', title: '', state: 'done' } },
      { type: 'text', text: 'It is sunny.' },
    ];
    const { conn, clock } = world({}, { bucketLimit: 50, showsSteps: true }, events);
    let result: HandleResult | undefined;
    void conn.send({ text: 'weather?' }).then((r) => (result = r));
    await clock.advanceUntil(() => conn.contentsIn('C1')[0]?.includes('get_weather') === true, 5_000, 50);
    expect(conn.contentsIn('C1')).toEqual(['Let me check. \n-# get_weather…']);
    tool.open();
    await clock.advanceUntil(() => result !== undefined, 10_000, 50);
    expect(conn.contentsIn('C1')).toEqual(['Let me check. It is sunny.']);
    expect(conn.violations).toEqual([]);
  });

  it('images go to a sink that shows them; other files are named in a line', async () => {
    const events: ScriptedEvent[] = [
      { type: 'text', text: 'Here is the chart.' },
      { type: 'file', file: { name: 'chart.png', mime: 'image/png', url: 'https://cdn.example.com/chart.png' } },
      { type: 'file', file: { name: 'report.pdf', mime: 'application/pdf', url: 'https://cdn.example.com/r.pdf' } },
      { type: 'file', file: { name: 'data.bin', size: 3, data: new Uint8Array([1, 2, 3]) } },
      { type: 'file', file: { name: 'insecure.png', mime: 'image/png', url: 'http://cdn.example.com/i.png' } },
    ];
    const { conn, clock } = world({}, { bucketLimit: 50, showsImages: true }, events);
    let result: HandleResult | undefined;
    void conn.send({ text: 'chart?' }).then((r) => (result = r));
    await clock.advanceUntil(() => result !== undefined, 10_000, 50);
    expect(conn.contentsIn('C1')).toEqual([
      'Here is the chart.\n\n📎 [report.pdf](<https://cdn.example.com/r.pdf>)\n📎 data.bin (3 B) (not attached)\n📎 insecure.png (not attached)',
    ]);
    expect(conn.messagesIn('C1')[0]?.files).toEqual([
      { name: 'chart.png', mime: 'image/png', url: 'https://cdn.example.com/chart.png' },
    ]);
    expect(conn.violations).toEqual([]);
  });

  it('a reply of an image alone shows the image, named, not the empty-reply notice', async () => {
    const events: ScriptedEvent[] = [
      { type: 'file', file: { name: 'cat.png', mime: 'image/png', url: 'https://cdn.example.com/cat.png' } },
    ];
    const { conn, clock } = world({}, { bucketLimit: 50, showsImages: true }, events);
    let result: HandleResult | undefined;
    void conn.send({ text: 'draw a cat' }).then((r) => (result = r));
    await clock.advanceUntil(() => result !== undefined, 10_000, 50);
    expect(conn.contentsIn('C1')).toEqual(['cat.png']);
    expect(conn.messagesIn('C1')[0]?.files?.map((f) => f.name)).toEqual(['cat.png']);
  });

  it('steps never cost the final its budget: many step changes on a tight bucket, and the final lands at once', async () => {
    // 5 writes per 5 s (Discord's channel bucket), a tool flurry of 30 step changes, then the answer.
    const tools = Array.from({ length: 15 }, () => gate());
    const events: ScriptedEvent[] = [{ type: 'text', text: 'Working on it. ' }];
    for (const [i, t] of tools.entries()) {
      events.push({ type: 'step', step: { id: `t${i}`, title: `tool ${i}`, state: 'running' } });
      events.push({ type: 'gate', gate: t.promise });
      events.push({ type: 'step', step: { id: `t${i}`, title: `tool ${i}`, state: 'done' } });
    }
    const end = gate();
    events.push({ type: 'text', text: 'Done.' }, { type: 'gate', gate: end.promise });
    const { conn, clock } = world({}, { bucketLimit: 5, bucketWindowMs: 5_000, showsSteps: true }, events);
    let result: HandleResult | undefined;
    void conn.send({ text: 'go' }).then((r) => (result = r));
    for (const t of tools) {
      await clock.advance(300);
      t.open();
    }
    await clock.advance(300);
    end.open();
    const endedAt = clock.now();
    await clock.advanceUntil(() => result !== undefined, 20_000, 50);
    expect(conn.contentsIn('C1')).toEqual(['Working on it. Done.']);
    const final = conn.writes.find((w) => w.final);
    // The final was reserved: it left without waiting for the window the step edits used.
    expect((final?.at ?? Infinity) - endedAt).toBeLessThan(1_000);
    expect(conn.rateLimitHits).toBe(0);
    expect(conn.violations).toEqual([]);
  });
});
