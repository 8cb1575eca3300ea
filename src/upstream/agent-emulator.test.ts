import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AgentFile, ChatService, StreamEvent } from '../core/chat-port.js';
import { type Emulator, type EmulatorStreamFormat, startEmulator } from '../emulator/index.js';
import { AGENT_FILE_TEXT, AGENT_IMAGE, AGENT_SOURCES, AGENT_TOOLS } from '../emulator/agent-replies.js';
import { AGENT_PROTOCOLS } from '../emulator/replies.js';
import { collect, TEST_KEY, testClient } from '../../test/support/upstream.js';

// The emulator's agent commands (`[steps]`, `[sources]`, `[image]`, `[file]`, `[agent]`,
// `[protocol NAME]`) read by the real client, Form A and Form B, in every stream format that can
// carry events: the answer is the emulator's reply text exactly (what A1/B1 return), the two tools
// are steps running → done, the sources, the image URL and the CSV file come through.

let emu: Emulator;
let a: ChatService;
let b: ChatService;

beforeAll(async () => {
  emu = await startEmulator({ apiKey: TEST_KEY, chunkDelayMs: 0 });
  a = testClient(emu.url, 'a').service;
  b = testClient(emu.url, 'b').service;
});
afterAll(async () => {
  await a.close();
  await b.close();
  await emu.close();
});
beforeEach(() => {
  emu.reset();
  emu.setOptions({ streamFormat: 'sse-json', streamIds: 'both' });
});

const FORMATS: EmulatorStreamFormat[] = ['sse-json', 'sse-text', 'ndjson', 'json-preamble'];
const steps = AGENT_TOOLS.flatMap((t) => [
  { id: t.id, title: t.title, state: 'running' },
  { id: t.id, title: t.title, state: 'done' },
]);
/** A protocol carries the tool's name, not a title. */
const namedSteps = AGENT_TOOLS.flatMap((t) => [
  { id: t.id, title: t.name, state: 'running' },
  { id: t.id, title: t.name, state: 'done' },
]);
const sources = AGENT_SOURCES.map((s) => ({ url: s.url, title: s.title }));
const csv = new Uint8Array(Buffer.from(AGENT_FILE_TEXT));

async function ask(service: ChatService, message: string) {
  const got = await collect(await service.stream({ botId: 'demo-bot', message }));
  const of = <K extends StreamEvent['type']>(k: K) =>
    got.events.filter((e): e is Extract<StreamEvent, { type: K }> => e.type === k);
  return {
    ...got,
    steps: of('step').map((e) => e.step),
    sources: of('source').map((e) => e.source),
    files: of('file').map((e) => e.file),
    ids: of('ids'),
  };
}

describe('[agent] in the seed forms’ named events', () => {
  for (const format of FORMATS)
    for (const form of ['a', 'b'] as const)
      it(`${format}, Form ${form.toUpperCase()}`, async () => {
        emu.setOptions({ streamFormat: format, streamIds: 'event' });
        const service = form === 'a' ? a : b;
        const message = 'What is the weather? [agent]';
        const got = await ask(service, message);
        expect(got.error).toBeUndefined();
        expect(got.text).toBe(`You said: ${message}`);
        expect(got.steps).toEqual(steps);
        expect(got.sources).toEqual(sources);
        expect(got.files).toEqual<AgentFile[]>([
          { name: AGENT_IMAGE.name, mime: AGENT_IMAGE.mime, url: AGENT_IMAGE.url },
          { name: 'table.csv', mime: 'text/csv', size: csv.byteLength, data: csv },
        ]);
        expect(got.events.at(-1)).toEqual({ type: 'end' });
        // The ids still come (Form A: in the events only, here), and the reply is stored whole.
        if (format !== 'sse-text') expect(got.ids.at(-1)?.messageId).toMatch(/^msg_/);
        expect((await service.send({ botId: 'demo-bot', message })).text).toBe(got.text);
      });

  it('each command alone adds only its part', async () => {
    expect((await ask(a, 'x [steps]')).steps).toEqual(steps);
    const s = await ask(a, 'x [sources]');
    expect([s.steps, s.sources, s.files.length]).toEqual([[], sources, 0]);
    expect((await ask(a, 'x [image]')).files.map((f) => f.url)).toEqual([AGENT_IMAGE.url]);
    expect((await ask(a, 'x [file]')).files.map((f) => f.name)).toEqual(['table.csv']);
  });

  it('a plain stream carries the text only', async () => {
    emu.setOptions({ streamFormat: 'plain' });
    const got = await ask(b, 'hi [agent]');
    expect([got.text, got.steps, got.sources, got.files]).toEqual(['You said: hi [agent]', [], [], []]);
  });
});

describe('[protocol NAME]', () => {
  for (const protocol of AGENT_PROTOCOLS)
    for (const format of ['sse-json', 'ndjson', 'json-preamble'] as EmulatorStreamFormat[])
      it(`${protocol} as ${format}, both forms`, async () => {
        emu.setOptions({ streamFormat: format, streamIds: 'event' });
        for (const service of [a, b]) {
          const message = `Hello there [agent] [protocol ${protocol}]`;
          const got = await ask(service, message);
          expect(got.error).toBeUndefined();
          expect(got.text).toBe(`You said: ${message}`);
          expect(got.steps).toEqual(namedSteps);
          expect(got.sources).toEqual(sources);
          expect(got.files.map((f) => [f.url ?? '', f.data?.byteLength ?? 0])).toEqual([
            [AGENT_IMAGE.url, 0],
            ['', csv.byteLength],
          ]);
          expect(got.ids.at(-1)?.messageId).toMatch(/^msg_/);
          expect(got.events.at(-1)).toEqual({ type: 'end' });
        }
      });

  it('frames written in halves (split mid-character) read the same', async () => {
    emu.setOptions({ streamFormat: 'sse-json', splitWrites: true });
    try {
      for (const protocol of AGENT_PROTOCOLS) {
        const got = await ask(b, `Grüße 🌍 [agent] [protocol ${protocol}]`);
        expect(got.text, protocol).toBe(`You said: Grüße 🌍 [agent] [protocol ${protocol}]`);
        expect(got.steps, protocol).toEqual(namedSteps);
        expect(got.sources, protocol).toEqual(sources);
      }
    } finally {
      emu.setOptions({ splitWrites: false });
    }
  });

  it('a protocol stream error is an upstream error', async () => {
    for (const protocol of AGENT_PROTOCOLS) {
      const got = await ask(a, `x [protocol ${protocol}] [error 2]`);
      expect((got.error as Error | undefined)?.message, protocol).toMatch(/failed while answering/);
    }
  });

  it('without agent commands a protocol streams the text alone', async () => {
    const got = await ask(b, 'plain words [protocol anthropic]');
    expect([got.text, got.steps.length, got.sources.length]).toEqual([
      'You said: plain words [protocol anthropic]',
      0,
      0,
    ]);
  });
});
