import type { webApi } from '@slack/bolt';
import { type Logger, scrubSecrets } from '../../logger.js';
import { HistoryReads } from './history-reads.js';
import { DEFAULT_SLACK_LIMITS } from './rate-limits.js';

// Is the bot part of a channel thread? Then a message there continues the conversation without
// a mention. Asked of Slack (conversations.replies) so it holds across restarts, and cached:
// positive answers stay true (the bot does not leave a thread), negative ones expire.

const NEGATIVE_TTL_MS = 5 * 60_000;
/** Messages asked per membership call: 15, what Slack gives apps outside the Marketplace. */
export const MEMBERSHIP_PAGE = 15;
/** Calls one membership check makes at most (the bot's mention is usually on the first page). */
export const MEMBERSHIP_PAGES = 4;
const MAX_KNOWN = 10_000;

export class ThreadMembership {
  private readonly answers = new Map<string, { member: boolean; at: number }>();

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = MAX_KNOWN,
    /** The history calls' budget (history-reads.ts); default: straight to Slack. */
    private readonly reads: HistoryReads = new HistoryReads(DEFAULT_SLACK_LIMITS, undefined),
  ) {}

  /** Threads remembered now (for tests and the bound). */
  get size(): number {
    return this.answers.size;
  }

  private key(team: string, channel: string, threadTs: string): string {
    return `${team}:${channel}:${threadTs}`;
  }

  mark(team: string, channel: string, threadTs: string): void {
    this.remember(this.key(team, channel, threadTs), true);
  }

  /** Both answers count against the bound: a "no" is remembered too (issue 31), least recent dropped. */
  private remember(key: string, member: boolean): void {
    this.answers.delete(key);
    this.answers.set(key, { member, at: this.now() });
    for (const oldest of this.answers.keys()) {
      if (this.answers.size <= this.maxEntries) break;
      this.answers.delete(oldest);
    }
  }

  /**
   * What is known now, without asking Slack: true (the bot is in the thread), false (it was not,
   * asked less than NEGATIVE_TTL_MS ago), undefined (ask Slack: `ask`).
   */
  known(team: string, channel: string, threadTs: string): boolean | undefined {
    const hit = this.answers.get(this.key(team, channel, threadTs));
    if (hit === undefined || (!hit.member && this.now() - hit.at >= NEGATIVE_TTL_MS)) return undefined;
    return hit.member;
  }

  /** Asks Slack whether the bot is in the thread, and remembers the answer (either way). */
  async ask(
    client: webApi.WebClient,
    team: string,
    channel: string,
    threadTs: string,
    bot: { userId: string; botId: string | undefined },
  ): Promise<boolean> {
    let member = false;
    try {
      member = await this.readMembership(client, team, channel, threadTs, bot);
    } catch (err) {
      // Unknown is treated as "not ours": better to miss one message than to answer strangers.
      this.logger.warn({ err: scrubSecrets(String(err)), channel }, 'conversations.replies failed');
      return false;
    }
    this.remember(this.key(team, channel, threadTs), member);
    return member;
  }

  /**
   * Pages the thread from its parent, MEMBERSHIP_PAGE messages a call (what Slack gives apps
   * outside the Marketplace), each call paid from the workspace's history bucket, until the bot
   * shows up or MEMBERSHIP_PAGES calls were made.
   */
  private async readMembership(
    client: webApi.WebClient,
    team: string,
    channel: string,
    threadTs: string,
    bot: { userId: string; botId: string | undefined },
  ): Promise<boolean> {
    let cursor: string | undefined;
    for (let page = 0; page < MEMBERSHIP_PAGES; page++) {
      const at = cursor;
      const res = await this.reads.read(team, () =>
        client.conversations.replies({
          channel,
          ts: threadTs,
          limit: MEMBERSHIP_PAGE,
          ...(at !== undefined ? { cursor: at } : {}),
        }),
      );
      const found = (res.messages ?? []).some(
        (m) =>
          m.user === bot.userId ||
          (bot.botId !== undefined && m.bot_id === bot.botId) ||
          (m.text ?? '').includes(`<@${bot.userId}>`),
      );
      if (found) return true;
      cursor = res.has_more === true ? res.response_metadata?.next_cursor : undefined;
      if (cursor === undefined || cursor === '') return false;
    }
    return false;
  }
}
