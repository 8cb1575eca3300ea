import type { IncomingMessage, WorkspaceRef } from '../ports.js';

// SLACK_ALLOWED_* / DISCORD_ALLOWED_*: the one allowlist check (the relay's, and the connectors'
// early one before they spend anything on a message). A workspace list checks every workspace
// the message comes from (`msg.workspaces`, else the origin's): each must be listed, by its own
// id or by its organisation's (a Slack Enterprise Grid org id admits the org's workspaces). A
// channel list accepts the channel or thread of either the origin or the place (a thread under an
// allowed channel is allowed).

export interface AllowList {
  workspaces: string[];
  channels: string[];
}

export const ALLOW_ALL: AllowList = { workspaces: [], channels: [] };

export type AllowInput = Pick<IncomingMessage, 'origin' | 'place' | 'workspaces'>;

export function isAllowed(allow: { slack: AllowList; discord: AllowList }, msg: AllowInput): boolean {
  const { origin, place } = msg;
  if (place.platform === 'test' || place.platform === 'playground') return true;
  const list = allow[place.platform];
  if (list.workspaces.length > 0) {
    const from: WorkspaceRef[] =
      msg.workspaces ?? (origin.workspaceId !== undefined ? [{ id: origin.workspaceId }] : []);
    const listed = (w: WorkspaceRef) =>
      list.workspaces.includes(w.id) || (w.organizationId !== undefined && list.workspaces.includes(w.organizationId));
    if (from.length === 0 || !from.every(listed)) return false;
  }
  if (list.channels.length > 0) {
    const ids = [origin.channelId, origin.threadId, place.channelId, place.threadId];
    if (!ids.some((id) => id !== undefined && list.channels.includes(id))) return false;
  }
  return true;
}
