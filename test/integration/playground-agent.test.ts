import { describe, expect, it } from 'vitest';
import { AGENT_FILE_TEXT, AGENT_IMAGE, AGENT_REASONING } from '../../src/emulator/agent-replies.js';
import * as agent from '../support/emulator-agent.js';
import { conversationEvents, type EventStream, pageHeaders, playgroundPerBlock, post } from './playground-http.js';

// An agent's reply in the playground, at the HTTP level, through the whole bridge (config from
// the environment, main.ts's wiring, the REAL upstream client) and the emulator answering
// `[agent]` in each agent protocol: each step announced while it runs (`event: step`), the final
// reply the answer and its sources exactly, the image and the CSV offered as files. SHOW_STEPS=off
// announces no step; REPLY_FILE_MAX_BYTES below the CSV's size offers it by name only.

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
  const pg = playgroundPerBlock({ allowRemote: false }, env);
  let n = 0;
  return async (text: string): Promise<Turn> => {
    const conversation = `agent-${n++}`;
    const stream = await conversationEvents(pg.w.port, pg.s, conversation);
    const sent = await post(pg.w.port, 'send', pageHeaders(pg.s), { conversation, text });
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
  it.each(agent.PROTOCOLS)(
    'protocol %s: each step while it runs, the answer and sources exactly, the files offered',
    async (protocol) => {
      const text = agent.ask(protocol);
      const turn = await ask(text);
      expect(turn.final.text).toBe(`You said: ${text}${agent.SOURCES_MD}`);
      for (const title of agent.stepTitles(protocol))
        expect(turn.steps.some((list) => list.some((st) => st.title === title && st.state === 'running'))).toBe(true);
      // The line goes away with the last word.
      expect(turn.steps.at(-1)).toEqual([]);
      expect(turn.files).toEqual([
        expect.objectContaining({ url: AGENT_IMAGE.url }),
        expect.objectContaining({
          name: agent.fileName(protocol),
          dataUrl: `data:text/csv;base64,${Buffer.from(AGENT_FILE_TEXT).toString('base64')}`,
        }),
      ]);
      expectNoLeak(turn);
    },
  );
});

describe('SHOW_STEPS=off, REPLY_FILE_MAX_BYTES=16', () => {
  const ask = world({ SHOW_STEPS: 'off', REPLY_FILE_MAX_BYTES: '16' });
  it.each(agent.PROTOCOLS)(
    'protocol %s: no step, the answer and sources only; the CSV over the cap offered by name',
    async (protocol) => {
      const text = agent.ask(protocol);
      const turn = await ask(text);
      expect(turn.final.text).toBe(`You said: ${text}${agent.SOURCES_MD}`);
      expect(turn.steps.flat()).toEqual([]);
      const csv = turn.files.find((f) => f.name === agent.fileName(protocol));
      expect(csv).toEqual({ name: agent.fileName(protocol), mime: 'text/csv', size: AGENT_FILE_TEXT.length });
      expectNoLeak(turn);
    },
  );
});
