// The bot scopes the bridge asks for at install; manifest.json lists the same (a test checks).
export const BOT_SCOPES = [
  'app_mentions:read',
  'assistant:write',
  'channels:history',
  'chat:write',
  'files:read',
  'groups:history',
  'im:history',
  'im:read',
  'im:write',
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
