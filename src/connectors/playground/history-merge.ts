import type { AgentStep } from '../../core/chat-port.js';
import type { PageFile } from './turn-events.js';

// What a reload of the page shows: the upstream's history (A3/B3) merged with what this process
// kept of the page's own turns. The upstream does not know everything the page showed: a stopped
// or failed reply may be missing there (the emulator stores a reply only once it was sent whole)
// or stored whole although the user saw it cut; a message that failed before reaching the
// upstream is not there at all. The page shows what the platform would have shown, so a kept turn
// wins over the upstream's version of its reply.

/** How a reply ended, or that it still streams (the page's `data-state`). */
export type ReplyState = 'streaming' | 'final' | 'stopped' | 'interrupted' | 'error';

/** One message of a reply as the page shows it. */
export interface ReplyView {
  /** The message id the sink gave it. */
  id: string;
  conversation: string;
  text: string;
  state: ReplyState;
  replyKey?: string;
  /** Thumbs may be shown (a finished reply with FEEDBACK on). */
  feedback: boolean;
  /** Every write so far (1 = the post). */
  writes: number;
  /** A word from the bridge itself, not the assistant's (slow down, busy): no reply follows. */
  notice?: boolean;
  /**
   * The files the assistant made, on the reply's last message (they also go out as `file` turn
   * events while it streams): kept here so a reload shows them again. Its sources are in `text`.
   */
  files?: PageFile[];
  /**
   * The steps the assistant took (issue 36), on the reply's last message once it ended, each in
   * its last state (none left running): the page folds them into a "N steps" list under the reply,
   * live and after a reload alike.
   */
  steps?: AgentStep[];
}

export type ReplyListener = (view: ReplyView) => void;

/** A message typed in the page, kept in memory (see connector.ts `asked`). */
export interface AskView {
  eventId: string;
  text: string;
  /**
   * Retried (issue 41): a later message asks this one again and its reply replaces this one's.
   * Neither this message nor its reply is shown; it is kept to match the upstream's copy of it.
   */
  replaced?: true;
}

export interface UpstreamMessage {
  id: string;
  role: string;
  text: string;
}

/** One message of the page's transcript, oldest first. */
export interface HistoryEntry {
  id: string;
  role: 'user' | 'assistant';
  text: string;
  /** Assistant messages only. */
  state?: ReplyState;
  replyKey?: string;
  feedback?: boolean;
  writes?: number;
  files?: PageFile[];
  steps?: AgentStep[];
}

/** The turn a view belongs to: its id is `<eventId>.<part>` (see the sink's post). */
export function turnOf(view: { id: string }): string {
  const dot = view.id.lastIndexOf('.');
  return dot > 0 ? view.id.slice(0, dot) : view.id;
}

function fromView(v: ReplyView): HistoryEntry {
  return {
    id: v.id,
    role: 'assistant',
    text: v.text,
    state: v.state,
    ...(v.replyKey !== undefined ? { replyKey: v.replyKey } : {}),
    feedback: v.feedback,
    writes: v.writes,
    ...(v.files !== undefined ? { files: v.files } : {}),
    ...(v.steps !== undefined ? { steps: v.steps } : {}),
  };
}

function fromUpstream(m: UpstreamMessage): HistoryEntry {
  if (m.role === 'user') return { id: `h-${m.id}`, role: 'user', text: m.text };
  return { id: `h-${m.id}`, role: 'assistant', text: m.text, state: 'final', feedback: false };
}

/**
 * `upstream` undefined: the upstream has nothing for this conversation (none yet, or it forgot
 * it), so every kept turn is shown. Otherwise a kept turn is placed at its own message in the
 * upstream's history (matched by text, from the newest back, since kept turns are the newest);
 * its views replace the upstream's reply. A kept turn the upstream does not have is shown only
 * when its reply did not end whole (a final one is outside the window read, or the upstream's).
 */
export function mergeHistory(
  upstream: UpstreamMessage[] | undefined,
  asks: AskView[],
  views: ReplyView[],
): HistoryEntry[] {
  const byTurn = new Map<string, ReplyView[]>();
  for (const v of views) {
    const t = turnOf(v);
    const list = byTurn.get(t);
    if (list === undefined) byTurn.set(t, [v]);
    else list.push(v);
  }
  const up = upstream ?? [];
  const match: (number | undefined)[] = asks.map(() => undefined);
  let end = up.length;
  for (let a = asks.length - 1; a >= 0 && upstream !== undefined; a--) {
    const text = asks[a]?.text.trim();
    for (let j = end - 1; j >= 0; j--) {
      const m = up[j];
      if (m?.role === 'user' && m.text.trim() === text) {
        match[a] = j;
        end = j;
        break;
      }
      // A retried message reached the upstream just before its retry, if at all: not further back.
      if (m?.role === 'user' && asks[a]?.replaced === true) break;
    }
  }

  const out: HistoryEntry[] = [];
  let u = 0;
  const flushTo = (to: number) => {
    for (; u < to; u++) {
      const m = up[u];
      if (m !== undefined) out.push(fromUpstream(m));
    }
  };
  const shown = new Set<string>();
  const pushViews = (eventId: string) => {
    for (const v of byTurn.get(eventId) ?? []) out.push(fromView(v));
    shown.add(eventId);
  };

  asks.forEach((ask, a) => {
    const vs = byTurn.get(ask.eventId) ?? [];
    const j = match[a];
    if (ask.replaced === true) {
      // A retried message: its copy upstream (if the failed attempt reached it) and whatever reply
      // followed it there are left out, as the page left them out when Retry was pressed.
      shown.add(ask.eventId);
      if (j === undefined) return;
      flushTo(j);
      u = j + 1;
      while (u < up.length && up[u]?.role !== 'user') u++;
      return;
    }
    if (j === undefined) {
      const whole = vs.length > 0 && vs.every((v) => v.state === 'final');
      if (upstream !== undefined && whole) {
        shown.add(ask.eventId);
        return;
      }
      // Older than the next matched turn: everything the upstream has before that comes first.
      const next = match.slice(a + 1).find((x) => x !== undefined) ?? up.length;
      flushTo(next);
      out.push({ id: `a-${ask.eventId}`, role: 'user', text: ask.text });
      pushViews(ask.eventId);
      return;
    }
    flushTo(j);
    const m = up[j];
    if (m !== undefined) out.push(fromUpstream(m));
    u = j + 1;
    if (vs.length === 0) return; // not answered yet: the upstream's reply, if any, stays
    while (u < up.length && up[u]?.role !== 'user') u++;
    pushViews(ask.eventId);
  });
  flushTo(up.length);
  // Views of no kept message (a reply cut by an earlier run, marked interrupted at start).
  for (const [eventId, vs] of byTurn) {
    if (shown.has(eventId) || asks.some((a) => a.eventId === eventId)) continue;
    for (const v of vs) out.push(fromView(v));
  }
  return out;
}
