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
  const series = registerSeries(registry);
  const labels = boundedLabels();
  for (const platform of opts.platforms ?? []) zeroSeries(series, labels, platform);
  return recorder(registry, series, labels);
}

/** Every series of the bridge, registered on `registry` (in this order in /metrics). */
function registerSeries(registry: Registry) {
  const registers = [registry];
  return { ...replySeries(registers), ...loadSeries(registers) };
}

/** What became of the replies and the events, and how fast their first text came. */
function replySeries(registers: Registry[]) {
  const started = counter(registers, 'bridge_replies_started_total', 'Replies started (an upstream call was made).', [
    'platform',
  ]);
  const finished = counter(registers, 'bridge_replies_finished_total', 'Replies completed in full.', ['platform']);
  const failed = counter(registers, 'bridge_replies_failed_total', 'Replies that ended in an error message.', [
    'platform',
    'reason',
  ]);
  const interrupted = counter(
    registers,
    'bridge_replies_interrupted_total',
    'Replies cut off (reset, idle timeout, shutdown).',
    ['platform'],
  );
  const stopped = counter(
    registers,
    'bridge_replies_stopped_total',
    'Replies stopped by their asker (Stop, or `stop`).',
    ['platform'],
  );
  const feedback = counter(registers, 'bridge_feedback_total', 'Thumbs up/down votes recorded on replies.', [
    'platform',
    'vote',
  ]);
  const firstToken = latency(
    registers,
    'bridge_upstream_first_token_seconds',
    'Seconds from the message arriving to the first upstream text.',
  );
  const firstText = latency(
    registers,
    'bridge_platform_first_text_seconds',
    'Seconds from the message arriving to the first text shown on the platform.',
  );
  const writes = counter(registers, 'bridge_platform_writes_total', 'Messages posted and edited on the platform.', [
    'platform',
    'kind',
  ]);
  const rateLimited = counter(
    registers,
    'bridge_platform_rate_limited_total',
    'Platform 429 answers, by bucket kind.',
    ['platform', 'bucket'],
  );
  const upstreamErrors = counter(
    registers,
    'bridge_upstream_errors_total',
    'Upstream errors by HTTP status (or network/timeout) and code.',
    ['status', 'code'],
  );
  const dedup = counter(registers, 'bridge_dedup_hits_total', 'Incoming events dropped as already handled.', [
    'platform',
  ]);
  return {
    started,
    finished,
    failed,
    interrupted,
    stopped,
    feedback,
    firstToken,
    firstText,
    writes,
    rateLimited,
    upstreamErrors,
    dedup,
  };
}

/** How the bridge copes with load, limits and outages: queues, plain fallbacks, held messages, its budget share. */
function loadSeries(registers: Registry[]) {
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
    registers,
    'bridge_context_skipped_total',
    'New conversations sent without the place history: its read could not be paid now (budget), took over 2 s (timeout) or failed (error).',
    ['platform', 'reason'],
  );

  // The plain fallback: a write the platform refused for its rich form, sent again plainly (the words always arrive).
  const plainFallback = counter(
    registers,
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
    registers,
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
  return { queueDepth, inFlight, postOnce, contextSkipped, plainFallback, held, refused, share };
}

function counter<L extends string>(registers: Registry[], name: string, help: string, labelNames: readonly L[]) {
  return new Counter<L>({ name, help, labelNames, registers });
}

function latency(registers: Registry[], name: string, help: string) {
  return new Histogram<'platform'>({ name, help, labelNames: ['platform'], buckets: LATENCY_BUCKETS, registers });
}

type Series = ReturnType<typeof registerSeries>;

/** Values that can come from outside the process are bounded (see labels.ts). */
function boundedLabels() {
  return {
    reasons: new BoundedLabel(30),
    buckets: new BoundedLabel(30),
    statuses: new BoundedLabel(30),
    codes: new BoundedLabel(50),
    fallbackReasons: new BoundedLabel(30),
  };
}

type Labels = ReturnType<typeof boundedLabels>;

/** A configured platform's outcome and 429 series, at 0 from start-up (see MetricsOptions.platforms). */
function zeroSeries(series: Series, labels: Labels, platform: Platform): void {
  const { started, finished, interrupted, stopped, dedup, feedback, failed, rateLimited, writes } = series;
  for (const c of [started, finished, interrupted, stopped, dedup]) c.inc({ platform }, 0);
  for (const vote of ['up', 'down']) feedback.inc({ platform, vote }, 0);
  for (const reason of FAILURE_REASONS) failed.inc({ platform, reason: labels.reasons.value(reason) }, 0);
  for (const bucket of BUCKET_KINDS[platform]) rateLimited.inc({ platform, bucket: labels.buckets.value(bucket) }, 0);
  for (const kind of ['post', 'edit', 'continuation']) writes.inc({ platform, kind }, 0);
  series.postOnce.set({ platform }, 0);
  for (const reason of CONTEXT_SKIP_REASONS) series.contextSkipped.inc({ platform, reason }, 0);
  for (const reason of REFUSED_REASONS) series.refused.inc({ platform, reason }, 0);
}

/** The BridgeMetrics port over the series: each event the core reports, recorded on its series. */
function recorder(registry: Registry, s: Series, labels: Labels): PromBridgeMetrics {
  const { reasons, buckets, statuses, codes, fallbackReasons } = labels;
  return {
    registry,
    contentType: registry.contentType,
    text: () => registry.metrics(),
    replyStarted: (platform: Platform) => s.started.inc({ platform }),
    replyFinished: (platform: Platform) => s.finished.inc({ platform }),
    replyFailed: (platform: Platform, reason: string) => s.failed.inc({ platform, reason: reasons.value(reason) }),
    replyInterrupted: (platform: Platform) => s.interrupted.inc({ platform }),
    replyStopped: (platform: Platform) => s.stopped.inc({ platform }),
    feedbackVote: (platform: Platform, vote: 'up' | 'down') => s.feedback.inc({ platform, vote }),
    upstreamFirstToken: (platform: Platform, seconds: number) => s.firstToken.observe({ platform }, seconds),
    platformFirstText: (platform: Platform, seconds: number) => s.firstText.observe({ platform }, seconds),
    platformWrite: (platform: Platform, kind) => s.writes.inc({ platform, kind }),
    platformRateLimited: (platform: Platform, bucket: string) =>
      s.rateLimited.inc({ platform, bucket: buckets.value(bucketLabel(bucket)) }),
    upstreamError: (status: string, code: string) =>
      s.upstreamErrors.inc({ status: statuses.value(status), code: codes.value(code) }),
    duplicateDelivery: (platform: Platform) => s.dedup.inc({ platform }),
    queueDepth: (n: number) => s.queueDepth.set(n),
    inFlight: (n: number) => s.inFlight.set(n),
    postOnce: (platform: Platform, delta: 1 | -1) => s.postOnce.inc({ platform }, delta),
    budgetShare: (fraction: number) => s.share.set(fraction),
    contextSkipped: (platform: Platform, reason: ContextSkipReason) => s.contextSkipped.inc({ platform, reason }),
    plainFallback: (platform: Platform, reason: string) =>
      s.plainFallback.inc({ platform, reason: fallbackReasons.value(reason) }),
    heldEvents: (n: number) => s.held.set(n),
    deliveryRefused: (platform: Platform, reason: RefusedReason) => s.refused.inc({ platform, reason }),
  };
}
