import { type AnyThreadChannel, type REST, Routes } from 'discord.js';
import type { Logger } from '../../logger.js';
import { toPlatformError } from './errors.js';
import type { ThreadFacts } from './events.js';

// A message in a thread discord.js has not cached (archived before a restart, so absent from
// GUILD_CREATE) arrives with a partial thread: no owner, no parent. Read them from the API once so
// "the bot's own thread" is still recognised (discord.js's own fetch does not update ownerId).
// A thread's place names its parent, so the place of such a message is known only after the
// read: the one await before a Discord message's arrival. While a thread's read is under way,
// every later message of the thread waits for the same read, so they go on in the order they came.

const MAX_REMEMBERED = 5000;

export class ThreadFactsResolver {
  private readonly known = new Map<string, ThreadFacts>();
  /** Reads under way, by thread: later messages of the thread wait for the same one. */
  private readonly reading = new Map<string, Promise<ThreadFacts>>();

  constructor(
    private readonly rest: REST,
    private readonly logger: Logger,
  ) {}

  /** The thread's facts: at once when known, else one read of the API shared by the thread's messages meanwhile. */
  facts(channel: AnyThreadChannel): ThreadFacts | Promise<ThreadFacts> {
    const read = this.reading.get(channel.id);
    if (read !== undefined) return read;
    if (channel.ownerId != null && channel.parentId != null) {
      return { ownerId: channel.ownerId, parentId: channel.parentId };
    }
    const remembered = this.known.get(channel.id);
    if (remembered) return remembered;
    const reading = this.read(channel).finally(() => this.reading.delete(channel.id));
    this.reading.set(channel.id, reading);
    return reading;
  }

  private async read(channel: AnyThreadChannel): Promise<ThreadFacts> {
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
