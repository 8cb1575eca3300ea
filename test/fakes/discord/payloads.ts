import { ChannelKind, type FakeChannel, type FakeDiscordState, type FakeMessage, type FakeUser } from './state.js';

// Wire shapes of Discord API v10 objects, as much as discord.js 14 reads.

export function userJson(u: FakeUser) {
  return {
    id: u.id,
    username: u.username,
    discriminator: '0',
    global_name: null,
    avatar: null,
    bot: u.bot,
    public_flags: 0,
  };
}

export function memberJson(u: FakeUser) {
  return {
    user: userJson(u),
    roles: [],
    joined_at: new Date(0).toISOString(),
    deaf: false,
    mute: false,
    flags: 0,
  };
}

export function channelJson(c: FakeChannel, state: FakeDiscordState) {
  const base: Record<string, unknown> = { id: c.id, type: c.type, flags: 0 };
  if (c.guildId !== undefined) base.guild_id = c.guildId;
  if (c.name !== undefined) base.name = c.name;
  if (c.type === ChannelKind.GuildText) {
    Object.assign(base, { position: 0, permission_overwrites: [], nsfw: false, topic: null, last_message_id: null });
  }
  if (c.type === ChannelKind.PublicThread) {
    Object.assign(base, {
      parent_id: c.parentId,
      owner_id: c.ownerId,
      message_count: 0,
      member_count: 1,
      rate_limit_per_user: 0,
      thread_metadata: {
        archived: c.archived === true,
        auto_archive_duration: 1440,
        archive_timestamp: new Date().toISOString(),
        locked: false,
      },
    });
  }
  if (c.type === ChannelKind.DM && c.recipientId !== undefined) {
    base.recipients = [userJson(state.user(c.recipientId))];
  }
  return base;
}

export function guildJson(guildId: string, state: FakeDiscordState) {
  const g = state.guilds.get(guildId);
  const channels = [...state.channels.values()].filter(
    (c) => c.guildId === guildId && c.type !== ChannelKind.PublicThread,
  );
  return {
    id: guildId,
    name: g?.name ?? 'guild',
    icon: null,
    owner_id: state.botUser.id,
    unavailable: false,
    member_count: 2,
    large: false,
    joined_at: new Date(0).toISOString(),
    features: [],
    roles: [
      {
        id: guildId,
        name: '@everyone',
        permissions: '1024',
        position: 0,
        color: 0,
        hoist: false,
        managed: false,
        mentionable: false,
        flags: 0,
      },
    ],
    emojis: [],
    stickers: [],
    members: [memberJson(state.botUser)],
    presences: [],
    voice_states: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
    channels: channels.map((c) => channelJson(c, state)),
    threads: state.threadsOf(guildId).map((c) => channelJson(c, state)),
    preferred_locale: 'en-US',
    premium_tier: 0,
    system_channel_flags: 0,
    verification_level: 0,
    explicit_content_filter: 0,
    default_message_notifications: 0,
    mfa_level: 0,
    nsfw_level: 0,
  };
}

export function messageJson(m: FakeMessage, state: FakeDiscordState, mentions: FakeUser[] = []) {
  const author = state.user(m.authorId);
  const channel = state.channels.get(m.channelId);
  const json: Record<string, unknown> = {
    id: m.id,
    channel_id: m.channelId,
    author: userJson(author),
    content: m.content,
    timestamp: new Date(m.createdAt).toISOString(),
    edited_timestamp: m.editedAt === undefined ? null : new Date(m.editedAt).toISOString(),
    tts: false,
    mention_everyone: false,
    mentions: mentions.map(userJson),
    mention_roles: [],
    attachments: (m.files ?? []).map((f, i) => ({ id: `${m.id}${i}`, filename: f.filename, size: f.data.length })),
    embeds: m.embeds ?? [],
    components: m.components ?? [],
    pinned: false,
    type: m.messageReference ? 19 : 0,
    flags: m.ephemeral ? 64 : 0,
  };
  if (channel) json.channel_type = channel.type;
  if (m.guildId !== undefined) {
    json.guild_id = m.guildId;
    json.member = { roles: [], joined_at: new Date(0).toISOString(), deaf: false, mute: false, flags: 0 };
  }
  if (m.messageReference !== undefined) json.message_reference = m.messageReference;
  if (m.interactionId !== undefined) {
    json.webhook_id = state.applicationId;
    // Discord names the interaction a response or follow-up belongs to.
    json.interaction_metadata = { id: m.interactionId, type: 2 };
  }
  return json;
}
