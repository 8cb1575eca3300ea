import type { AgentStep } from '../../core/chat-port.js';

// Reading an agent event's fields, for every protocol reader: JSON shapes, titles (bounded, and
// the hosted tools' names made readable) and the many spellings of a step's state.

export type Json = Record<string, unknown>;

const MAX_TITLE = 200;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const objectAt = (v: unknown, key: string): Json | undefined =>
  isObject(v) && isObject(v[key]) ? v[key] : undefined;

export function title(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const t = v.replace(/\s+/g, ' ').trim();
  return t === '' ? undefined : t.slice(0, MAX_TITLE);
}

/** `running`, `done` or `failed` from the many spellings of a state; undefined when none. */
export function stateOf(v: unknown): AgentStep['state'] | undefined {
  if (typeof v !== 'string') return undefined;
  const s = v.toLowerCase();
  if (['running', 'in_progress', 'started', 'start', 'pending', 'searching', 'generating', 'interpreting'].includes(s))
    return 'running';
  if (['done', 'completed', 'complete', 'finished', 'success', 'succeeded', 'ok'].includes(s)) return 'done';
  if (['failed', 'error', 'errored', 'cancelled', 'canceled', 'incomplete'].includes(s)) return 'failed';
  return undefined;
}

/** Titles of the hosted tools whose names say little to a reader (OpenAI's and Anthropic's). */
export const TOOL_TITLES: Record<string, string> = {
  web_search_call: 'Searching the web',
  file_search_call: 'Searching files',
  code_interpreter_call: 'Running code',
  image_generation_call: 'Generating an image',
  computer_call: 'Using the computer',
  local_shell_call: 'Running a command',
  shell_call: 'Running a command',
  web_search: 'Searching the web',
  web_fetch: 'Reading a web page',
  code_execution: 'Running code',
  bash_code_execution: 'Running a command',
  text_editor_code_execution: 'Editing a file',
};
