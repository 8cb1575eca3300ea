import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_FILE_TEXT, AGENT_IMAGE, AGENT_REASONING, AGENT_TOOLS } from '../../src/emulator/agent-replies.js';
import {
  type EventStream,
  openEvents,
  openPage,
  pageHeaders,
  type PlaygroundWorld,
  post,
  type Session,
  startPlayground,
} from './playground-http.js';

// An agent's reply in the playground, at the HTTP level, through the whole bridge (config from
// the environment, main.ts's wiring, the REAL upstream client) and the emulator answering
// `[agent]` in each agent protocol: each step announced while it runs (`event: step`), the final
// reply the answer and its sources exactly, the image and the CSV offered as files. SHOW_STEPS=off
// announces no step; REPLY_FILE_MAX_BYTES below the CSV's size offers it by name only.

const PROTOCOLS = ['responses', 'chat-completions', 'ai-sdk', 'ag-ui', 'anthropic', 'seed'] as const;
const ASK = (protocol: string) =>
  `${protocol === 'seed' ? '' : `[protocol ${protocol}] `}[agent] [chunks 2] [delay 400]`;
const SOURCES =
  '\n\n**Sources**\n1. [Streaming replies](<https://example.com/docs/streaming>)\n2. [Weather in Paris](<https://example.org/weather/paris>)';
const stepTitles = (protocol: string) => AGENT_TOOLS.map((t) => (protocol === 'seed' ? t.title : t.name));
const fileName = (protocol: string) => (protocol === 'ai-sdk' ? 'file.csv' : 'table.csv');

interface Step {
  id: string;
  title: string;
  state: string;
}
interface Turn {
  stream: EventStream;
  final: { text: string };
  steps: Step[][];
  files: { name: string; url?: string; dataUrl?: string; size?: number }[];
}

function world(env: Record<string, string>) {
  let w: PlaygroundWorld;
  let s: Session;
  beforeAll(async () => {
    w = await startPlayground({ allowRemote: false }, env);
    s = await openPage(w.port);
  }, 60_000);
  afterAll(() => w?.close());
  let n = 0;
  return async (text: string): Promise<Turn> => {
    const conversation = `agent-${n++}`;
    const stream = await openEvents(
      w.port,
      `/playground/events?conversation=${conversation}&page_token=${encodeURIComponent(s.token)}`,
      { host: s.host, cookie: s.cookie },
    );
    const sent = await post(w.port, 'send', pageHeaders(s), { conversation, text });
    expect(sent.status).toBeLessThan(300);
    await stream.next((e) => e.event === 'turn' && (e.data as { state: string }).state === 'done', 30_000);
    const replies = stream.events
      .filter((e) => e.event === 'reply')
      .map((e) => e.data as { text: string; state: string });
    const final = replies.at(-1) ?? { text: '' };
    const steps = stream.events.filter((e) => e.event === 'step').map((e) => (e.data as { steps: Step[] }).steps);
    const files = stream.events
      .filter((e) => e.event === 'file')
      .map((e) => (e.data as { file: Turn['files'][0] }).file);
    stream.close();
    return { stream, final, steps, files };
  };
}

/** Nothing of the agent's inner stream reached the page: no reasoning, no tool arguments or output. */
function expectNoLeak(turn: Turn): void {
  const all = JSON.stringify(turn.stream.events.filter((e) => e.event === 'reply' || e.event === 'step'));
  expect(all).not.toContain(AGENT_REASONING.slice(0, 20));
  expect(all).not.toContain('Paris\\"');
  expect(all).not.toContain('\\"ok\\"');
}

describe('SHOW_STEPS=on (the default)', () => {
  const ask = world({});
  it.each(PROTOCOLS)(
    'protocol %s: each step while it runs, the answer and sources exactly, the files offered',
    async (protocol) => {
      const text = ASK(protocol);
      const turn = await ask(text);
      expect(turn.final.text).toBe(`You said: ${text}${SOURCES}`);
      for (const title of stepTitles(protocol))
        expect(turn.steps.some((list) => list.some((st) => st.title === title && st.state === 'running'))).toBe(true);
      // The line goes away with the last word.
      expect(turn.steps.at(-1)).toEqual([]);
      expect(turn.files).toEqual([
        expect.objectContaining({ url: AGENT_IMAGE.url }),
        expect.objectContaining({
          name: fileName(protocol),
          dataUrl: `data:text/csv;base64,${Buffer.from(AGENT_FILE_TEXT).toString('base64')}`,
        }),
      ]);
      expectNoLeak(turn);
    },
  );
});

describe('SHOW_STEPS=off, REPLY_FILE_MAX_BYTES=16', () => {
  const ask = world({ SHOW_STEPS: 'off', REPLY_FILE_MAX_BYTES: '16' });
  it.each(PROTOCOLS)(
    'protocol %s: no step, the answer and sources only; the CSV over the cap offered by name',
    async (protocol) => {
      const text = ASK(protocol);
      const turn = await ask(text);
      expect(turn.final.text).toBe(`You said: ${text}${SOURCES}`);
      expect(turn.steps.flat()).toEqual([]);
      const csv = turn.files.find((f) => f.name === fileName(protocol));
      expect(csv).toEqual({ name: fileName(protocol), mime: 'text/csv', size: AGENT_FILE_TEXT.length });
      expectNoLeak(turn);
    },
  );
});
