import { DefaultRestOptions, type ResponseLike } from 'discord.js';
import type { DiscordRateLimitFeed } from './rate-limits.js';

// discord.js retries a 5xx answer itself (REST `retries`, one setting for every route). For a
// reply's message writes that retry went around the bridge's scheduler: it spent the channel's
// budget unseen and doubled the scheduler's own retry. discord.js has no per-request `retries`,
// but it only retries what `makeRequest` hands back as a 5xx (or an AbortError/ECONNRESET throw):
// so for message writes a 5xx answer, a reset or a timeout is turned into an error of its own
// here, discord.js passes it up untouched, and the sink's toPlatformError makes it a retryable
// PlatformWriteError that the reply writer retries on a new grant of the scheduler (the create's
// nonce keeps a write that took effect from making a second message). Every other route keeps
// discord.js's retry.

/** A message write answered 5xx: thrown from makeRequest so discord.js does not retry it. */
export class DiscordServerError extends Error {
  override readonly name = 'DiscordServerError';
  constructor(
    readonly status: number,
    readonly method: string,
  ) {
    super(`discord answered ${status} to a message write`);
  }
}

type MakeRequest = (url: string, init: Parameters<typeof DefaultRestOptions.makeRequest>[1]) => Promise<ResponseLike>;

/**
 * A message write got no answer (reset, timeout): thrown in place of discord.js's AbortError or
 * ECONNRESET, which it would retry. Its message names neither; the original is the cause.
 */
export class DiscordWriteCutError extends Error {
  override readonly name = 'DiscordWriteCutError';
  constructor(cause: unknown) {
    super('discord message write got no answer', { cause });
  }
}

/** REST `makeRequest` that leaves 5xx answers and cuts of message writes to the bridge's scheduler. */
export function messageWritesWithoutRetry(
  feed: DiscordRateLimitFeed,
  inner: MakeRequest = (url, init) => DefaultRestOptions.makeRequest(url, init),
): MakeRequest {
  return async (url, init) => {
    const method = (init.method ?? 'GET').toUpperCase();
    let res: ResponseLike;
    try {
      res = await inner(url, init);
    } catch (err) {
      throw isMessageWrite(feed, url, method) ? new DiscordWriteCutError(err) : err;
    }
    if (res.status < 500 || res.status >= 600) return res;
    if (!isMessageWrite(feed, url, method)) return res;
    // Release the connection: the body of a 5xx is nothing the bridge reads.
    await res.arrayBuffer().catch(() => undefined);
    throw new DiscordServerError(res.status, method);
  };
}

/** A reply's writes: POST/PATCH of channel messages and of interaction webhooks. */
function isMessageWrite(feed: DiscordRateLimitFeed, url: string, method: string): boolean {
  return (method === 'POST' || method === 'PATCH') && feed.keyForUrl(url, method) !== undefined;
}
