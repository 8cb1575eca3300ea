import type { IncomingMessage } from './ports.js';

// SLACK_ALLOWED_* / DISCORD_ALLOWED_*: a workspace list checks where the message was written; a
// channel list accepts the channel or thread of either the origin or the place (a thread under an
// allowed channel is allowed).

export interface AllowList {
  workspaces: string[];
  channels: string[];
}

export function isAllowed(allow: { slack: AllowList; discord: AllowList }, msg: IncomingMessage): boolean {
  const { origin, place } = msg;
  if (place.platform === 'test') return true;
  const list = allow[place.platform];
  if (
    list.workspaces.length > 0 &&
    (origin.workspaceId === undefined || !list.workspaces.includes(origin.workspaceId))
  ) {
    return false;
  }
  if (list.channels.length > 0) {
    const ids = [origin.channelId, origin.threadId, place.channelId, place.threadId];
    if (!ids.some((id) => id !== undefined && list.channels.includes(id))) return false;
  }
  return true;
}
