import type { types, webApi } from '@slack/bolt';
import type { AgentFile, AgentStep } from '../../core/ports.js';

// An agent's work on Slack. Native streams: the steps as `task_update` chunks (Slack's timeline,
// each step in progress, then complete), sent only when a step changed, the ones still open
// completed when the stream stops. Edit mode and post-once: one context line naming the running
// step under the text while it streams, gone on the final write. Images by https URL: `image`
// blocks on the reply's last write. Sources need nothing here: the core lists them after the
// answer, and every post sets unfurl_links and unfurl_media false.

type KnownBlock = types.KnownBlock;
type TaskUpdateChunk = Extract<webApi.AnyChunk, { type: 'task_update' }>;

/** Image blocks one write carries at most (Slack allows 50 blocks; a reply shows a few images). */
const MAX_IMAGES = 5;
/** Slack caps a task's title; the core already bounds titles to far less. */
const MAX_TASK_TITLE = 256;

/** The step a line names: the running one; with no text yet, the newest one even when done. */
function namedStep(steps: readonly AgentStep[] | undefined, hasText: boolean): AgentStep | undefined {
  if (steps === undefined || steps.length === 0) return undefined;
  const running = [...steps].reverse().find((s) => s.state === 'running');
  return running ?? (hasText ? undefined : steps[steps.length - 1]);
}

/** The step as one line of plain words ("Searching the web…", "✓ Searching the web"). */
export function stepWords(steps: readonly AgentStep[] | undefined, hasText: boolean): string {
  const step = namedStep(steps, hasText);
  if (step === undefined) return '';
  if (step.state === 'running') return `${step.title}…`;
  return `${step.state === 'failed' ? '✗' : '✓'} ${step.title}`;
}

/** mrkdwn's three control characters, escaped (a title is never markup). */
export const escapeMrkdwn = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The context block naming the step under the text, or undefined when there is none to name. */
export function stepBlock(steps: readonly AgentStep[] | undefined, hasText: boolean): KnownBlock | undefined {
  const words = stepWords(steps, hasText);
  if (words === '') return undefined;
  return { type: 'context', elements: [{ type: 'mrkdwn', text: `_${escapeMrkdwn(words)}_` }] };
}

/**
 * The blocks of a write with the step line and the images added: after the text's blocks, before
 * the controls (a Stop or the feedback buttons are always the last block when there are any).
 */
export function withAgentBlocks(blocks: KnownBlock[], extra: KnownBlock[]): KnownBlock[] {
  if (extra.length === 0) return blocks;
  const last = blocks[blocks.length - 1];
  const controls = last !== undefined && (last.type === 'actions' || last.type === 'context_actions');
  return controls ? [...blocks.slice(0, -1), ...extra, last] : [...blocks, ...extra];
}

/** The sink shows an image with an https URL itself, as an `image` block. */
export function showsImage(file: AgentFile): boolean {
  return file.url !== undefined && file.url.startsWith('https://') && (file.mime ?? '').startsWith('image/');
}

/** The `image` blocks of a reply's last write. */
export function imageBlocks(files: readonly AgentFile[] | undefined): KnownBlock[] {
  return (files ?? [])
    .filter(showsImage)
    .slice(0, MAX_IMAGES)
    .map((f) => ({ type: 'image', image_url: f.url as string, alt_text: f.name.slice(0, 2000) || 'image' }));
}

const TASK_STATUS: Record<AgentStep['state'], TaskUpdateChunk['status']> = {
  running: 'in_progress',
  done: 'complete',
  failed: 'error',
};

/**
 * One native stream's timeline: what each task shows now, so that a write sends `task_update`
 * chunks only for the steps that changed, and the stream's stop completes the ones left open.
 * Asking changes nothing; `shown` records what a call Slack took carried.
 */
export class TaskTimeline {
  private readonly tasks = new Map<string, TaskUpdateChunk>();

  /** Chunks for the steps that differ from what the timeline shows. */
  changes(steps: readonly AgentStep[] | undefined): TaskUpdateChunk[] {
    const out: TaskUpdateChunk[] = [];
    for (const s of steps ?? []) {
      const chunk: TaskUpdateChunk = {
        type: 'task_update',
        id: s.id,
        title: s.title.slice(0, MAX_TASK_TITLE),
        status: TASK_STATUS[s.state],
      };
      const was = this.tasks.get(s.id);
      if (was === undefined || was.title !== chunk.title || was.status !== chunk.status) out.push(chunk);
    }
    return out;
  }

  /** The stream stops: tasks still in progress are complete (the upstream said nothing more). */
  closing(): TaskUpdateChunk[] {
    return [...this.tasks.values()]
      .filter((c) => c.status === 'in_progress' || c.status === 'pending')
      .map((c) => ({ ...c, status: 'complete' }));
  }

  /** Slack took a call carrying these chunks. */
  shown(chunks: readonly TaskUpdateChunk[]): void {
    for (const c of chunks) this.tasks.set(c.id, c);
  }
}
