// The bot scopes the bridge asks for at install; manifest.json lists the same (a test checks).
// Exactly what the code calls: chat.* (chat:write), conversations.history/replies in channels,
// private channels, DMs and group DMs (*:history), reactions.add/remove, users.info, files,
// assistant.threads.setStatus. No im:read/im:write: the bridge answers in DMs the user opened
// and never lists or opens one (no conversations.open, no conversations.list).
export const BOT_SCOPES = [
  'app_mentions:read',
  'assistant:write',
  'channels:history',
  'chat:write',
  'files:read',
  'groups:history',
  'im:history',
  'mpim:history',
  'reactions:write',
  'users:read',
] as const;

export const BOT_EVENTS = [
  'agent_session_stopped',
  'app_mention',
  'app_uninstalled',
  'assistant_thread_context_changed',
  'assistant_thread_started',
  'message.channels',
  'message.groups',
  'message.im',
  'message.mpim',
  'tokens_revoked',
] as const;
