import { randomUUID } from 'node:crypto';
import type { Connector, MessageHandler, Place, ReplyTarget, StopResult, Vote, VoteResult } from '../../core/ports.js';
import type { TurnListener } from './turn-events.js';
import { type AskView, type ReplyListener, type ReplyView, turnOf } from './history-merge.js';
import { keepTurn, readKept } from './kept-turns.js';
import type { ClaimResult } from './conversation-table.js';
import { type ConnectorState, newConnectorState, placeOf, type PlaygroundOptions } from './connector-state.js';
import { sendTurn } from './send-turn.js';

// The playground: a web chat served by the bridge itself. A conversation of the page is a place
// (`playground:-:<conversation>:-`), kept in the store like a Slack thread or a Discord channel.
// Its replies go through the same relay, scheduler, writer and splitting; each turn's sink
// (sink.ts) records each post and edit and pushes it to the page (SSE, see http.ts), so the page
// shows what a platform would get, edit by edit. This file is the connector's face: each method
// is a small function of the state connector-state.ts holds.

export { PLAYGROUND_MAX_CHARS } from './sink.js';
export { PLAYGROUND_USER_NAME } from './send-turn.js';
export type { PlaygroundOptions } from './connector-state.js';
export type { ReplyListener, ReplyState, ReplyView } from './history-merge.js';

export interface PlaygroundConnector extends Connector {
  /**
   * `user` may use `conversation` (the store's owner `stored`, else the first browser to use one
   * since start, keeps it), or why not: call before any other method that names a conversation.
   */
  claim(conversation: string, user: string, stored?: string): ClaimResult;
  /**
   * A message typed in the page by `user`. Returns once the relay has it (the reply streams on).
   * `retryOf`: the turn whose failed reply this one replaces (Retry): that turn leaves the history.
   */
  send(conversation: string, text: string, user: string, bot?: string, retryOf?: string): { eventId: string };
  /** Turns of the conversation the bridge is not done with (their eventIds): a reload shows them as typing. */
  underway(conversation: string): string[];
  /** The bot the conversation's page picked (one of the options' `bots`), if any. */
  botOf(conversation: string): string | undefined;
  stopReply(replyKey: string, user: string): Promise<StopResult>;
  /** Stop whatever reply `user`'s turn in `conversation` writes, also before its first word. */
  stopConversation(conversation: string, user: string): Promise<StopResult>;
  voteReply(replyKey: string, user: string, vote: Vote): Promise<VoteResult>;
  resetConversation(conversation: string): Promise<void>;
  /**
   * Reads what the store kept of the conversation's turns into memory (after a restart, after
   * memory forgot it, or saved by another replica): call before `live`, `asked` or a Retry's `send`.
   */
  load(conversation: string): Promise<void>;
  /** The replies of a conversation still kept in memory (streaming ones first of all). */
  live(conversation: string): ReplyView[];
  /** The messages typed in a conversation still kept in memory, oldest first (see history-merge.ts). */
  asked(conversation: string): AskView[];
  /** Follow a conversation's writes; returns the unsubscribe function. */
  subscribe(conversation: string, listener: ReplyListener): () => void;
  /** Follow a conversation's turns: working/done, steps, sources, files (turn-events.ts). */
  subscribeTurns(conversation: string, listener: TurnListener): () => void;
  placeOf(conversation: string): Place;
}

/** Conversation ids the page makes: short, URL-safe. */
export const CONVERSATION_ID = /^[A-Za-z0-9_-]{1,64}$/;

export function createPlaygroundConnector(opts: PlaygroundOptions): PlaygroundConnector {
  const s = newConnectorState(opts);
  return {
    platform: 'playground',
    start: async (h: MessageHandler) => {
      s.handler = h;
    },
    shutdown: async () => {
      s.shuttingDown = true;
    },
    isReady: () => s.handler !== undefined && !s.shuttingDown,
    markInterrupted: async (target, messageId, text) => markInterrupted(s, target, messageId, text),
    postInterrupted: async (target, text) => postInterrupted(s, target, text),
    claim: (conversation, user, stored) => s.table.claim(conversation, user, stored),
    send: (conversation, text, user, bot, retryOf) => sendTurn(s, { conversation, text, user, bot, retryOf }),
    stopReply: (replyKey, user) => stopReply(s, replyKey, user),
    stopConversation: (conversation, user) => stopConversation(s, conversation, user),
    voteReply: async (replyKey, user, vote) => (await s.handler?.vote?.(replyKey, user, vote)) ?? 'not_found',
    resetConversation: (conversation) => resetConversation(s, conversation),
    load: (conversation) => readKept(s, conversation),
    live: (conversation) => (s.table.get(conversation)?.replies ?? []).map((v) => ({ ...v })),
    asked: (conversation) => (s.table.get(conversation)?.asks ?? []).map((a) => ({ ...a })),
    subscribe: (conversation, listener) => {
      const set = s.table.ensure(conversation).listeners;
      set.add(listener);
      return () => set.delete(listener);
    },
    underway: (conversation) => [...(s.unfinished.get(conversation) ?? [])],
    botOf: (conversation) => s.picked.get(conversation),
    subscribeTurns: (conversation, listener) => s.turns.subscribe(conversation, listener),
    placeOf,
  };
}

/** A reply an earlier run left cut (marked at start): shown so, and kept so. */
async function markInterrupted(s: ConnectorState, target: ReplyTarget, messageId: string, text: string): Promise<void> {
  const conversation = target.place.channelId;
  await readKept(s, conversation);
  const view = s.table.findReply(conversation, messageId) ?? {
    id: messageId,
    conversation,
    text,
    state: 'interrupted' as const,
    feedback: false,
    writes: 0,
  };
  view.text = text;
  view.state = 'interrupted';
  view.writes += 1;
  s.table.publish(view);
  keepTurn(s, conversation, turnOf(view));
}

async function postInterrupted(s: ConnectorState, target: ReplyTarget, text: string): Promise<void> {
  const conversation = target.place.channelId;
  await readKept(s, conversation);
  const id = `interrupted-${randomUUID()}`;
  s.table.publish({ id, conversation, text, state: 'interrupted', feedback: false, writes: 1 });
  keepTurn(s, conversation, id);
}

async function stopReply(s: ConnectorState, replyKey: string, user: string): Promise<StopResult> {
  if (s.handler?.stop === undefined) return 'not_found';
  s.stopRequested.add(replyKey);
  const result = await s.handler.stop(replyKey, user);
  if (result !== 'stopped') s.stopRequested.delete(replyKey);
  return result;
}

async function stopConversation(s: ConnectorState, conversation: string, user: string): Promise<StopResult> {
  if (s.handler?.stopPlace === undefined) return 'not_found';
  const key = `conversation:${conversation}`;
  s.stopRequested.add(key);
  const result = await s.handler.stopPlace(placeOf(conversation), user);
  if (result !== 'stopped') s.stopRequested.delete(key);
  return result;
}

async function resetConversation(s: ConnectorState, conversation: string): Promise<void> {
  if (s.handler === undefined) throw new Error('the playground is not running');
  await s.handler.reset(placeOf(conversation));
  const entry = s.table.get(conversation);
  if (entry !== undefined) {
    entry.replies = [];
    entry.asks = [];
  }
}
