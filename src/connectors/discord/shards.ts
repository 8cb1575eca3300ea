import { type Client, Events } from 'discord.js';
import type { Logger } from '../../logger.js';

// Which of this replica's gateway shards are connected right now. discord.js's own "client ready"
// turns true once, when every shard first became ready, and stays true while one shard
// reconnects; readiness (/readyz) must instead follow each shard: ready only while every shard
// this replica runs is, false from a shard's drop until it resumes or identifies again.

export class ShardStates {
  private readonly up = new Set<number>();

  constructor(
    private readonly client: Client,
    private readonly logger: Logger,
    private readonly shuttingDown: () => boolean,
    /** A shard closed for good (4004 a reset token, 4014 intents...); absent: logged only. */
    private readonly gone?: (shard: number, code: number) => boolean,
  ) {}

  /** Follow the client's shard events; every log line names the shard. */
  watch(): void {
    const { client, logger } = this;
    client.on(Events.ShardReady, (shard, unavailable) => {
      this.up.add(shard);
      logger.info(
        { shard, shardCount: this.count(), ...(unavailable?.size ? { unavailableGuilds: unavailable.size } : {}) },
        'discord: shard ready',
      );
    });
    client.on(Events.ShardResume, (shard, replayed) => {
      this.up.add(shard);
      logger.info({ shard, shardCount: this.count(), replayed }, 'discord: shard resumed');
    });
    client.on(Events.ShardReconnecting, (shard) => {
      this.up.delete(shard);
      if (!this.shuttingDown()) logger.warn({ shard, shardCount: this.count() }, 'discord: shard reconnecting');
    });
    client.on(Events.ShardDisconnect, (ev, shard) => {
      this.up.delete(shard);
      if (this.shuttingDown()) return;
      // Told as the process's one fatal line when someone listens (main), else logged here.
      if (this.gone?.(shard, ev.code) === true) return;
      logger.error({ shard, shardCount: this.count(), code: ev.code }, 'discord: shard disconnected for good');
    });
    client.on(Events.ShardError, (err, shard) => logger.warn({ shard, err: err.message }, 'discord: shard error'));
  }

  /** The shard ids this replica runs, ascending; known once login has settled the count. */
  ids(): number[] {
    return [...this.client.ws.shards.keys()].sort((a, b) => a - b);
  }

  /** The bot's total shard count (discord.js fills it in from GET /gateway/bot in 'auto' mode). */
  count(): number | undefined {
    return this.client.options.shardCount;
  }

  /** This replica's shards that are not connected now. */
  down(): number[] {
    return this.ids().filter((id) => !this.up.has(id));
  }

  /** Every shard this replica runs is connected (and there is at least one). */
  allUp(): boolean {
    return this.ids().length > 0 && this.down().length === 0;
  }

  /** Forget every shard (the client is being destroyed). */
  clear(): void {
    this.up.clear();
  }
}

/** `promise`, or a rejection naming `what` once `ms` have passed first. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    // unref: a failed start must not keep a CLI process alive until the deadline.
    timer = setTimeout(() => reject(new Error(`waited ${ms} ms for ${what}`)), ms).unref();
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
