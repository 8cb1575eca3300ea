// The core's public surface for the composition root (src/main.ts) and the connectors.
export { Conversations, type ConversationTurn } from './conversations.js';
export { openMemoryStore, type MemoryStore } from './memory-store.js';
export { type ErrorOutcome, type PumpOptions, type PumpResult, pump } from './pump.js';
export {
  createRelay,
  type AllowList,
  type RecoveryReport,
  type Relay,
  type RelayDeps,
  type RelaySettings,
} from './relay.js';
export { chatMetadata, type TurnHooks } from './reply-turn.js';
export { ReplyWriter, type ReplyWriterOptions, type WriterResult } from './reply-writer.js';
export { RateLimitScheduler, type SchedulerOptions, type WritePriority, type WriteScheduler } from './scheduler.js';
export { cutAt, fencesBalanced, joinParts, type SplitPart, splitOnce, splitText } from './split.js';
export { describeChatError, MESSAGES, NOTE_RESERVE } from './user-messages.js';
