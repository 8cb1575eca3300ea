import { once } from 'node:events';
import {
  GatewayCloseCodes,
  type ChatInputCommandInteraction,
  type Client,
  Events,
  type Interaction,
  type Message,
  Routes,
} from 'discord.js';
import type { DiscordConfig } from '../../config/config.js';
import {
  type Connector,
  type IncomingMessage,
  ignoreRateLimits,
  type MessageHandler,
  type RateLimitObserver,
  type ReplyTarget,
} from '../../core/ports.js';
import type { Logger } from '../../logger.js';
import { collectAttachments, type PlatformFile } from '../attachments.js';
import { createDiscordClient } from './client.js';
import { startRestSweep } from './rest-sweep.js';
import { answerUnknownInteraction, handleCommand, registerCommands } from './commands.js';
import { handleControl, isControl } from './controls.js';
import { toPlatformError } from './errors.js';
import { type DiscordSeen, fromAPerson, type MessageRoute, recordMessage, routeMessage } from './events.js';
import { editInteractionMessage, isInteractionTarget } from './interaction-sink.js';
import { discordHistoryReader } from './history.js';
import { SeenMessages } from '../../core/reply/thread-context.js';
import { inviteUrl } from './invite.js';
import { PlaceSerial } from '../../core/intake/place-order.js';
import { type BucketBudget, DiscordRateLimitFeed, globalRequestsPerSecond } from './rate-limits.js';
import { ChannelReplySink, createNonces, NO_MENTIONS, nonceFields, replyChannelId } from './reply-sink.js';
import { ShardStates, within } from './shards.js';
import { ThreadFactsResolver } from './threads.js';

// The Discord connector: discord.js gateway events in, reply sinks out. It decides which messages
// are for the bot and where the reply goes; the relay decides everything else.

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
  const feed = new DiscordRateLimitFeed(opts.rateLimits ?? ignoreRateLimits, logger, now);
  const client = createDiscordClient(config, feed);
  // The token is set now (not only at login) so markInterrupted works before/without start().
  client.rest.setToken(config.botToken);
  feed.attach(client.rest);
  // Idle REST queues dropped even under steady load (rest-sweep.ts; issue 31).
  const restSweep = startRestSweep(client.rest);

  let handler: MessageHandler | undefined;
  let stopping = false;
  let started = false;
  let fatal: ((err: Error) => void) | undefined;
  const shards = new ShardStates(
    client,
    logger,
    () => stopping,
    (shard, code) => {
      if (fatal === undefined) return false;
      const name = GatewayCloseCodes[code] ?? 'closed';
      fatal(new Error(`discord: the gateway closed shard ${shard} for good (${code} ${name})`));
      return true;
    },
  );

  const threads = new ThreadFactsResolver(client.rest, logger);
  // Messages of one channel, thread or DM reach the handler in gateway order even when one waits
  // for a thread lookup (the relay keeps a place's replies in the order handle() is called);
  // other places go on meanwhile.
  const inOrder = new PlaceSerial();

  // Messages the gateway delivered, read back for context before Discord is asked (events.ts).
  const seen: DiscordSeen = new SeenMessages(now);

  const onMessage = async (message: Message): Promise<void> => {
    if (stopping || !handler || !client.user) return;
    if (!fromAPerson(message)) return;
    // Only a message in a thread may need the thread's owner and parent looked up (threads.ts).
    const thread = message.channel.isThread() ? await threads.facts(message.channel) : undefined;
    if (stopping || !client.user) return;
    const route = routeMessage(message, { botId: client.user.id, replyMode: config.replyMode }, thread);
    if (!route) return;
    const receivedAt = now();
    // Files are fetched before the message goes on, in the place's order (a later message of the
    // place waits). CDN URLs carry their own signature: the bot token is never sent with them.
    const files = [...route.attachments.values()].map((a): PlatformFile => ({
      name: a.name,
      type: a.contentType ?? '',
      size: a.size,
      downloadUrl: a.url,
      publicUrl: a.url,
    }));
    const attachments =
      files.length === 0
        ? undefined
        : await collectAttachments(files, {
            logger,
            ...(opts.attachmentMaxBytes !== undefined ? { maxBytes: opts.attachmentMaxBytes } : {}),
          });
    if (stopping) return;
    const msg = toIncoming(message, route, client, logger, receivedAt, opts.assumedBudget, seen);
    if (attachments !== undefined) msg.attachments = attachments;
    logger.info(
      { eventId: msg.eventId, channelId: msg.place.channelId, threadId: msg.place.threadId, dm: msg.isDm },
      'discord: message',
    );
    logger.debug({ eventId: msg.eventId, text: msg.text }, 'discord: message text');
    const h = handler;
    void h.handle(msg).catch((err: unknown) => {
      logger.error({ eventId: msg.eventId, err: toPlatformError(err, 'handler').message }, 'discord: handler failed');
    });
  };

  const onInteraction = (interaction: Interaction): void => {
    if (stopping || !handler) return;
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
    void handleCommand(i, {
      handler,
      feed,
      logger,
      now,
      ...(opts.assumedBudget ? { budget: opts.assumedBudget } : {}),
    }).catch((err: unknown) => {
      logger.error(
        { command: i.commandName, err: toPlatformError(err, 'interaction').message },
        'discord: command failed',
      );
    });
  };

  // Ready while every shard this replica runs is connected; a shard that drops makes it false
  // until it resumes or identifies again.
  const readiness = (): true | string => {
    if (stopping) return 'stopped';
    if (!started || !client.isReady()) return 'not connected';
    if (shards.allUp()) return true;
    const down = shards.down();
    return `gateway shard${down.length === 1 ? '' : 's'} ${down.join(', ')} of ${shards.count() ?? '?'} not connected`;
  };

  const watchGateway = (): void => {
    shards.watch();
    client.on(Events.Warn, (m) => logger.warn({ detail: m }, 'discord: warning'));
    client.on(Events.Error, (err) => logger.error({ err: err.message }, 'discord: client error'));
    client.on(Events.GuildCreate, (guild) => {
      if (client.isReady()) void registerCommands(client, logger, [guild.id]);
    });
  };

  return {
    platform: 'discord',

    async start(h: MessageHandler): Promise<void> {
      if (started) throw new Error('discord connector already started');
      started = true;
      handler = h;
      client.on(Events.MessageCreate, (m) => {
        recordMessage(seen, m, config);
        void inOrder.run(
          m.channelId,
          () => onMessage(m),
          (err: unknown) => {
            logger.error({ err: toPlatformError(err, 'message').message }, 'discord: could not route a message');
          },
        );
      });
      client.on(Events.InteractionCreate, onInteraction);
      watchGateway();
      // Listening before login(): discord.js may turn ready before login() resolves.
      const ready = once(client, Events.ClientReady);
      try {
        // login() resolves once every shard of this replica has its READY. A shard Discord does
        // not answer is retried by discord.js and keeps start() waiting (and /readyz at 503):
        // destroying the client while a shard waits for READY hangs in @discordjs/ws 1.2, so
        // there is no deadline here. After it, each shard waits for its guilds.
        await client.login(config.botToken);
        await within(ready, opts.readyTimeoutMs ?? 60_000, 'the gateway to deliver the guilds');
      } catch (err) {
        restSweep.stop();
        await client.destroy();
        throw new Error(`discord: could not connect: ${toPlatformError(err, 'login').message}`);
      }
      const ready2 = client as Client<true>;
      // Guilds: those of this replica's shards only.
      logger.info(
        {
          botUserId: ready2.user.id,
          guilds: ready2.guilds.cache.size,
          shards: shards.ids(),
          shardCount: shards.count(),
        },
        'discord: connected',
      );
      await registerCommands(ready2, logger);
      logger.info({ inviteUrl: inviteUrl(ready2.application.id) }, 'discord: invite the bot with this link');
    },

    async shutdown(): Promise<void> {
      stopping = true;
      shards.clear();
      restSweep.stop();
      await client.destroy();
    },

    isReady(): boolean {
      return readiness() === true;
    },

    readiness,

    onFatal(listener) {
      fatal = listener;
    },

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

    inviteUrl(): string | undefined {
      const id = client.application?.id;
      return id ? inviteUrl(id) : undefined;
    },

    botUserId(): string | undefined {
      return client.user?.id;
    },

    setBudgetShare(share: number): void {
      client.rest.options.globalRequestsPerSecond = globalRequestsPerSecond(share);
    },
  };
}

function toIncoming(
  message: Message,
  route: MessageRoute,
  client: Client,
  logger: Logger,
  receivedAt: number,
  budget: BucketBudget | undefined,
  seen?: DiscordSeen,
): IncomingMessage {
  const sink = new ChannelReplySink({
    rest: client.rest,
    logger,
    place: route.place,
    ...(route.replyTo ? { replyTo: route.replyTo } : {}),
    ...(route.startThread ? { startThread: route.startThread } : {}),
    ...(budget ? { budget } : {}),
  });
  // A thread opened from this very message holds nothing the assistant has not seen.
  const history =
    route.startThread === undefined
      ? discordHistoryReader({
          client,
          channelId: replyChannelId(route.place),
          guildId: route.place.workspaceId,
          ...(budget ? { budget } : {}),
          ...(seen ? { seen } : {}),
          ...(client.user ? { botName: client.user.globalName ?? client.user.username } : {}),
        })
      : undefined;
  return {
    eventId: message.id,
    place: route.place,
    origin: route.place,
    messageId: message.id,
    userId: message.author.id,
    userName: message.member?.displayName ?? message.author.globalName ?? message.author.username,
    text: route.text,
    isDm: route.isDm,
    mentionsBot: route.mentionsBot,
    ...(route.forwarded === true ? { forwarded: true } : {}),
    isFromBot: message.author.bot,
    receivedAt,
    sink,
    ...(history !== undefined ? { history } : {}),
  };
}
