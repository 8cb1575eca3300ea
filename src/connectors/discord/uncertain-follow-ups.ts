import { REST, Routes } from 'discord.js';
import { PlatformRateLimitedError, PlatformWriteError } from '../../core/ports.js';

// An interaction's follow-up (execute webhook) takes no nonce, so a follow-up whose answer was
// lost may exist: it is found before another is made. discord.js retries a 5xx once on its own,
// which would make a second follow-up before the bridge could look: follow-up creates go through
// a REST of the same options with no retries (one per client, made on first use).

const noRetries = new WeakMap<REST, REST>();

export function withoutRetries(rest: REST): REST {
  let r = noRetries.get(rest);
  if (r === undefined) {
    r = new REST({ ...rest.options, retries: 0 });
    noRetries.set(rest, r);
  }
  return r;
}

/** A write error after which the write may have taken effect (not a refusal, not a 429). */
export function isUncertain(err: Error): boolean {
  return !(err instanceof PlatformRateLimitedError) && err instanceof PlatformWriteError && err.retryable;
}

interface ListedMessage {
  id: string;
  webhook_id?: string;
  interaction_metadata?: { id?: string };
  interaction?: { id?: string };
}

/** How many of the channel's newest messages are searched (one read). */
const SEARCH_LIMIT = 50;

/**
 * The follow-up of this interaction that the bridge does not know (its answer was lost), newest
 * first among the channel's latest messages; undefined when there is none.
 */
export async function findLostFollowUp(
  rest: REST,
  channelId: string,
  applicationId: string,
  interactionId: string,
  known: ReadonlySet<string>,
): Promise<string | undefined> {
  const list = (await rest.get(Routes.channelMessages(channelId), {
    query: new URLSearchParams({ limit: String(SEARCH_LIMIT) }),
  })) as ListedMessage[];
  const hit = list.find(
    (m) =>
      m.webhook_id === applicationId &&
      (m.interaction_metadata?.id ?? m.interaction?.id) === interactionId &&
      !known.has(m.id),
  );
  return hit?.id;
}
