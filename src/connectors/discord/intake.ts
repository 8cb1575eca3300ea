import { type Client, Events, type Message } from 'discord.js';
import type { DiscordConfig } from '../../config/config.js';
import { ALLOW_ALL, isAllowed } from '../../core/intake/admission.js';
import type { IncomingMessage, MessageHandler, ReplySink } from '../../core/ports.js';
import type { Logger } from '../../logger.js';
import { type Arrived, type ArrivalDeps, arrive, type HandOff, inPlaceOrder } from '../arrival.js';
import { collectAttachments, type PlatformFile } from '../attachments.js';
import { toPlatformError } from './errors.js';
import {
  type DiscordSeen,
  fromAPerson,
  type MessageRoute,
  recordMessage,
  routeMessage,
  type ThreadFacts,
} from './events.js';
import { discordHistoryReader } from './history.js';
import type { BucketBudget } from './rate-limits.js';
import { ChannelReplySink, replyChannelId } from './reply-sink.js';
import type { ThreadFactsResolver } from './threads.js';

// A gateway message becomes an IncomingMessage with its reply sink and goes to the relay, in the
// steps Slack's intake takes too: classify (a mention, a DM, a reply in a thread, or nothing for
// the bot), allow (the allowlists), arrive (its place in its place's queue, ../arrival.ts), then in
// the place's order enrich (the files, the thread's context) and the sink, and the hand-off to
// the relay. The relay is never awaited here (it resolves when the reply is complete), so one
// slow reply holds up nothing else. Slash commands and buttons are interactions
// (commands.ts, controls.ts), not messages.

export interface DiscordIntakeDeps extends ArrivalDeps {
  client: Client;
  config: DiscordConfig;
  logger: Logger;
  threads: ThreadFactsResolver;
  /** The record of messages the gateway delivered, read back for context (events.ts recordMessage). */
  seen: DiscordSeen;
  /** Writes per window assumed for a channel until Discord's headers say more. */
  budget?: BucketBudget;
  /** ATTACHMENT_MAX_BYTES (default 200000). */
  attachmentMaxBytes?: number;
  now(): number;
  /** The connector is shutting down: nothing more goes to the relay. */
  shuttingDown(): boolean;
}

/** Every message the gateway delivers: into the record, and through the intake. */
export function listenForMessages(client: Client, deps: DiscordIntakeDeps): void {
  client.on(Events.MessageCreate, (message) => intake(deps, message));
}

export function intake(deps: DiscordIntakeDeps, message: Message): void {
  recordMessage(deps.seen, message, deps.config);
  if (deps.shuttingDown() || deps.handler() === undefined || !fromAPerson(message)) return;
  // Only a message in a thread may need the thread's owner and parent read first (threads.ts):
  // its place names the parent. The read keeps the thread's messages in the order they came.
  const thread = message.channel.isThread() ? deps.threads.facts(message.channel) : undefined;
  if (thread instanceof Promise) {
    void thread.then(
      (facts) => intakeKnown(deps, message, facts),
      (err: unknown) => routeFailed(deps, err),
    );
  } else intakeKnown(deps, message, thread);
}

/** The steps once the message's thread (if any) is known, up to the hand-off. */
function intakeKnown(deps: DiscordIntakeDeps, message: Message, thread: ThreadFacts | undefined): void {
  const route = classify(deps, message, thread);
  if (route === undefined || !allow(deps, route)) return;
  const arrived = arrive(deps, route.place, message.id, deps.now());
  void inPlaceOrder(
    deps,
    arrived,
    async (): Promise<HandOff> => {
      const found = await enrich(deps, route);
      if (deps.shuttingDown()) return undefined;
      const msg = incoming(message, route, arrived, found, chooseSink(deps, route));
      return (handler) => handOff(deps, handler, msg);
    },
    (err) => routeFailed(deps, err),
  );
}

/** What the message is for the bot (events.ts routeMessage: a mention, a DM, a reply in a thread), or undefined. */
function classify(
  deps: DiscordIntakeDeps,
  message: Message,
  thread: ThreadFacts | undefined,
): MessageRoute | undefined {
  const botId = deps.client.user?.id;
  if (botId === undefined || deps.shuttingDown()) return undefined;
  return routeMessage(message, { botId, replyMode: deps.config.replyMode }, thread);
}

/**
 * DISCORD_ALLOWED_GUILDS / _CHANNELS, the core's one allowlist check, early: nothing is spent
 * (downloads, a ticket in the place's queue) on a message the relay would refuse; the relay checks it again all
 * the same. Bots, webhooks and system messages never get here (fromAPerson).
 */
function allow(deps: DiscordIntakeDeps, route: MessageRoute): boolean {
  const list = { workspaces: deps.config.allowedGuilds, channels: deps.config.allowedChannels };
  return isAllowed({ slack: ALLOW_ALL, discord: list }, { place: route.place, origin: route.origin });
}

interface Enriched {
  attachments?: IncomingMessage['attachments'];
  history?: IncomingMessage['history'];
}

/**
 * The files, fetched before the message goes on, in the place's order (a later message of the
 * place waits): CDN URLs carry their own signature, the bot token is never sent with them. And
 * the thread's context, unless the reply opens a thread from this very message (nothing there
 * the assistant has not seen). The author's name comes with the message.
 */
async function enrich(deps: DiscordIntakeDeps, route: MessageRoute): Promise<Enriched> {
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
          logger: deps.logger,
          ...(deps.attachmentMaxBytes !== undefined ? { maxBytes: deps.attachmentMaxBytes } : {}),
        });
  const { client } = deps;
  const history =
    route.startThread === undefined
      ? discordHistoryReader({
          client,
          channelId: replyChannelId(route.place),
          guildId: route.place.workspaceId,
          ...(deps.budget ? { budget: deps.budget } : {}),
          seen: deps.seen,
          ...(client.user ? { botName: client.user.globalName ?? client.user.username } : {}),
        })
      : undefined;
  return { ...(attachments !== undefined ? { attachments } : {}), ...(history !== undefined ? { history } : {}) };
}

/** The reply's sink: messages in the channel, thread or DM (in thread mode it opens the thread). */
function chooseSink(deps: DiscordIntakeDeps, route: MessageRoute): ReplySink {
  return new ChannelReplySink({
    rest: deps.client.rest,
    logger: deps.logger,
    place: route.place,
    ...(route.replyTo ? { replyTo: route.replyTo } : {}),
    ...(route.startThread ? { startThread: route.startThread } : {}),
    ...(deps.budget ? { budget: deps.budget } : {}),
  });
}

function incoming(
  message: Message,
  route: MessageRoute,
  arrived: Arrived,
  found: Enriched,
  sink: ReplySink,
): IncomingMessage {
  return {
    eventId: arrived.eventId,
    place: route.place,
    origin: route.origin,
    messageId: message.id,
    userId: message.author.id,
    userName: message.member?.displayName ?? message.author.globalName ?? message.author.username,
    text: route.text,
    ...(found.attachments !== undefined ? { attachments: found.attachments } : {}),
    isDm: route.isDm,
    mentionsBot: route.mentionsBot,
    ...(route.forwarded === true ? { forwarded: true } : {}),
    isFromBot: message.author.bot,
    receivedAt: arrived.receivedAt,
    sink,
    ...(found.history !== undefined ? { history: found.history } : {}),
    ...(arrived.arrival !== undefined ? { arrival: arrived.arrival } : {}),
  };
}

/** The message goes to the relay, which is not awaited. */
function handOff(deps: DiscordIntakeDeps, handler: MessageHandler, msg: IncomingMessage): void {
  const { logger } = deps;
  logger.info(
    { eventId: msg.eventId, channelId: msg.place.channelId, threadId: msg.place.threadId, dm: msg.isDm },
    'discord: message',
  );
  logger.debug({ eventId: msg.eventId, text: msg.text }, 'discord: message text');
  void handler.handle(msg).catch((err: unknown) => {
    logger.error({ eventId: msg.eventId, err: toPlatformError(err, 'handler').message }, 'discord: handler failed');
  });
}

function routeFailed(deps: DiscordIntakeDeps, err: unknown): void {
  deps.logger.error({ err: toPlatformError(err, 'message').message }, 'discord: could not route a message');
}
