import { type Json, stateOf, str, title } from './event-fields.js';
import { MAX_STEPS, type ReplyNews } from './reply-news.js';

// The seed forms' named events (CONTRACT.md §4): `status`, `tool`, `source`, `file`, `reasoning`,
// by SSE event name or by the data's `type`; AG-UI's custom events may carry them too (ag-ui.ts).

export const SEED_NAMES = new Set(['status', 'tool', 'source', 'file', 'reasoning']);

/** The seed events of one reply; remembers the status lines that came without an id. */
export class SeedReader {
  /** Seed `status` events without an id: one generated id per title, and the one shown last. */
  private readonly statusIds = new Map<string, string>();
  private lastStatus: string | undefined;

  constructor(private readonly news: ReplyNews) {}

  read(name: string, obj: Json): void {
    if (name === 'source') this.news.source(obj.url, obj.title);
    else if (name === 'file')
      this.news.file({
        name: obj.name ?? obj.filename,
        mime: obj.mime ?? obj.mediaType ?? obj.mimeType ?? obj.media_type ?? obj.contentType,
        url: obj.url,
        data: obj.data,
        size: obj.size,
      });
    else if (name === 'status' || name === 'tool') this.status(obj);
    // `reasoning` is never shown.
  }

  /** A seed named event whose data is no JSON object: a status line, or a source URL. */
  readPlain(eventName: string, data: string): void {
    if (eventName === 'status' || eventName === 'tool') this.read(eventName, { text: data });
    else if (eventName === 'source') this.read(eventName, { url: data.trim() });
  }

  /**
   * `{id?, text, state?}`. Without an id, the title is the step: the same title again updates it,
   * and a new running one means the one before it is done (a status line moving on).
   */
  private status(obj: Json): void {
    const t = title(obj.text) ?? title(obj.title) ?? title(obj.name) ?? title(obj.message);
    const state = stateOf(obj.state) ?? stateOf(obj.status) ?? 'running';
    const given = str(obj.id) ?? (typeof obj.id === 'number' ? String(obj.id) : undefined);
    if (given !== undefined && given !== '') {
      this.news.step(given, t, state);
      return;
    }
    if (t === undefined) return;
    let id = this.statusIds.get(t);
    if (id === undefined) {
      if (this.statusIds.size >= MAX_STEPS) return;
      id = `status-${this.statusIds.size + 1}`;
      this.statusIds.set(t, id);
    }
    if (state === 'running' && this.lastStatus !== undefined && this.lastStatus !== id)
      this.news.stepEnded(this.lastStatus, 'done');
    this.lastStatus = id;
    this.news.step(id, t, state);
  }
}
