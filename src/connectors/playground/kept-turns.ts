import type { PlaygroundTurnRecord, PlaygroundTurnStore } from '../../core/ports.js';
import type { Logger } from '../../logger.js';
import { type ConversationEntry, type ConversationTable, KEPT_PER_CONVERSATION } from './conversation-table.js';
import { type AskView, type ReplyView, turnOf } from './history-merge.js';
import type { PageFile } from './turn-events.js';

// What the page showed of each turn, kept in the bridge's store (issue 41) so that a reload after
// a restart shows it again, as a reload before one does from memory (conversation-table.ts):
// the message typed, the reply's messages as they ended (state, text with its sources, key,
// thumbs, steps, files), and a Retry's mark. A turn is saved when it is sent, when its reply is
// done, when Retry replaces it and when a restart marks it interrupted; a conversation's stored
// turns are read back into memory at each read of its history and before each send (a query: so
// a turn another replica saved, or one memory forgot, is there too), memory winning for a turn
// both hold. The store keeps the newest KEPT_PER_CONVERSATION turns of a conversation.
// Votes are not here: they are in the feedback store already, found by the reply's key.

/**
 * Bytes of files kept inline per turn (their data URLs): a file the assistant sent as bytes is
 * shown again after a restart when the turn's files fit in this; a larger one keeps its name,
 * type and size (the page says it is too large to show). Files may be 8 MiB each, 24 MiB a reply
 * (agent-events.md): kept whole, 50 turns of a conversation could make a database row of
 * hundreds of megabytes; the small files a chat shows (a CSV, a chart) fit. An https link is
 * kept whole: it is only a URL.
 */
export const KEPT_FILE_BYTES_PER_TURN = 256 * 1024;

/** A turn as the store keeps it (the record's `shown`, as JSON). */
interface StoredTurn {
  ask?: { text: string; replaced?: true };
  replies: Omit<ReplyView, 'conversation'>[];
}

export interface KeptTurns {
  store: PlaygroundTurnStore | undefined;
  table: ConversationTable;
  logger: Logger;
  now: () => number;
  /** Saves under way, by conversation: one conversation's saves land in the order they were made. */
  saving: Map<string, Promise<void>>;
}

/** Whether a view belongs to turn `turnId` (its messages, or the notice its refusal wrote). */
function ofTurn(v: ReplyView, turnId: string): boolean {
  return turnOf(v) === turnId || v.id === `notice-${turnId}`;
}

/** The files of a turn's replies with their bytes dropped past KEPT_FILE_BYTES_PER_TURN. */
function boundFiles(files: PageFile[], budget: { left: number }): PageFile[] {
  return files.map((f) => {
    if (f.dataUrl === undefined) return f;
    if (f.dataUrl.length <= budget.left) {
      budget.left -= f.dataUrl.length;
      return f;
    }
    const { dataUrl: _dropped, ...named } = f;
    return named;
  });
}

function storedOf(entry: ConversationEntry, turnId: string): StoredTurn | undefined {
  const ask = entry.asks.find((a) => a.eventId === turnId);
  const views = entry.replies.filter((v) => ofTurn(v, turnId));
  if (ask === undefined && views.length === 0) return undefined;
  const budget = { left: KEPT_FILE_BYTES_PER_TURN };
  const replies = views.map(({ conversation: _c, ...v }) =>
    v.files === undefined ? { ...v } : { ...v, files: boundFiles(v.files, budget) },
  );
  const out: StoredTurn = { replies };
  if (ask !== undefined) out.ask = ask.replaced === true ? { text: ask.text, replaced: true } : { text: ask.text };
  return out;
}

/**
 * Saves what memory holds of a turn (after the conversation's earlier saves). Best effort: a
 * store that fails is logged, and memory still shows the turn until a restart.
 */
export function keepTurn(k: KeptTurns, conversation: string, turnId: string): void {
  const store = k.store;
  const entry = k.table.get(conversation);
  if (store === undefined || entry === undefined) return;
  const stored = storedOf(entry, turnId);
  if (stored === undefined) return;
  const record: PlaygroundTurnRecord = { conversation, turnId, shown: JSON.stringify(stored), at: k.now() };
  const before = k.saving.get(conversation) ?? Promise.resolve();
  const done = before
    .then(() => store.save(record, KEPT_PER_CONVERSATION))
    .catch((err: unknown) => {
      const why = err instanceof Error ? err.message : String(err);
      k.logger.warn({ err: why, turnId }, 'playground: a turn was not kept in the store');
    })
    .finally(() => {
      if (k.saving.get(conversation) === done) k.saving.delete(conversation);
    });
  k.saving.set(conversation, done);
}

/**
 * Reads the conversation's stored turns into memory: those memory lacks, before what it holds
 * (memory wins for a turn both have). Concurrent reads share one query. Best effort, as keepTurn.
 */
export function readKept(k: KeptTurns, conversation: string): Promise<void> {
  const entry = k.table.ensure(conversation);
  if (k.store === undefined) return Promise.resolve();
  if (entry.read === undefined) {
    const read = fill(k, conversation, entry).finally(() => {
      if (entry.read === read) entry.read = undefined;
    });
    entry.read = read;
  }
  return entry.read;
}

async function fill(k: KeptTurns, conversation: string, entry: ConversationEntry): Promise<void> {
  let records: PlaygroundTurnRecord[];
  try {
    // Saves this process made first (they never reject): the read then sees them.
    await k.saving.get(conversation);
    records = await (k.store as PlaygroundTurnStore).list(conversation);
  } catch (err) {
    k.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'playground: kept turns not read');
    return;
  }
  const asks: AskView[] = [];
  const views: ReplyView[] = [];
  for (const r of records) {
    const t = parse(r.shown);
    if (t === undefined) continue;
    if (t.ask !== undefined && !entry.asks.some((a) => a.eventId === r.turnId)) {
      asks.push({
        eventId: r.turnId,
        text: t.ask.text,
        ...(t.ask.replaced === true ? { replaced: true as const } : {}),
      });
    }
    // A turn memory marked replaced meanwhile (Retry) keeps no reply, whatever this read found.
    if (entry.asks.some((a) => a.eventId === r.turnId && a.replaced === true)) continue;
    for (const v of t.replies) if (!entry.replies.some((m) => m.id === v.id)) views.push({ ...v, conversation });
  }
  entry.asks = [...asks, ...entry.asks].slice(-KEPT_PER_CONVERSATION);
  entry.replies = [...views, ...entry.replies].slice(-KEPT_PER_CONVERSATION);
}

/** A stored turn, or undefined for one this version cannot read (it is then not shown). */
function parse(shown: string): StoredTurn | undefined {
  try {
    const t = JSON.parse(shown) as Partial<StoredTurn> | null;
    if (t === null || typeof t !== 'object' || !Array.isArray(t.replies)) return undefined;
    if (t.ask !== undefined && typeof t.ask.text !== 'string') return undefined;
    const replies = t.replies.filter((v) => typeof v?.id === 'string' && typeof v.text === 'string');
    return { ...(t.ask !== undefined ? { ask: t.ask } : {}), replies };
  } catch {
    return undefined;
  }
}
