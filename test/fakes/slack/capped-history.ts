// Capped history reads, as Slack gives them to commercially distributed apps outside the
// Marketplace since 2025 (docs.slack.dev, conversations.replies/.history): at most 15 messages a
// call whatever `limit` asks, and one call a minute per method and workspace, then `ratelimited`
// (HTTP 429, Retry-After). Three plausible shapes of a capped page, so nothing in the bridge may
// rest on one of them:
// - `oldest-first`: a thread paged from its parent, oldest first, `has_more` and a cursor that
//   leads to newer messages (Slack's documented order; the first page of a long thread is its
//   beginning);
// - `newest`: the newest messages of the window (still oldest first within the page), the cursor
//   leading to older ones;
// and `callsPerMinute` on top of either. conversations.history stays newest first (documented),
// capped and paged the same way. Turned on with FakeSlackOptions.cappedHistory or, at any time
// (a chaos controller), by setting `switches.cappedHistory`.

export interface CappedHistoryOptions {
  /** Messages one call returns at most, whatever `limit` asks (Slack: 15). */
  perCall?: number;
  /** Which end of the window a capped conversations.replies page comes from. */
  page?: 'oldest-first' | 'newest';
  /** Calls of each history method one workspace may make per minute (Slack: 1); unset: no limit here. */
  callsPerMinute?: number;
}

export type Args = Record<string, unknown>;

const HISTORY_METHODS = new Set(['conversations.replies', 'conversations.history']);

export class CappedHistory {
  readonly perCall: number;
  readonly page: 'oldest-first' | 'newest';
  /** Calls refused with `ratelimited`, by method. */
  readonly refused: Record<string, number> = {};
  private readonly windows = new Map<string, { start: number; calls: number }>();

  constructor(
    readonly options: CappedHistoryOptions,
    private readonly now: () => number,
  ) {
    this.perCall = options.perCall ?? 15;
    this.page = options.page ?? 'oldest-first';
  }

  static handles(method: string): boolean {
    return HISTORY_METHODS.has(method);
  }

  /** Seconds to wait when this call is over the per-minute cap (and counts it as refused); undefined: go on. */
  refuse(method: string, teamId: string): number | undefined {
    const max = this.options.callsPerMinute;
    if (max === undefined || !CappedHistory.handles(method)) return undefined;
    const key = `${method}:${teamId}`;
    const now = this.now();
    let w = this.windows.get(key);
    if (w === undefined || now - w.start >= 60_000) {
      w = { start: now, calls: 0 };
      this.windows.set(key, w);
    }
    if (w.calls < max) {
      w.calls += 1;
      return undefined;
    }
    this.refused[method] = (this.refused[method] ?? 0) + 1;
    return Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000));
  }

  /**
   * One capped page of `all` (the window's messages in Slack's order: oldest first for replies,
   * newest first for history), `limit` ignored beyond the cap.
   */
  answer(method: string, all: readonly Record<string, unknown>[], a: Args): Record<string, unknown> {
    const asked = Number(a.limit ?? this.perCall);
    const n = Math.max(1, Math.min(this.perCall, Number.isFinite(asked) && asked > 0 ? asked : this.perCall));
    const offset = decodeCursor(a.cursor);
    let messages: Record<string, unknown>[];
    if (method === 'conversations.replies' && this.page === 'newest') {
      const end = Math.max(0, all.length - offset);
      messages = all.slice(Math.max(0, end - n), end);
    } else {
      messages = all.slice(offset, offset + n);
    }
    const more = offset + n < all.length;
    return {
      messages,
      has_more: more,
      ...(more ? { response_metadata: { next_cursor: encodeCursor(offset + n) } } : {}),
    };
  }
}

function encodeCursor(offset: number): string {
  return Buffer.from(`offset:${offset}`).toString('base64');
}

function decodeCursor(c: unknown): number {
  if (typeof c !== 'string' || c === '') return 0;
  const m = /^offset:(\d+)$/.exec(Buffer.from(c, 'base64').toString());
  return m ? Number(m[1]) : 0;
}
