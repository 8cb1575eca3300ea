// "Where", said once. A place is where one upstream conversation lives, and the same value says
// where a message was written, which bot answers there, where its reply is shown, and under which
// key the conversation is stored. Connectors make places; the core and the store only carry them.
// The functions every message runs about a place (its key, its bot, what its stored conversation
// is expected to be) live here, so the port files around it (ports.ts, store-ports.ts) hold
// types alone and no message runs them.

export type Platform = 'slack' | 'discord' | 'playground' | 'test';

/**
 * A Slack thread / DM channel / assistant thread, a Discord thread / channel (inline mode) / DM
 * channel. The connector decides what a place is on its platform.
 */
export interface Place {
  platform: Platform;
  /** Slack team id / Discord guild id; undefined for DMs without one. */
  workspaceId?: string;
  channelId: string;
  /** Slack thread_ts or Discord thread channel id, when the conversation is a thread. */
  threadId?: string;
}

/** The store key of a place (conversations) and the key of its reply queue. */
export function placeKey(p: Place): string {
  return `${p.platform}:${p.workspaceId ?? '-'}:${p.channelId}:${p.threadId ?? '-'}`;
}

/**
 * One BOT_ROUTES entry as the config parsed it (config's BotRoute): the bot answering in a
 * workspace (Slack team / Discord guild), or in one channel of it.
 */
export interface PlaceRoute {
  platform: string;
  workspaceId: string;
  channelId?: string;
  botId: string;
}

/**
 * The relay's bot router: the bot for a place, most specific route first (workspace and channel,
 * then workspace; the first of equals wins), else the default bot. The routes are indexed once
 * here, at start, so a message costs two map lookups. Places of other platforms (the test
 * connector) and places without a workspace (DMs) get the default.
 */
export function botRouter(
  routes: readonly PlaceRoute[],
  defaultBotId: string,
): (place: { platform: string; workspaceId?: string; channelId: string }) => string {
  // Keyed by platform and workspace; a platform name holds no newline, so the key is unambiguous.
  const byWorkspace = new Map<string, { workspaceBot?: string; channelBots: Map<string, string> }>();
  for (const r of routes) {
    const key = `${r.platform}\n${r.workspaceId}`;
    let w = byWorkspace.get(key);
    if (w === undefined) byWorkspace.set(key, (w = { channelBots: new Map() }));
    if (r.channelId === undefined) w.workspaceBot ??= r.botId;
    else if (!w.channelBots.has(r.channelId)) w.channelBots.set(r.channelId, r.botId);
  }
  return (place) => {
    if (place.workspaceId === undefined) return defaultBotId;
    const w = byWorkspace.get(`${place.platform}\n${place.workspaceId}`);
    return w?.channelBots.get(place.channelId) ?? w?.workspaceBot ?? defaultBotId;
  };
}

/**
 * What `replaceIfUnchanged` expects to find: `undefined` no mapping for the place at all; `null` a
 * mapping whose upstream id is not known yet; a string, a mapping with that upstream id.
 */
export type ExpectedUpstreamId = string | null | undefined;

/**
 * The `expected` argument for the conversation record of a place as read by the store's `get`
 * (undefined: none was found). Here, not in store-ports.ts, because it runs for every message and
 * this file runs anyway (placeKey): store-ports.ts stays types only.
 */
export function expectedOf(rec: { upstreamId: string | undefined } | undefined): ExpectedUpstreamId {
  return rec === undefined ? undefined : (rec.upstreamId ?? null);
}

/**
 * Where one reply is shown, serializable so a restart can edit its messages (InFlightRecord):
 * the place, plus what only the connector that made it interprets.
 */
export interface ReplyTarget {
  place: Place;
  /** Connector-specific, e.g. Discord interaction token, Slack native-stream flag. */
  data?: Record<string, string | number | boolean>;
}

const PLATFORMS: readonly string[] = ['slack', 'discord', 'playground', 'test'] satisfies Platform[];

/**
 * A reply target read back from JSON. Rows written before targets carried a place hold the
 * place's fields flat (`{platform, workspaceId, channelId, threadId, data}`); both shapes are read.
 */
export function readReplyTarget(json: unknown): ReplyTarget {
  if (typeof json !== 'object' || json === null) throw new Error('reply target is not an object');
  const o = json as Record<string, unknown>;
  const place = readPlace(typeof o.place === 'object' && o.place !== null ? o.place : o);
  const target: ReplyTarget = { place };
  if (typeof o.data === 'object' && o.data !== null) target.data = o.data as NonNullable<ReplyTarget['data']>;
  return target;
}

function readPlace(value: object): Place {
  const o = value as Record<string, unknown>;
  if (typeof o.platform !== 'string' || !PLATFORMS.includes(o.platform) || typeof o.channelId !== 'string') {
    throw new Error('reply target names no platform and channel');
  }
  const place: Place = { platform: o.platform as Platform, channelId: o.channelId };
  if (typeof o.workspaceId === 'string') place.workspaceId = o.workspaceId;
  if (typeof o.threadId === 'string') place.threadId = o.threadId;
  return place;
}
