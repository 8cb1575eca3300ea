import type { webApi } from '@slack/bolt';
import type { Logger } from '../../logger.js';
import { scrubSecrets } from '../../logger.js';

// Is the bot part of a channel thread? Then a message there continues the conversation without
// a mention. Asked of Slack (conversations.replies) so it holds across restarts, and cached:
// positive answers stay true (the bot does not leave a thread), negative ones expire.

const NEGATIVE_TTL_MS = 5 * 60_000;
const MAX_ENTRIES = 10_000;

export class ThreadMembership {
  private readonly known = new Map<string, { member: boolean; at: number }>();

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = MAX_ENTRIES,
  ) {}

  /** Threads remembered now (for tests and the bound). */
  get size(): number {
    return this.known.size;
  }

  private key(team: string, channel: string, threadTs: string): string {
    return `${team}:${channel}:${threadTs}`;
  }

  mark(team: string, channel: string, threadTs: string): void {
    this.remember(this.key(team, channel, threadTs), true);
  }

  /**
   * Both answers go through here: a "no" is remembered too (5 minutes), one per thread the bot
   * was asked about, so "no"s must count against the bound as much as "yes"es (issue 31).
   */
  private remember(key: string, member: boolean): void {
    this.known.delete(key);
    this.known.set(key, { member, at: this.now() });
    for (const oldest of this.known.keys()) {
      if (this.known.size <= this.maxEntries) break;
      this.known.delete(oldest);
    }
  }

  async isMember(
    client: webApi.WebClient,
    team: string,
    channel: string,
    threadTs: string,
    bot: { userId: string; botId: string | undefined },
  ): Promise<boolean> {
    const key = this.key(team, channel, threadTs);
    const hit = this.known.get(key);
    if (hit && (hit.member || this.now() - hit.at < NEGATIVE_TTL_MS)) return hit.member;
    let member = false;
    try {
      const res = await client.conversations.replies({ channel, ts: threadTs, limit: 200 });
      member = (res.messages ?? []).some(
        (m) =>
          m.user === bot.userId ||
          (bot.botId !== undefined && m.bot_id === bot.botId) ||
          (m.text ?? '').includes(`<@${bot.userId}>`),
      );
    } catch (err) {
      // Unknown is treated as "not ours": better to miss one message than to answer strangers.
      this.logger.warn({ err: scrubSecrets(String(err)), channel }, 'conversations.replies failed');
      return false;
    }
    if (member) this.mark(team, channel, threadTs);
    else this.remember(key, false);
    return member;
  }
}
