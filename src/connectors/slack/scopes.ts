// The bot scopes the bridge asks for at install; manifest.json lists the same (a test checks).
// Exactly what the code calls: chat.* (chat:write), conversations.history/replies in channels,
// private channels, DMs and group DMs (*:history), reactions.add/remove, users.info, files (read, and uploads of an agent's files),
// assistant.threads.setStatus. No im:read/im:write: the bridge answers in DMs the user opened
// and never lists or opens one (no conversations.open, no conversations.list).
export const BOT_SCOPES = [
  'app_mentions:read',
  'assistant:write',
  'channels:history',
  'chat:write',
  'files:read',
  // files.getUploadURLExternal / completeUploadExternal: files an agent sends as bytes (issue 36).
  'files:write',
  'groups:history',
  'im:history',
  'mpim:history',
  'reactions:write',
  'users:read',
] as const;

// The Agent messaging experience's events (manifest `agent_view`, Slack's migration guide:
// https://docs.slack.dev/ai/migrating-to-agent-messaging/): app_home_opened (tab "messages")
// instead of assistant_thread_started, app_context_changed for what the user views, and
// agent_session_stopped for Slack's own Stop.
export const BOT_EVENTS = [
  'agent_session_stopped',
  'app_context_changed',
  'app_home_opened',
  'app_mention',
  'app_uninstalled',
  'message.channels',
  'message.groups',
  'message.im',
  'message.mpim',
  'tokens_revoked',
] as const;

/**
 * What an app still on `assistant_view` subscribes to besides (its own manifest): the bridge
 * handles these too, so such an app keeps working as it did (docs/slack-setup.md).
 */
export const ASSISTANT_VIEW_EVENTS = ['assistant_thread_context_changed', 'assistant_thread_started'] as const;
