import type { AgentFile, AgentSource, AgentStep } from '../../core/chat-port.js';
import { FileBudget, type FileFields } from '../agent-files.js';
import { type Json, title } from './event-fields.js';

// What every protocol reader tells of one reply (its text, steps, sources, files, its end or
// error), kept bounded: steps and sources are counted, a step is sent only when it is new or
// changed, a source only once and only as a link to follow.

/** Where a recognised event's meaning goes (event-rules.ts's EventCollector). */
export interface AgentSink {
  text(text: string): void;
  end(): void;
  error(message: string, code?: string): void;
  step(step: AgentStep): void;
  source(source: AgentSource): void;
  file(file: AgentFile): void;
}

/** One protocol's reader of an event: its `type` (or seed name) and its data. */
export type EventReader = (type: string, obj: Json) => void;

/** Steps, sources a reply: beyond these, new ones are ignored (updates of known steps still count). */
export const MAX_STEPS = 100;
const MAX_SOURCES = 50;
const MAX_ID = 200;
const MAX_URL = 4096;

/** One reply's news, as the protocol readers find it. */
export class ReplyNews {
  private readonly steps = new Map<string, AgentStep>();
  private readonly sources = new Set<string>();
  private readonly files: FileBudget;

  constructor(
    private readonly sink: AgentSink,
    maxFileBytes?: number,
  ) {
    this.files = new FileBudget(maxFileBytes);
  }

  /** The step of that id as last sent (the id as given, not cut to MAX_ID). */
  known(id: string): AgentStep | undefined {
    return this.steps.get(id);
  }

  /** A step's news: sent when it is new or changed. Unknown ids past MAX_STEPS are ignored. */
  step(rawId: string, newTitle: string | undefined, state: AgentStep['state']): void {
    const id = rawId.slice(0, MAX_ID);
    const known = this.steps.get(id);
    if (!known && this.steps.size >= MAX_STEPS) return;
    const step: AgentStep = { id, title: newTitle ?? known?.title ?? 'Working', state };
    if (known && known.title === step.title && known.state === step.state) return;
    this.steps.set(id, step);
    this.sink.step({ ...step });
  }

  /** Marks a known step; an unknown id is no news (its start was not seen or not shown). */
  stepEnded(id: string | undefined, state: 'done' | 'failed'): void {
    if (id !== undefined && this.steps.has(id.slice(0, MAX_ID))) this.step(id, undefined, state);
  }

  /** Every step still running becomes `state`. */
  settle(state: 'done' | 'failed'): void {
    for (const s of [...this.steps.values()]) if (s.state === 'running') this.step(s.id, undefined, state);
  }

  source(url: unknown, name: unknown): void {
    if (typeof url !== 'string' || url.length > MAX_URL || this.sources.size >= MAX_SOURCES) return;
    let protocol: string;
    try {
      protocol = new URL(url).protocol;
    } catch {
      return;
    }
    // A link to follow: never javascript:, data: or anything a platform would not link.
    if ((protocol !== 'https:' && protocol !== 'http:') || this.sources.has(url)) return;
    this.sources.add(url);
    const t = title(name);
    this.sink.source(t === undefined ? { url } : { url, title: t });
  }

  file(fields: FileFields): void {
    const file = this.files.take(fields);
    if (file) this.sink.file(file);
  }

  text(v: unknown): void {
    if (typeof v === 'string') this.sink.text(v);
  }

  end(): void {
    this.sink.end();
  }

  /** The arguments passed on as given (a code that is undefined included, as the reader had it). */
  error(...args: [message: string, code?: string]): void {
    this.sink.error(...args);
  }
}
