import { type AnyThreadChannel, type REST, Routes } from 'discord.js';
import type { Logger } from '../../logger.js';
import { toPlatformError } from './errors.js';
import type { ThreadFacts } from './events.js';

// A message in a thread discord.js has not cached (archived before a restart, so absent from
// GUILD_CREATE) arrives with a partial thread: no owner, no parent. Read them from the API once so
// "the bot's own thread" is still recognised (discord.js's own fetch does not update ownerId).

const MAX_REMEMBERED = 5000;

export class ThreadFactsResolver {
  private readonly known = new Map<string, ThreadFacts>();

  constructor(
    private readonly rest: REST,
    private readonly logger: Logger,
  ) {}

  async facts(channel: AnyThreadChannel): Promise<ThreadFacts> {
    if (channel.ownerId != null && channel.parentId != null) {
      return { ownerId: channel.ownerId, parentId: channel.parentId };
    }
    const remembered = this.known.get(channel.id);
    if (remembered) return remembered;
    try {
      const data = (await this.rest.get(Routes.channel(channel.id))) as {
        owner_id?: string;
        parent_id?: string | null;
      };
      const facts = { ownerId: data.owner_id ?? null, parentId: data.parent_id ?? null };
      if (this.known.size >= MAX_REMEMBERED) {
        const oldest = this.known.keys().next().value;
        if (oldest !== undefined) this.known.delete(oldest);
      }
      this.known.set(channel.id, facts);
      return facts;
    } catch (err) {
      this.logger.warn(
        { channelId: channel.id, err: toPlatformError(err, 'fetch').message },
        'discord: could not fetch a thread',
      );
      return { ownerId: channel.ownerId ?? null, parentId: channel.parentId };
    }
  }
}
