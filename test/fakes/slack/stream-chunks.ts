import type { Args } from './web-api.js';

// The `chunks` of Slack's stream methods (chat.startStream, appendStream, stopStream), checked
// as Slack documents them: each an object of a known type; `markdown_text` with a `text`;
// `task_update` with an `id`, a non-empty `title` and a `status` of pending, in_progress,
// complete or error; `plan_update` with a `title`; `blocks` with an array. A message keeps its
// timeline: each task as last updated, and every update in order.

export interface FakeTask {
  id: string;
  title: string;
  status: 'pending' | 'in_progress' | 'complete' | 'error';
}

const STATUSES = new Set(['pending', 'in_progress', 'complete', 'error']);
const DISPLAY_MODES = new Set(['timeline', 'plan']);

function chunksOf(a: Args): unknown {
  const chunks: unknown = a.chunks;
  return typeof chunks === 'string' ? JSON.parse(chunks) : chunks;
}

/** The Slack error code a call's chunks (and task display mode) earn, or undefined when they are fine. */
export function chunksError(a: Args): string | undefined {
  const mode = a.task_display_mode;
  if (mode !== undefined && !DISPLAY_MODES.has(String(mode))) return 'invalid_arguments';
  const chunks = chunksOf(a);
  if (chunks === undefined) return undefined;
  if (!Array.isArray(chunks) || chunks.length === 0) return 'invalid_chunks';
  for (const c of chunks as unknown[]) {
    if (typeof c !== 'object' || c === null) return 'invalid_chunks';
    const chunk = c as Record<string, unknown>;
    const ok =
      (chunk.type === 'markdown_text' && typeof chunk.text === 'string') ||
      (chunk.type === 'task_update' &&
        typeof chunk.id === 'string' &&
        chunk.id !== '' &&
        typeof chunk.title === 'string' &&
        chunk.title.trim() !== '' &&
        STATUSES.has(String(chunk.status))) ||
      (chunk.type === 'plan_update' && typeof chunk.title === 'string') ||
      (chunk.type === 'blocks' && Array.isArray(chunk.blocks));
    if (!ok) return 'invalid_chunks';
  }
  return undefined;
}

/** The task updates of a call whose chunks passed chunksError, in order. */
export function taskUpdates(a: Args): FakeTask[] {
  const chunks = chunksOf(a);
  if (!Array.isArray(chunks)) return [];
  return (chunks as Record<string, unknown>[])
    .filter((c) => c.type === 'task_update')
    .map((c) => ({ id: String(c.id), title: String(c.title), status: c.status as FakeTask['status'] }));
}

/** A stream's timeline: each task as last updated (in the order first seen), and every update. */
export interface FakeTimeline {
  tasks: FakeTask[];
  updates: FakeTask[];
}

export function applyTasks(timeline: FakeTimeline | undefined, updates: FakeTask[]): FakeTimeline | undefined {
  if (updates.length === 0) return timeline;
  const t = timeline ?? { tasks: [], updates: [] };
  for (const u of updates) {
    t.updates.push(u);
    const at = t.tasks.findIndex((x) => x.id === u.id);
    if (at >= 0) t.tasks[at] = u;
    else t.tasks.push(u);
  }
  return t;
}
