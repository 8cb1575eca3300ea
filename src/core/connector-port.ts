import type { MessageHandler } from './message-port.js';
import type { Platform, ReplyTarget } from './place.js';

// A platform's connection as main.ts and the relay's crash repair use it: start delivering
// messages, readiness, shutdown, the budget share, and the edits that repair a crash.

export interface Connector {
  readonly platform: Platform;
  /** Connect and start delivering messages to the handler. Resolves once connected. */
  start(handler: MessageHandler): Promise<void>;
  /** The process shuts down: take no more events and disconnect (after the drain). */
  shutdown(): Promise<void>;
  /** Connected right now (for /readyz). */
  isReady(): boolean;
  /** For /readyz, when a reason says more than `isReady`: `true`, or why not (e.g. which shards are down). */
  readiness?(): true | string;
  /**
   * The first step of a shutdown, before the drain: take no more events but keep writing (Slack's
   * Socket Mode closes its connection, so Slack sends events to the other replicas).
   */
  closeIntake?(): Promise<void>;
  /** This replica's share of the platform's budgets (1 / live replicas), whenever it changes. */
  setBudgetShare?(share: number): void;
  /**
   * A reply left streaming by a crash: edit its last message to `text` (the text so far plus
   * the interruption note). Best effort; throws on failure.
   */
  markInterrupted(target: ReplyTarget, messageId: string, text: string): Promise<void>;
  /**
   * A reply a crash cut before anything was shown: say so in its place (a new message), since the
   * user's message was already taken and will not be delivered again. Best effort; throws on failure.
   */
  postInterrupted?(target: ReplyTarget, text: string): Promise<void>;
  /**
   * After start: the connector can never receive again (e.g. Discord closed the gateway for good:
   * the token was reset). The process then ends non-zero, so that its supervisor restarts it.
   */
  onFatal?(listener: (err: Error) => void): void;
}
