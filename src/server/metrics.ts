import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { BridgeMetrics, ContextSkipReason, RefusedReason } from '../core/metrics-port.js';
import type { Platform } from '../core/ports.js';
import { BoundedLabel, bucketLabel } from './labels.js';

// The core's BridgeMetrics port, implemented with prom-client. Each instance owns a private
// Registry (never the global one) so tests and benchmarks can make several side by side.

/** Latency buckets from 5 ms to 30 s: first tokens are usually sub-second, timeouts end at 30 s. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface PromBridgeMetrics extends BridgeMetrics {
  readonly registry: Registry;
  /** The Prometheus text exposition of every series of this registry. */
  text(): Promise<string>;
  /** The content type that goes with `text()`. */
  readonly contentType: string;
  /** This replica's share of every platform rate-limit bucket (the scheduler's onShareChange). */
  budgetShare(fraction: number): void;
}

export interface MetricsOptions {
  /** Process metrics (CPU, memory, event loop lag, GC). Default true. */
  defaultMetrics?: boolean;
  /**
   * The configured platforms: their outcome and 429 series exist with value 0 from start-up, so
   * an alert on them works before the first event (a series that appears later cannot be alerted on).
   */
  platforms?: readonly Platform[];
}

/** The bucket kinds (after bucketLabel) each platform's writes count against. */
const BUCKET_KINDS: Record<Platform, readonly string[]> = {
  slack: ['slack:post', 'slack:update', 'slack:append'],
  discord: ['discord:channel', 'discord:global'],
  playground: [],
  test: [],
};

const CONTEXT_SKIP_REASONS: readonly ContextSkipReason[] = ['budget', 'timeout', 'error'];
const REFUSED_REASONS: readonly RefusedReason[] = ['hold_full', 'queue_full', 'user_rate_limited', 'restarting'];

/** The failure reasons the core reports (ChatError kinds, platform, storage, internal). */
const FAILURE_REASONS = ['platform', 'internal', 'storage', 'server', 'network', 'timeout', 'rate_limited'];

export function createMetrics(opts: MetricsOptions = {}): PromBridgeMetrics {
  const registry = new Registry();
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Counter<L>({ name, help, labelNames, registers });
  const latency = (name: string, help: string) =>
    new Histogram<'platform'>({ name, help, labelNames: ['platform'], buckets: LATENCY_BUCKETS, registers });

  const started = counter('bridge_replies_started_total', 'Replies started (an upstream call was made).', ['platform']);
  const finished = counter('bridge_replies_finished_total', 'Replies completed in full.', ['platform']);
  const failed = counter('bridge_replies_failed_total', 'Replies that ended in an error message.', [
    'platform',
    'reason',
  ]);
  const interrupted = counter('bridge_replies_interrupted_total', 'Replies cut off (reset, idle timeout, shutdown).', [
    'platform',
  ]);
  const stopped = counter('bridge_replies_stopped_total', 'Replies stopped by their asker (Stop, or `stop`).', [
    'platform',
  ]);
  const feedback = counter('bridge_feedback_total', 'Thumbs up/down votes recorded on replies.', ['platform', 'vote']);
  const firstToken = latency(
    'bridge_upstream_first_token_seconds',
    'Seconds from the message arriving to the first upstream text.',
  );
  const firstText = latency(
    'bridge_platform_first_text_seconds',
    'Seconds from the message arriving to the first text shown on the platform.',
  );
  const writes = counter('bridge_platform_writes_total', 'Messages posted and edited on the platform.', [
    'platform',
    'kind',
  ]);
  const rateLimited = counter('bridge_platform_rate_limited_total', 'Platform 429 answers, by bucket kind.', [
    'platform',
    'bucket',
  ]);
  const upstreamErrors = counter(
    'bridge_upstream_errors_total',
    'Upstream errors by HTTP status (or network/timeout) and code.',
    ['status', 'code'],
  );
  const dedup = counter('bridge_dedup_hits_total', 'Incoming events dropped as already handled.', ['platform']);
  const queueDepth = new Gauge({
    name: 'bridge_queue_depth',
    help: 'Messages waiting for a reply slot.',
    registers,
  });
  const inFlight = new Gauge({ name: 'bridge_replies_in_flight', help: 'Replies currently streaming.', registers });
  const postOnce = new Gauge<'platform'>({
    name: 'bridge_replies_post_once',
    help: 'Replies not streaming because the rate budgets could not pay their final: each posts its text once at the end.',
    labelNames: ['platform'],
    registers,
  });

  const contextSkipped = counter(
    'bridge_context_skipped_total',
    'New conversations sent without the place history: its read could not be paid now (budget), took over 2 s (timeout) or failed (error).',
    ['platform', 'reason'],
  );

  // A write the platform refused for its form, sent again plainer (the words always arrive).
  const richFallback = counter(
    'bridge_rich_fallback_total',
    'Writes the platform refused for their form (blocks, a table, Markdown, components, length), sent again with the same words in a plainer form, by the platform error code.',
    ['platform', 'reason'],
  );

  // An outage of the store: messages kept until it is back, and deliveries refused (issue 37).
  const held = new Gauge({
    name: 'bridge_held_events',
    help: 'Messages held in memory because the store cannot be used; answered once it is back.',
    registers,
  });
  const refused = counter(
    'bridge_refused_deliveries_total',
    'Messages refused with a notice instead of answered, by reason (hold_full: the store is down and the hold is full).',
    ['platform', 'reason'],
  );

  const share = new Gauge({
    name: 'bridge_budget_share',
    help: "This replica's share of every platform rate-limit bucket: 1 / the live replicas (1 alone).",
    registers,
  });
  share.set(1);

  // Values that can come from outside the process are bounded (see labels.ts).
  const reasons = new BoundedLabel(30);
  const buckets = new BoundedLabel(30);
  const statuses = new BoundedLabel(30);
  const codes = new BoundedLabel(50);
  const fallbackReasons = new BoundedLabel(30);

  for (const platform of opts.platforms ?? []) {
    for (const c of [started, finished, interrupted, stopped, dedup]) c.inc({ platform }, 0);
    for (const vote of ['up', 'down']) feedback.inc({ platform, vote }, 0);
    for (const reason of FAILURE_REASONS) failed.inc({ platform, reason: reasons.value(reason) }, 0);
    for (const bucket of BUCKET_KINDS[platform]) rateLimited.inc({ platform, bucket: buckets.value(bucket) }, 0);
    for (const kind of ['post', 'edit', 'continuation']) writes.inc({ platform, kind }, 0);
    postOnce.set({ platform }, 0);
    for (const reason of CONTEXT_SKIP_REASONS) contextSkipped.inc({ platform, reason }, 0);
    for (const reason of REFUSED_REASONS) refused.inc({ platform, reason }, 0);
  }

  return {
    registry,
    contentType: registry.contentType,
    text: () => registry.metrics(),
    replyStarted: (platform: Platform) => started.inc({ platform }),
    replyFinished: (platform: Platform) => finished.inc({ platform }),
    replyFailed: (platform: Platform, reason: string) => failed.inc({ platform, reason: reasons.value(reason) }),
    replyInterrupted: (platform: Platform) => interrupted.inc({ platform }),
    replyStopped: (platform: Platform) => stopped.inc({ platform }),
    feedbackVote: (platform: Platform, vote: 'up' | 'down') => feedback.inc({ platform, vote }),
    upstreamFirstToken: (platform: Platform, seconds: number) => firstToken.observe({ platform }, seconds),
    platformFirstText: (platform: Platform, seconds: number) => firstText.observe({ platform }, seconds),
    platformWrite: (platform: Platform, kind) => writes.inc({ platform, kind }),
    platformRateLimited: (platform: Platform, bucket: string) =>
      rateLimited.inc({ platform, bucket: buckets.value(bucketLabel(bucket)) }),
    upstreamError: (status: string, code: string) =>
      upstreamErrors.inc({ status: statuses.value(status), code: codes.value(code) }),
    duplicateDelivery: (platform: Platform) => dedup.inc({ platform }),
    queueDepth: (n: number) => queueDepth.set(n),
    inFlight: (n: number) => inFlight.set(n),
    postOnce: (platform: Platform, delta: 1 | -1) => postOnce.inc({ platform }, delta),
    budgetShare: (fraction: number) => share.set(fraction),
    contextSkipped: (platform: Platform, reason: ContextSkipReason) => contextSkipped.inc({ platform, reason }),
    plainFallback: (platform: Platform, reason: string) =>
      richFallback.inc({ platform, reason: fallbackReasons.value(reason) }),
    heldEvents: (n: number) => held.set(n),
    deliveryRefused: (platform: Platform, reason: RefusedReason) => refused.inc({ platform, reason }),
  };
}
