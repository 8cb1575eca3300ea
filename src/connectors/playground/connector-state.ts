import type { MessageHandler, Place, PlaygroundTurnStore } from '../../core/ports.js';
import type { Logger } from '../../logger.js';
import { ConversationTable, MAX_CONVERSATIONS } from './conversation-table.js';
import type { KeptTurns } from './kept-turns.js';
import type { SinkContext } from './sink.js';
import { TurnEvents } from './turn-events.js';

// What the playground connector holds between calls (connector.ts builds it once; send-turn.ts
// and the connector's small functions read and change it): the relay's handler, the
// conversations in memory, the Stops asked, the turns under way, the bots the pages picked, and
// the store where what the page showed is kept across restarts (kept-turns.ts).

export interface PlaygroundOptions {
  logger: Logger;
  now?: () => number;
  /** Writes per second allowed in one conversation: generous, the page is local. */
  writesPerSecond?: number;
  /** Bots a page may pick (a picker shows when there are several). */
  bots?: readonly string[];
  /** Conversations kept in memory (least recently used forgotten first). Default 500. */
  maxConversations?: number;
  /** Where what the page showed is kept across restarts (kept-turns.ts); unset: in memory only. */
  turns?: PlaygroundTurnStore | undefined;
}

export interface ConnectorState extends SinkContext, KeptTurns {
  opts: PlaygroundOptions;
  logger: Logger;
  now: () => number;
  maxConversations: number;
  handler: MessageHandler | undefined;
  shuttingDown: boolean;
  /** Turns not done yet, by conversation (entries leave when their turn ends). */
  unfinished: Map<string, Set<string>>;
  /** The bot each conversation's page picked; bounded like the conversations kept. */
  picked: Map<string, string>;
}

export function newConnectorState(opts: PlaygroundOptions): ConnectorState {
  const { logger } = opts;
  const maxConversations = opts.maxConversations ?? MAX_CONVERSATIONS;
  return {
    opts,
    logger,
    now: opts.now ?? Date.now,
    maxConversations,
    perSecond: opts.writesPerSecond ?? 20,
    handler: undefined,
    shuttingDown: false,
    table: new ConversationTable(maxConversations, (err) => logger.warn({ err }, 'playground: a listener failed')),
    stopRequested: new Set(),
    unfinished: new Map(),
    picked: new Map(),
    turns: new TurnEvents((err) => logger.warn({ err }, 'playground: a turn listener failed')),
    store: opts.turns,
    saving: new Map(),
  };
}

export const placeOf = (conversation: string): Place => ({ platform: 'playground', channelId: conversation });
