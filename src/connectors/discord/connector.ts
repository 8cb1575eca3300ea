import { once } from 'node:events';
import {
  GatewayCloseCodes,
  type ChatInputCommandInteraction,
  type Client,
  Events,
  type Interaction,
  Routes,
} from 'discord.js';
import type { DiscordConfig } from '../../config/config.js';
import {
  type Connector,
  ignoreRateLimits,
  type MessageHandler,
  type RateLimitObserver,
  type ReplyTarget,
} from '../../core/ports.js';
import type { Logger } from '../../logger.js';
import { createDiscordClient } from './client.js';
import { startRestSweep } from './rest-sweep.js';
import { answerUnknownInteraction, handleCommand, registerCommands } from './commands.js';
import { handleControl, isControl } from './controls.js';
import { toPlatformError } from './errors.js';
import { type DiscordIntakeDeps, listenForMessages } from './intake.js';
import { editInteractionMessage, isInteractionTarget } from './interaction-sink.js';
import { SeenMessages } from '../../core/reply/thread-context.js';
import { inviteUrl } from './invite.js';
import { PlaceSerial } from '../../core/intake/place-order.js';
import { type BucketBudget, DiscordRateLimitFeed, globalRequestsPerSecond } from './rate-limits.js';
import { createNonces, NO_MENTIONS, nonceFields, replyChannelId } from './reply-sink.js';
import { ShardStates, within } from './shards.js';
import { ThreadFactsResolver } from './threads.js';

// The Discord connector: discord.js gateway events in, reply sinks out, composed of named parts
// laid out like Slack's (connector.ts there): the client, the intake's deps (intake.ts decides
// which messages are for the bot and where the reply goes; the relay decides everything else),
// the interactions, the gateway's life, and the crash repair's writes.

export interface DiscordConnectorOptions {
  config: DiscordConfig;
  logger: Logger;
  /** The core scheduler, fed with X-RateLimit-* headers of every reply write. */
  rateLimits?: RateLimitObserver;
  now?: () => number;
  /**
   * Writes per window assumed for a channel or interaction until Discord's headers say more.
   * Default 5 per 5000 ms (Discord's observed message bucket); tests against a faster fake lower it.
   */
  assumedBudget?: BucketBudget;
  /** How long start() waits, once every shard has identified, for the client to be ready. */
  readyTimeoutMs?: number;
  /** ATTACHMENT_MAX_BYTES: the largest text-like file passed on (default 200000). */
  attachmentMaxBytes?: number;
}

export interface DiscordConnector extends Connector {
  readonly platform: 'discord';
  /** The link that adds the bot to a server; known once connected. */
  inviteUrl(): string | undefined;
  /** The bot's user id, once connected. */
  botUserId(): string | undefined;
  readiness(): true | string;
  setBudgetShare(share: number): void;
}

export function createDiscordConnector(opts: DiscordConnectorOptions): DiscordConnector {
  const { config, logger } = opts;
  const now = opts.now ?? Date.now;
  const { client, feed, restSweep } = openClient(opts, now);
  const state: ConnectorState = { handler: undefined, shuttingDown: false, started: false, fatal: undefined };
  const shards = new ShardStates(
    client,
    logger,
    () => state.shuttingDown,
    (shard, code) => {
      if (state.fatal === undefined) return false;
      const name = GatewayCloseCodes[code] ?? 'closed';
      state.fatal(new Error(`discord: the gateway closed shard ${shard} for good (${code} ${name})`));
      return true;
    },
  );
  const intake: DiscordIntakeDeps = {
    client,
    config,
    logger,
    threads: new ThreadFactsResolver(client.rest, logger),
    // Each place's messages reach the relay in gateway order even when one waits for its files
    // (the relay keeps a place's replies in the order handle() is called); other places go on.
    serial: new PlaceSerial(),
    // Messages the gateway delivered, read back for context before Discord is asked (events.ts).
    seen: new SeenMessages(now),
    ...(opts.assumedBudget ? { budget: opts.assumedBudget } : {}),
    ...(opts.attachmentMaxBytes !== undefined ? { attachmentMaxBytes: opts.attachmentMaxBytes } : {}),
    handler: () => state.handler,
    now,
    shuttingDown: () => state.shuttingDown,
  };
  const commands: CommandDeps = { feed, logger, now, ...(opts.assumedBudget ? { budget: opts.assumedBudget } : {}) };
  const readiness = () => readinessOf(state, client, shards);

  return {
    platform: 'discord',

    async start(h: MessageHandler): Promise<void> {
      if (state.started) throw new Error('discord connector already started');
      state.started = true;
      state.handler = h;
      listenForMessages(client, intake);
      listenForInteractions(client, commands, state);
      watchGateway(client, shards, logger);
      await connect(client, shards, { config, logger, readyTimeoutMs: opts.readyTimeoutMs, restSweep });
    },

    async shutdown(): Promise<void> {
      state.shuttingDown = true;
      shards.clear();
      restSweep.stop();
      await client.destroy();
    },

    isReady: () => readiness() === true,
    readiness,
    onFatal(listener) {
      state.fatal = listener;
    },
    ...interruptedWrites(client),

    inviteUrl(): string | undefined {
      const id = client.application?.id;
      return id ? inviteUrl(id) : undefined;
    },
    botUserId: () => client.user?.id,
    setBudgetShare(share: number): void {
      client.rest.options.globalRequestsPerSecond = globalRequestsPerSecond(share);
    },
  };
}

/** What the connector's parts read of its life: the relay, and whether it started or shuts down. */
interface ConnectorState {
  handler: MessageHandler | undefined;
  shuttingDown: boolean;
  started: boolean;
  fatal: ((err: Error) => void) | undefined;
}

/** The discord.js client, its REST headers fed to the scheduler, and the sweep of its idle queues. */
function openClient(opts: DiscordConnectorOptions, now: () => number) {
  const feed = new DiscordRateLimitFeed(opts.rateLimits ?? ignoreRateLimits, opts.logger, now);
  const client = createDiscordClient(opts.config, feed);
  // The token is set now (not only at login) so markInterrupted works before/without start().
  client.rest.setToken(opts.config.botToken);
  feed.attach(client.rest);
  // Idle REST queues dropped even under steady load (rest-sweep.ts; issue 31).
  return { client, feed, restSweep: startRestSweep(client.rest) };
}

/** Ready while every shard this replica runs is connected; a shard that drops makes it false until it resumes or identifies again. */
function readinessOf(state: ConnectorState, client: Client, shards: ShardStates): true | string {
  if (state.shuttingDown) return 'stopped';
  if (!state.started || !client.isReady()) return 'not connected';
  if (shards.allUp()) return true;
  const down = shards.down();
  return `gateway shard${down.length === 1 ? '' : 's'} ${down.join(', ')} of ${shards.count() ?? '?'} not connected`;
}

type CommandDeps = Omit<Parameters<typeof handleCommand>[1], 'handler'>;

/** Buttons (controls.ts) and slash commands (commands.ts); every other interaction is answered too. */
function listenForInteractions(client: Client, deps: CommandDeps, state: ConnectorState): void {
  const { logger } = deps;
  client.on(Events.InteractionCreate, (interaction: Interaction) => {
    const handler = state.handler;
    if (state.shuttingDown || !handler) return;
    if (interaction.isButton() && isControl(interaction.customId)) {
      void handleControl(interaction, handler, logger);
      return;
    }
    if (!interaction.isChatInputCommand()) {
      // Every interaction gets an answer, or the user sees "This interaction failed".
      void answerUnknownInteraction(interaction, logger);
      return;
    }
    const i: ChatInputCommandInteraction = interaction;
    logger.info({ eventId: `interaction:${i.id}`, command: i.commandName, channelId: i.channelId }, 'discord: command');
    void handleCommand(i, { ...deps, handler }).catch((err: unknown) => {
      logger.error(
        { command: i.commandName, err: toPlatformError(err, 'interaction').message },
        'discord: command failed',
      );
    });
  });
}

function watchGateway(client: Client, shards: ShardStates, logger: Logger): void {
  shards.watch();
  client.on(Events.Warn, (m) => logger.warn({ detail: m }, 'discord: warning'));
  client.on(Events.Error, (err) => logger.error({ err: err.message }, 'discord: client error'));
  client.on(Events.GuildCreate, (guild) => {
    if (client.isReady()) void registerCommands(client, logger, [guild.id]);
  });
}

/** Logs in, waits for the guilds, registers the commands. */
async function connect(
  client: Client,
  shards: ShardStates,
  o: { config: DiscordConfig; logger: Logger; readyTimeoutMs: number | undefined; restSweep: { stop(): void } },
): Promise<void> {
  const { logger } = o;
  // Listening before login(): discord.js may turn ready before login() resolves.
  const ready = once(client, Events.ClientReady);
  try {
    // login() resolves once every shard of this replica has its READY. A shard Discord does
    // not answer is retried by discord.js and keeps start() waiting (and /readyz at 503):
    // destroying the client while a shard waits for READY hangs in @discordjs/ws 1.2, so
    // there is no deadline here. After it, each shard waits for its guilds.
    await client.login(o.config.botToken);
    await within(ready, o.readyTimeoutMs ?? 60_000, 'the gateway to deliver the guilds');
  } catch (err) {
    o.restSweep.stop();
    await client.destroy();
    throw new Error(`discord: could not connect: ${toPlatformError(err, 'login').message}`);
  }
  const ready2 = client as Client<true>;
  // Guilds: those of this replica's shards only.
  logger.info(
    { botUserId: ready2.user.id, guilds: ready2.guilds.cache.size, shards: shards.ids(), shardCount: shards.count() },
    'discord: connected',
  );
  await registerCommands(ready2, logger);
  logger.info({ inviteUrl: inviteUrl(ready2.application.id) }, 'discord: invite the bot with this link');
}

/** Crash repair: a reply a crash interrupted is marked so, or said in its place. */
function interruptedWrites(client: Client): Pick<Connector, 'markInterrupted' | 'postInterrupted'> {
  return {
    async markInterrupted(target: ReplyTarget, messageId: string, text: string): Promise<void> {
      try {
        if (isInteractionTarget(target.data)) {
          await editInteractionMessage(client.rest, target.data, messageId, text, []);
          return;
        }
        // Replies are written in the thread when there is one (thread mode, DMs have none).
        const channelId = replyChannelId(target.place);
        // `components: []` takes away a Stop button the crash left on the message.
        await client.rest.patch(Routes.channelMessage(channelId, messageId), {
          body: { content: text, allowed_mentions: NO_MENTIONS, components: [] },
        });
      } catch (err) {
        throw toPlatformError(err, `discord:channel:${replyChannelId(target.place)}`);
      }
    },

    async postInterrupted(target: ReplyTarget, text: string): Promise<void> {
      try {
        if (isInteractionTarget(target.data)) {
          // The deferred answer still says "thinking…": replace it (while the token lives).
          await editInteractionMessage(client.rest, target.data, '@original', text);
          return;
        }
        // One nonce for both places: a repeat of a create whose answer was lost makes nothing new.
        const body = { content: text, allowed_mentions: NO_MENTIONS, ...nonceFields(createNonces()('interrupted')) };
        const { channelId, threadId } = target.place;
        if (threadId !== undefined) {
          try {
            await client.rest.post(Routes.channelMessages(threadId), { body });
            return;
          } catch {
            // The thread opens with the reply's first write, so a crash before it left none:
            // say it in the channel instead.
          }
        }
        await client.rest.post(Routes.channelMessages(channelId), { body });
      } catch (err) {
        throw toPlatformError(err, `discord:channel:${target.place.channelId}`);
      }
    },
  };
}
