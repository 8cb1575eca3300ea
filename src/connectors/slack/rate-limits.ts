import { type BucketRef, PlatformRateLimitedError, PlatformWriteError } from '../../core/ports.js';

// Slack publishes tiers, not headers: these are the budgets the scheduler assumes. A 429
// (surfaced because the WebClient runs with rejectRateLimitedCalls) teaches it the rest. Tiers
// per method and workspace, per Slack's method reference: chat.update Tier 3 (50+ a minute),
// chat.appendStream Tier 4 (100+), chat.startStream and chat.stopStream Tier 2 (20+);
// chat.postMessage is special (about one a second per channel), and a stream's start posts a
// message too, so it pays both its Tier 2 bucket and the channel's posts.

export interface SlackLimits {
  /** chat.postMessage / chat.startStream: about one per second per channel. */
  post: { limit: number; windowMs: number };
  /** chat.startStream: Tier 2 (20+ a minute), per workspace, on top of the channel's posts. */
  start: { limit: number; windowMs: number };
  /** chat.update: tier 3, per workspace. */
  update: { limit: number; windowMs: number };
  /** chat.appendStream: Tier 4 (100+ a minute), per workspace. */
  append: { limit: number; windowMs: number };
  /** chat.stopStream: Tier 2 (20+ a minute), per workspace, a bucket of its own. */
  endStream: { limit: number; windowMs: number };
  /** conversations.replies / conversations.history (thread context): tier 3, per workspace. */
  history: { limit: number; windowMs: number };
}

export const DEFAULT_SLACK_LIMITS: SlackLimits = {
  post: { limit: 1, windowMs: 1000 },
  start: { limit: 20, windowMs: 60_000 },
  update: { limit: 50, windowMs: 60_000 },
  append: { limit: 100, windowMs: 60_000 },
  endStream: { limit: 20, windowMs: 60_000 },
  history: { limit: 50, windowMs: 60_000 },
};

// Slack limits every channel's posts alike ("short bursts allowed"): one family per workspace, so
// the burst one channel finds is every channel's.
export function postBucket(limits: SlackLimits, team: string, channel: string): BucketRef {
  return { key: `slack:${team}:${channel}:post`, ...limits.post, perPlace: true, family: `slack:${team}:posts` };
}

// Per workspace: a 429 shrinks the workspace's bucket, whichever channel the write went to.
export function updateBucket(limits: SlackLimits, team: string): BucketRef {
  return { key: `slack:${team}:update`, ...limits.update };
}

/**
 * A channel's share of the workspace's chat.update bucket (Slack documents no per-channel limit):
 * it limits nothing until a 429 is blamed on the channel (core/budget/place-blame.ts); what one
 * channel learns, every channel of the workspace does (a family).
 */
export function channelUpdateBucket(limits: SlackLimits, team: string, channel: string): BucketRef {
  const update = updateBucket(limits, team);
  return {
    ...update,
    key: `slack:${team}:${channel}:update`,
    perPlace: true,
    family: `${update.key}:channels`,
    placeOf: update.key,
  };
}

/** chat.startStream's own Tier 2 bucket; a 429 of a stream's start teaches it (the method's tier). */
export function startBucket(limits: SlackLimits, team: string): BucketRef {
  return { key: `slack:${team}:start`, ...limits.start };
}

export function appendBucket(limits: SlackLimits, team: string): BucketRef {
  return { key: `slack:${team}:append`, ...limits.append };
}

export function endStreamBucket(limits: SlackLimits, team: string): BucketRef {
  return { key: `slack:${team}:stop`, ...limits.endStream };
}

/** chat.postEphemeral (refusal notices): tier 4, per workspace. */
export function ephemeralBucket(team: string): BucketRef {
  return { key: `slack:${team}:ephemeral`, limit: 100, windowMs: 60_000 };
}

export function historyBucket(limits: SlackLimits, team: string): BucketRef {
  return { key: `slack:${team}:history`, ...limits.history };
}

// Errors where trying the same call again may work.
const TRANSIENT = new Set([
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
  'ratelimited',
  'team_added_to_org',
]);

interface SlackErrorShape {
  code?: string;
  retryAfter?: number;
  data?: { error?: string };
  statusCode?: number;
  message?: string;
}

/** The Slack error code of a Web API error (`channel_not_found`), if it is one. */
export function slackErrorCode(err: unknown): string | undefined {
  const e = err as SlackErrorShape | undefined;
  return e?.code === 'slack_webapi_platform_error' ? e.data?.error : undefined;
}

/** Translates a @slack/web-api error into the port's typed errors. */
export function translateSlackError(err: unknown, bucket: string): Error {
  const e = (err ?? {}) as SlackErrorShape;
  switch (e.code) {
    case 'slack_webapi_rate_limited_error':
      return new PlatformRateLimitedError(bucket, Math.max(1, e.retryAfter ?? 1) * 1000);
    case 'slack_webapi_platform_error': {
      const code = e.data?.error ?? 'unknown_error';
      return new PlatformWriteError(`Slack refused the write: ${code}`, code, TRANSIENT.has(code));
    }
    case 'slack_webapi_request_error':
      return new PlatformWriteError('Slack could not be reached', 'request_error', true);
    case 'slack_webapi_http_error':
      return new PlatformWriteError(
        `Slack answered HTTP ${e.statusCode ?? '?'}`,
        'http_error',
        (e.statusCode ?? 0) >= 500,
      );
    default:
      return err instanceof Error ? err : new Error(String(err));
  }
}
