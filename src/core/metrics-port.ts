import type { Platform } from './ports.js';

// What the core reports about its work. src/server/metrics.ts implements it with prom-client;
// the core does not know about Prometheus.

export interface BridgeMetrics {
  replyStarted(platform: Platform): void;
  replyFinished(platform: Platform): void;
  replyFailed(platform: Platform, reason: string): void;
  replyInterrupted(platform: Platform): void;
  /** A reply its asker stopped (it also counts as finished). */
  replyStopped(platform: Platform): void;
  /** A thumbs up/down recorded on a reply. */
  feedbackVote(platform: Platform, vote: 'up' | 'down'): void;
  /** Seconds from the message's arrival to the first upstream text. */
  upstreamFirstToken(platform: Platform, seconds: number): void;
  /** Seconds from the message's arrival to the first text shown on the platform. */
  platformFirstText(platform: Platform, seconds: number): void;
  platformWrite(platform: Platform, kind: 'post' | 'edit' | 'continuation'): void;
  platformRateLimited(platform: Platform, bucket: string): void;
  /** status: HTTP status or 'network'/'timeout'; code: upstream code or kind. */
  upstreamError(status: string, code: string): void;
  duplicateDelivery(platform: Platform): void;
  /** Messages waiting for an upstream slot or for their place (the slots' queue + the places' queues). */
  queueDepth(n: number): void;
  /** Replies currently streaming. */
  inFlight(n: number): void;
  /**
   * A reply entered (+1) or left (-1) post-once mode: the budgets could not pay its final, so it
   * shows a working indicator and posts its whole text once at the end.
   */
  postOnce(platform: Platform, delta: 1 | -1): void;
  /**
   * A new conversation went on without the place's earlier messages: the history read could not
   * be paid now (`budget`), took too long (`timeout`) or failed (`error`).
   */
  contextSkipped(platform: Platform, reason: ContextSkipReason): void;
  /**
   * The plain fallback: the platform refused a write for its rich form (blocks, a table, Markdown,
   * components, length) and the same words went again plainly; `reason` is the platform's error code.
   */
  plainFallback(platform: Platform, reason: string): void;
  /** Messages held now because the store cannot be used (intake/store-hold.ts). */
  heldEvents(n: number): void;
  /**
   * A delivery refused, not answered: `hold_full` (the store is down and the hold is full),
   * `queue_full`, `user_rate_limited`, `restarting`.
   */
  deliveryRefused(platform: Platform, reason: RefusedReason): void;
}

export type RefusedReason = 'hold_full' | 'queue_full' | 'user_rate_limited' | 'restarting';

export type ContextSkipReason = 'budget' | 'timeout' | 'error';

const noop = () => {};

export const noopMetrics: BridgeMetrics = {
  replyStarted: noop,
  replyFinished: noop,
  replyFailed: noop,
  replyInterrupted: noop,
  replyStopped: noop,
  feedbackVote: noop,
  upstreamFirstToken: noop,
  platformFirstText: noop,
  platformWrite: noop,
  platformRateLimited: noop,
  upstreamError: noop,
  duplicateDelivery: noop,
  queueDepth: noop,
  inFlight: noop,
  postOnce: noop,
  contextSkipped: noop,
  plainFallback: noop,
  heldEvents: noop,
  deliveryRefused: noop,
};
