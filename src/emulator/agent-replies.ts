// An agent's reply, as the emulator streams it for `[steps]`, `[sources]`, `[image]`, `[file]` and
// `[agent]`: the parts in order (reasoning, two tool steps running → done, the text, two sources,
// an image and a file). The stream writers (stream-writers.ts for the seed's named events,
// protocol-writers.ts for the agent protocols) turn each part into frames. Deterministic: the
// same message gives the same parts.
import { type AgentParts, splitText } from './replies.js';

export type ReplyPart =
  | { kind: 'text'; text: string }
  | { kind: 'reasoning'; text: string }
  /** A tool call: `name` is the tool (what protocols carry), `title` what a person reads. */
  | { kind: 'step'; id: string; name: string; title: string; state: 'running' | 'done'; args: string }
  | { kind: 'source'; url: string; title: string }
  /** A file: an https `url` (an image) or inline bytes as `base64`. */
  | { kind: 'file'; name: string; mime: string; url?: string; base64?: string };

/** The tools of an agent reply: what they are called, what they show, their (never shown) arguments. */
export const AGENT_TOOLS = [
  { id: 'call_1', name: 'search_docs', title: 'Searching the docs', args: '{"query":"streaming replies"}' },
  { id: 'call_2', name: 'get_weather', title: 'Checking the weather', args: '{"city":"Paris"}' },
] as const;

export const AGENT_SOURCES = [
  { url: 'https://example.com/docs/streaming', title: 'Streaming replies' },
  { url: 'https://example.org/weather/paris', title: 'Weather in Paris' },
] as const;

/** `[image]`: an https image the platforms show by URL (the bridge never fetches it). */
export const AGENT_IMAGE = {
  name: 'chart.png',
  mime: 'image/png',
  url: 'https://upload.wikimedia.org/wikipedia/commons/4/47/PNG_transparency_demonstration_1.png',
} as const;

/** `[file]`: a small CSV made by the "assistant", sent inline as base64. */
export const AGENT_FILE_TEXT = 'item,value\nrow 1,7\nrow 2,14\nrow 3,21\n';
export const AGENT_FILE = { name: 'table.csv', mime: 'text/csv' } as const;

export const AGENT_REASONING = 'The user wants an answer; let me look it up first.';

/** The parts of a reply of `text` (split as the plain reply is) with the agent's work `parts` asks for. */
export function agentReplyParts(text: string, pieces: number | undefined, parts: AgentParts = {}): ReplyPart[] {
  const out: ReplyPart[] = [];
  if (parts.reasoning) out.push({ kind: 'reasoning', text: AGENT_REASONING });
  if (parts.steps)
    for (const tool of AGENT_TOOLS) {
      out.push({ kind: 'step', ...tool, state: 'running' });
      out.push({ kind: 'step', ...tool, state: 'done' });
    }
  for (const piece of splitText(text, pieces)) out.push({ kind: 'text', text: piece });
  if (parts.sources) for (const source of AGENT_SOURCES) out.push({ kind: 'source', ...source });
  if (parts.image) out.push({ kind: 'file', ...AGENT_IMAGE });
  if (parts.file)
    out.push({ kind: 'file', ...AGENT_FILE, base64: Buffer.from(AGENT_FILE_TEXT, 'utf8').toString('base64') });
  return out;
}
