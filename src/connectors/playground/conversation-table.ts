import type { AskView, ReplyListener, ReplyView } from './history-merge.js';

// The playground's conversations in memory: for each, the browser that uses it (the store's owner,
// or the first one to since this process started: another browser gets 403 even if it learns the
// id; the store keeps the owner of every conversation written in, see http.ts), the replies
// kept for a page that reconnects, and the pages following it. Bounded: past `max`, the least
// recently used conversation that nobody follows and that has no reply under way is forgotten
// (its history stays upstream); when every one is in use, a new conversation is refused.
// A reply's write is published here: kept, and passed to the pages following its conversation.

export interface ConversationEntry {
  owner: string | undefined;
  replies: ReplyView[];
  /** Messages typed in the page (the newest few): a reload shows them even when the upstream never got them. */
  asks: AskView[];
  listeners: Set<ReplyListener>;
  /** Messages of this conversation the relay has not finished with. */
  busy: number;
  /** A read of the store's kept turns into this entry under way (kept-turns.ts readKept). */
  read?: Promise<void> | undefined;
}

export type ClaimResult = 'ok' | 'not_yours' | 'full';

export const MAX_CONVERSATIONS = 500;
/** Replies and messages kept per conversation for a page that reloads (older ones are read from upstream). */
export const KEPT_PER_CONVERSATION = 50;

export class ConversationTable {
  /** Insertion order is use order: the first key is the least recently used. */
  private readonly entries = new Map<string, ConversationEntry>();

  constructor(
    private readonly max: number = MAX_CONVERSATIONS,
    private readonly onListenerError: (err: unknown) => void = () => {},
  ) {}

  /**
   * `user` may use `conversation` (claimed for it if new), or why not. `stored`: the owner the
   * store has for it (it wins over what this table remembers).
   */
  claim(conversation: string, user: string, stored?: string): ClaimResult {
    const e = this.entries.get(conversation);
    if (e !== undefined) {
      if (stored !== undefined) e.owner = stored;
      if (e.owner !== undefined && e.owner !== user) return 'not_yours';
      e.owner = user;
      this.touch(conversation, e);
      return 'ok';
    }
    if (this.entries.size >= this.max && !this.evictOne()) return 'full';
    this.entries.set(conversation, fresh(stored ?? user));
    return stored === undefined || stored === user ? 'ok' : 'not_yours';
  }

  /** The entry, marked as just used; undefined when not in memory. */
  get(conversation: string): ConversationEntry | undefined {
    const e = this.entries.get(conversation);
    if (e !== undefined) this.touch(conversation, e);
    return e;
  }

  /**
   * The entry for a write the relay makes (a reply's post or edit): made again if it was forgotten,
   * even past `max` (a write under way is never lost; the next claim evicts again).
   */
  ensure(conversation: string): ConversationEntry {
    let e = this.get(conversation);
    if (e === undefined) this.entries.set(conversation, (e = fresh(undefined)));
    return e;
  }

  /** A reply's write: kept (the newest few) and told to every page following its conversation. */
  publish(view: ReplyView): void {
    const entry = this.ensure(view.conversation);
    const list = entry.replies;
    if (!list.includes(view)) {
      list.push(view);
      if (list.length > KEPT_PER_CONVERSATION) list.shift();
    }
    for (const l of [...entry.listeners]) {
      try {
        l({ ...view });
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }

  /** A message typed in the page, kept (the newest few) for a reload. */
  keepAsk(conversation: string, ask: AskView): void {
    const kept = this.ensure(conversation).asks;
    kept.push(ask);
    if (kept.length > KEPT_PER_CONVERSATION) kept.shift();
  }

  findReply(conversation: string, id: string): ReplyView | undefined {
    return this.get(conversation)?.replies.find((r) => r.id === id);
  }

  /** A retried turn (issue 41) leaves the history: its message is marked replaced, its reply's messages go. */
  replaceTurn(conversation: string, eventId: string): void {
    const entry = this.get(conversation);
    const ask = entry?.asks.find((a) => a.eventId === eventId);
    if (entry === undefined || ask === undefined) return;
    ask.replaced = true;
    entry.replies = entry.replies.filter((v) => !v.id.startsWith(`${eventId}.`));
  }

  get size(): number {
    return this.entries.size;
  }

  private touch(conversation: string, e: ConversationEntry): void {
    this.entries.delete(conversation);
    this.entries.set(conversation, e);
  }

  private evictOne(): boolean {
    for (const [id, e] of this.entries) {
      if (e.listeners.size > 0 || e.busy > 0 || e.replies.some((r) => r.state === 'streaming')) continue;
      this.entries.delete(id);
      return true;
    }
    return false;
  }
}

function fresh(owner: string | undefined): ConversationEntry {
  return { owner, replies: [], asks: [], listeners: new Set(), busy: 0 };
}
