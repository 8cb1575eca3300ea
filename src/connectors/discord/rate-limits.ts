import type { APIRequest, RateLimitData, REST, ResponseLike } from 'discord.js';
import type { BucketRef, RateLimitObserver } from '../../core/ports.js';
import type { Logger } from '../../logger.js';

// discord.js REST queues and waits out rate limits on its own. The bridge has one scheduler for
// all replies instead, so for the routes a reply writes (channel messages, interaction webhooks)
// discord.js must reject rather than wait (RateLimitError → PlatformRateLimitedError), and every
// response's X-RateLimit-* headers are fed to the scheduler under our bucket keys.

/** Discord's observed create/edit budget per channel; the headers replace it once seen. */
export const DEFAULT_CHANNEL_BUCKET = { limit: 5, windowMs: 5000 } as const;
/** Interaction webhooks (edit original, follow-ups): assumed the same until headers say more. */
export const DEFAULT_WEBHOOK_BUCKET = { limit: 5, windowMs: 5000 } as const;

/** Writes per window assumed for a bucket before Discord's headers have been seen. */
export interface BucketBudget {
  limit: number;
  windowMs: number;
}

/**
 * Discord allows a bot 50 requests per second in all (discord.js enforces it before sending).
 * Reply writes get 40 of them through the scheduler; typing, threads and commands use the rest.
 */
export const GLOBAL_REPLY_BUCKET: BucketRef = { key: 'discord:global', limit: 40, windowMs: 1000 };

/** Discord's global limit per bot, which discord.js enforces per process. */
const GLOBAL_PER_SECOND = 50;

/**
 * discord.js's own global limit for a replica spending `share` of the bot's budgets: the replicas
 * together stay within the bot's 50 a second (the scheduler shares GLOBAL_REPLY_BUCKET itself).
 */
export function globalRequestsPerSecond(share: number): number {
  return Math.max(1, Math.floor(GLOBAL_PER_SECOND * share));
}

export function channelBucket(channelId: string, budget: BucketBudget = DEFAULT_CHANNEL_BUCKET): BucketRef {
  return { key: `discord:channel:${channelId}`, limit: budget.limit, windowMs: budget.windowMs, perPlace: true };
}

/**
 * Reading a channel's messages (thread context): Discord counts GETs apart from writes; assumed
 * like the write bucket until its headers say more.
 */
export function channelReadBucket(channelId: string, budget: BucketBudget = DEFAULT_CHANNEL_BUCKET): BucketRef {
  return { key: `discord:channel:${channelId}:read`, limit: budget.limit, windowMs: budget.windowMs };
}

export function interactionBucket(interactionId: string, budget: BucketBudget = DEFAULT_WEBHOOK_BUCKET): BucketRef {
  return { key: `discord:interaction:${interactionId}`, limit: budget.limit, windowMs: budget.windowMs };
}

/** Interaction tokens live 15 minutes; keep the token → interaction mapping no longer than that. */
const TOKEN_TTL_MS = 15 * 60_000;

const CHANNEL_MESSAGES = /\/channels\/(\d+)\/messages(?:\/\d+)?$/;
const WEBHOOK = /\/webhooks\/\d+\/([^/]+)(?:\/messages\/[^/]+)?$/;

export class DiscordRateLimitFeed {
  private readonly tokens = new Map<string, { interactionId: string; at: number }>();

  constructor(
    private readonly observer: RateLimitObserver,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** So webhook responses (whose path holds the token) map to the interaction's bucket. */
  registerInteraction(token: string, interactionId: string): void {
    const now = this.now();
    for (const [t, v] of this.tokens) if (now - v.at > TOKEN_TTL_MS) this.tokens.delete(t);
    this.tokens.set(token, { interactionId, at: now });
  }

  /**
   * Our bucket key for a REST path (with or without the /api/v10 prefix), if a reply writes there
   * or the thread context reads there (a GET of channel messages has a bucket of its own).
   */
  keyForPath(path: string, method = 'POST'): string | undefined {
    const pathname = path.split('?')[0] ?? path;
    const ch = CHANNEL_MESSAGES.exec(pathname);
    if (ch?.[1]) return method.toUpperCase() === 'GET' ? `discord:channel:${ch[1]}:read` : `discord:channel:${ch[1]}`;
    const wh = WEBHOOK.exec(pathname);
    if (wh?.[1]) {
      const entry = this.tokens.get(wh[1]);
      return entry ? `discord:interaction:${entry.interactionId}` : undefined;
    }
    return undefined;
  }

  /** rejectOnRateLimit: true for the reply routes (the scheduler decides when to retry them). */
  shouldReject(data: RateLimitData): boolean {
    // The global limit lasts under a second and discord.js waits it out well; it is no 429 from
    // Discord and says nothing about a channel's bucket, so it must not block one.
    if (data.global) return false;
    const method = data.method.toUpperCase();
    const key = this.keyForUrl(data.url, method);
    if (key !== undefined && (method === 'POST' || method === 'PATCH')) return true;
    // Other routes (typing, threads, commands) keep discord.js's own waiting; tell the scheduler
    // anyway when the limit is on one of our buckets.
    if (key !== undefined) this.observer.limited(key, data.retryAfter || data.timeToReset);
    this.logger.debug(
      { route: data.route, retryAfterMs: data.retryAfter, global: data.global },
      'discord rate limit (waiting)',
    );
    return false;
  }

  keyForUrl(url: string, method?: string): string | undefined {
    try {
      return this.keyForPath(new URL(url).pathname, method);
    } catch {
      return undefined;
    }
  }

  /** REST `response` event: headers → scheduler. */
  onResponse(request: APIRequest, response: ResponseLike): void {
    const key = this.keyForPath(request.path, request.method);
    const body = response.body as { cancel?: () => Promise<void> } | null;
    // The event hands us a clone; release its body so it does not buffer the whole response.
    void body?.cancel?.().catch(() => {});
    if (key === undefined) return;
    const h = response.headers;
    const limit = num(h.get('x-ratelimit-limit'));
    const remaining = num(h.get('x-ratelimit-remaining'));
    const resetAfter = num(h.get('x-ratelimit-reset-after'));
    if (limit === undefined && remaining === undefined && resetAfter === undefined) return;
    this.observer.observe({
      bucket: key,
      ...(limit === undefined ? {} : { limit }),
      ...(remaining === undefined ? {} : { remaining }),
      ...(resetAfter === undefined ? {} : { resetAfterMs: Math.ceil(resetAfter * 1000) }),
    });
  }

  attach(rest: REST): void {
    rest.on('response', (request, response) => this.onResponse(request, response));
  }
}

function num(v: string | null): number | undefined {
  if (v === null || v === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}
