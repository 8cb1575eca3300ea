import { DiscordAPIError, HTTPError, RateLimitError } from 'discord.js';
import { PlatformRateLimitedError, PlatformWriteError } from '../../core/ports.js';
import { scrubSecrets } from '../../logger.js';
import { DiscordServerError } from './server-errors.js';

// SDK errors become the core's two typed errors at this edge; the core never sees discord.js types.

/** Discord JSON error codes that mean "this write will never work". */
const PERMANENT: Record<number, string> = {
  10003: 'unknown_channel',
  10008: 'unknown_message',
  10015: 'unknown_webhook',
  10062: 'unknown_interaction',
  50001: 'missing_access',
  50005: 'not_own_message',
  50013: 'missing_permissions',
  50035: 'invalid_form_body',
  50083: 'thread_archived',
  160005: 'thread_locked',
};

/** Thread already made for this message: the thread (same id as the message) exists, fine. */
export const THREAD_ALREADY_CREATED = 160004;

export function toPlatformError(err: unknown, bucket: string): Error {
  if (err instanceof PlatformRateLimitedError || err instanceof PlatformWriteError) return err;
  if (err instanceof RateLimitError) {
    // retryAfter is set for a 429; a local pre-emptive reject only knows timeToReset.
    const ms = Math.max(1, Math.ceil(err.retryAfter > 0 ? err.retryAfter : err.timeToReset));
    return new PlatformRateLimitedError(bucket, ms, err.global);
  }
  if (err instanceof DiscordAPIError) {
    const code = typeof err.code === 'number' ? err.code : Number(err.code);
    const name = PERMANENT[code] ?? `discord_${err.code}`;
    // 4xx are the request's fault: repeating it gives the same answer.
    return new PlatformWriteError(
      `discord ${err.status} ${code}: ${scrubSecrets(err.message)}`,
      name,
      err.status >= 500,
    );
  }
  // A message write's 5xx, passed up without discord.js's retry: the scheduler retries it.
  if (err instanceof DiscordServerError) {
    return new PlatformWriteError(`discord http ${err.status}`, `http_${err.status}`, true);
  }
  if (err instanceof HTTPError) {
    return new PlatformWriteError(`discord http ${err.status}`, `http_${err.status}`, true);
  }
  const message = err instanceof Error ? err.message : String(err);
  return new PlatformWriteError(`discord request failed: ${scrubSecrets(message)}`, 'network', true);
}

export function discordCode(err: unknown): number | undefined {
  if (!(err instanceof DiscordAPIError)) return undefined;
  return typeof err.code === 'number' ? err.code : Number(err.code);
}
