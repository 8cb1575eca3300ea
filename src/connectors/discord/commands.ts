import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  type ChatInputCommandInteraction,
  type Client,
  type Interaction,
  MessageFlags,
  Routes,
} from 'discord.js';
import type { IncomingMessage, MessageHandler, Place } from '../../core/ports.js';
import type { Logger } from '../../logger.js';
import { toPlatformError } from './errors.js';
import { deleteOriginal, type InteractionTargetData, InteractionReplySink } from './interaction-sink.js';
import type { BucketBudget, DiscordRateLimitFeed } from './rate-limits.js';

// Slash commands: /ask (a message without a mention, answered in the interaction's reply) and
// /reset (fresh conversation for the place). Guild-scoped while the bot is in few guilds, because
// guild commands show up at once; global beyond that, and always when the bot is sharded.

export const COMMANDS = [
  {
    name: 'ask',
    description: 'Ask the assistant',
    type: ApplicationCommandType.ChatInput,
    options: [{ name: 'text', description: 'Your message', type: ApplicationCommandOptionType.String, required: true }],
  },
  {
    name: 'reset',
    description: 'Start a fresh conversation in this channel, thread or DM',
    type: ApplicationCommandType.ChatInput,
  },
];

/** Above this many guilds, commands are registered globally (one call instead of one per guild). */
export const GUILD_SCOPED_MAX = 10;

export async function registerCommands(client: Client<true>, logger: Logger, guildIds?: string[]): Promise<void> {
  const appId = client.application.id;
  const all = [...client.guilds.cache.keys()];
  const targets = guildIds ?? all;
  // A sharded bot (more than one shard in all, whichever this replica runs) registers globally:
  // a replica sees only its own shards' guilds, so counting them could make one replica register
  // per guild and another globally, and users would see every command twice. Discord recommends
  // a second shard only for bots in many guilds anyway.
  const sharded = (client.options.shardCount ?? 1) > 1;
  try {
    if (sharded || all.length === 0 || all.length > GUILD_SCOPED_MAX) {
      // A guild joined later is covered by the global registration made at start.
      if (guildIds !== undefined) return;
      await client.rest.put(Routes.applicationCommands(appId), { body: COMMANDS });
      logger.info({ scope: 'global' }, 'discord: slash commands registered');
      return;
    }
    await Promise.all(
      targets.map((g) => client.rest.put(Routes.applicationGuildCommands(appId, g), { body: COMMANDS })),
    );
    logger.info({ scope: 'guild', guilds: targets.length }, 'discord: slash commands registered');
  } catch (err) {
    // Missing the applications.commands scope is common; mentions and DMs still work.
    logger.warn({ err: toPlatformError(err, 'commands').message }, 'discord: could not register slash commands');
  }
}

/** The place of a command: the thread, the channel (one conversation per channel) or the DM. */
export function interactionPlace(i: ChatInputCommandInteraction): Place {
  const channel = i.channel;
  if (i.guildId === null) return { platform: 'discord', channelId: i.channelId };
  if (channel?.isThread() && channel.parentId) {
    return { platform: 'discord', workspaceId: i.guildId, channelId: channel.parentId, threadId: channel.id };
  }
  return { platform: 'discord', workspaceId: i.guildId, channelId: i.channelId };
}

export interface CommandDeps {
  handler: MessageHandler;
  feed: DiscordRateLimitFeed;
  logger: Logger;
  now?: () => number;
  budget?: BucketBudget;
}

export async function handleCommand(i: ChatInputCommandInteraction, deps: CommandDeps): Promise<void> {
  const place = interactionPlace(i);
  if (i.commandName === 'reset') {
    try {
      await deps.handler.reset(place);
      await i.reply({
        content: 'Started a fresh conversation here.',
        flags: MessageFlags.Ephemeral,
        allowedMentions: { parse: [] },
      });
    } catch (err) {
      deps.logger.error({ err: toPlatformError(err, 'interaction').message }, 'discord: /reset failed');
      await i
        .reply({
          content: 'Could not reset the conversation, try again.',
          flags: MessageFlags.Ephemeral,
          allowedMentions: { parse: [] },
        })
        .catch(() => {});
    }
    return;
  }
  if (i.commandName !== 'ask') {
    await answerUnknownInteraction(i, deps.logger);
    return;
  }

  const receivedAt = deps.now?.() ?? Date.now();
  // The 3-second window: acknowledge first, answer by editing the deferred response.
  await i.deferReply();
  deps.feed.registerInteraction(i.token, i.id);
  const data: InteractionTargetData = {
    kind: 'interaction',
    applicationId: i.applicationId,
    interactionId: i.id,
    token: i.token,
  };
  const sink = new InteractionReplySink(i.client.rest, place, data, deps.budget, deps.logger);
  const msg: IncomingMessage = {
    eventId: `interaction:${i.id}`,
    place,
    origin: place,
    messageId: i.id,
    userId: i.user.id,
    userName: i.user.globalName ?? i.user.username,
    text: i.options.getString('text', true).trim(),
    isDm: i.guildId === null,
    mentionsBot: true,
    isFromBot: false,
    receivedAt,
    sink,
  };
  const result = await deps.handler.handle(msg);
  if (sink.answered) return;
  // The relay refused without writing (not allowed here, duplicate, empty): the deferred
  // "thinking…" response would otherwise hang until Discord gives up on it.
  try {
    if (result.status === 'not_allowed') {
      await sink.post(NOT_ALLOWED, { final: true, part: 0 });
    } else {
      await deleteOriginal(i.client.rest, data);
    }
  } catch (err) {
    deps.logger.debug(
      { err: toPlatformError(err, 'interaction').message },
      'discord: could not settle an unanswered /ask',
    );
  }
}

export const NOT_ALLOWED = 'The assistant is not enabled in this channel.';

/** The ephemeral answer to a command or component the bridge does not know. */
export const UNKNOWN_COMMAND = 'Unknown command. Use /ask to ask the assistant or /reset to start over.';

/**
 * Answers an interaction the bridge has no handler for (a stale or foreign slash command, a
 * button or menu it did not make, a modal): without an answer within 3 s Discord shows the user
 * "This interaction failed".
 */
export async function answerUnknownInteraction(interaction: Interaction, logger: Logger): Promise<void> {
  logger.info(
    {
      eventId: `interaction:${interaction.id}`,
      type: interaction.type,
      ...(interaction.isCommand() || interaction.isAutocomplete() ? { command: interaction.commandName } : {}),
      ...(interaction.isMessageComponent() || interaction.isModalSubmit() ? { customId: interaction.customId } : {}),
    },
    'discord: unknown interaction',
  );
  try {
    if (interaction.isAutocomplete()) {
      // Autocomplete cannot carry a message; no suggestions is its "nothing here".
      await interaction.respond([]);
    } else if (interaction.isRepliable() && !interaction.replied && !interaction.deferred) {
      await interaction.reply({
        content: UNKNOWN_COMMAND,
        flags: MessageFlags.Ephemeral,
        allowedMentions: { parse: [] },
      });
    }
  } catch (err) {
    logger.warn(
      { err: toPlatformError(err, 'interaction').message },
      'discord: could not answer an unknown interaction',
    );
  }
}
