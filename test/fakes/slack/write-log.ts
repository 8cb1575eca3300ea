// Every message write the fake answered, in arrival order, so tests and the bench can compute
// exactness, final-write times and 429s per bucket without re-deriving them from raw calls.

export const WRITE_METHODS = [
  'chat.postMessage',
  'chat.update',
  'chat.startStream',
  'chat.appendStream',
  'chat.stopStream',
] as const;
export type WriteMethod = (typeof WRITE_METHODS)[number];

export interface WriteLogEntry {
  /** When the fake answered (its now(), epoch ms). */
  at: number;
  method: WriteMethod;
  team: string | undefined;
  channel: string | undefined;
  /** The message written: from the answer for posts and stream starts, else from the request. */
  ts: string | undefined;
  threadTs: string | undefined;
  /** Characters this write sends: the new text (post, update) or the appended chunk (streams). */
  textLength: number;
  accepted: boolean;
  /** `ok`, `ratelimited`, or the Slack error code. */
  result: string;
  /** Only for 429s. */
  retryAfterS?: number;
  bucket?: string;
}

export function isWriteMethod(m: string): m is WriteMethod {
  return (WRITE_METHODS as readonly string[]).includes(m);
}

/** A bounded log: past `max` entries the oldest tenth is dropped (counted in `dropped`). */
export class WriteLog {
  readonly entries: WriteLogEntry[] = [];
  dropped = 0;
  constructor(private readonly max = 200_000) {}

  add(e: WriteLogEntry): void {
    this.entries.push(e);
    if (this.entries.length > this.max) {
      const n = Math.max(1, Math.floor(this.max / 10));
      this.entries.splice(0, n);
      this.dropped += n;
    }
  }
}
