import type { App, webApi } from '@slack/bolt';
import type { ViewedItem } from '../../core/ports.js';
import { type Logger, scrubSecrets } from '../../logger.js';
import { HistoryReads } from './history-reads.js';
import { DEFAULT_SLACK_LIMITS } from './rate-limits.js';

// Slack's Agent messaging experience (`agent_view`): the app's DM is its Messages tab, where each
// conversation is a thread. Per Slack's migration guide
// (https://docs.slack.dev/ai/migrating-to-agent-messaging/), `app_home_opened` with
// `tab: "messages"` replaces `assistant_thread_started`, and `app_context_changed`
// (https://docs.slack.dev/reference/events/app_context_changed) says what the user is viewing.
//
// On the first open of the Messages tab by a user the bridge greets them and sets suggested
// prompts. `assistant.threads.setSuggestedPrompts` without `thread_ts` sets them "for the latest
// message in the channel" (its reference: with `thread_ts`, an agent app's call silently fails),
// so they follow the greeting. Once per user: remembered here (bounded) and, when not, a DM that
// already holds a message (an earlier greeting, an earlier conversation) is not greeted again.

const MAX_USERS = 10_000;
const VIEWING_TTL_MS = 60 * 60_000;
/** The greeting and prompts of a new DM (agent_view's Messages tab) or assistant thread. */
export const GREETING = 'Hi! Ask me anything — I will answer right here.';
export const SUGGESTED_PROMPTS = [
  { title: 'What can you do?', message: 'What can you help me with?' },
  { title: 'Explain something', message: 'Explain this in simple terms: ' },
  { title: 'Draft a message', message: 'Help me draft a short message about ' },
];

export const PROMPTS_TITLE = 'Try asking';

/** Slack's active-view context (`context` on app_context_changed, `app_context` on a DM message). */
export interface SlackAppContext {
  entities?: unknown;
}

/**
 * The viewed items of a Slack context, most relevant first (Slack orders them), at most 5.
 * Entity types per @slack/types' AppContextChangedEvent; unknown ones are left out.
 */
export function viewedItems(context: unknown): ViewedItem[] {
  const entities = (context as SlackAppContext | undefined)?.entities;
  if (!Array.isArray(entities)) return [];
  const items: ViewedItem[] = [];
  for (const e of entities as unknown[]) {
    if (typeof e !== 'object' || e === null) continue;
    const { type, value, team_id: team } = e as { type?: unknown; value?: unknown; team_id?: unknown };
    const workspace = typeof team === 'string' && team !== '' ? { workspaceId: team } : {};
    const kind = ENTITY_KINDS[typeof type === 'string' ? type : ''];
    if (kind !== undefined && typeof value === 'string' && value !== '') {
      items.push({ kind, id: value, ...workspace });
    } else if (type === 'slack#/types/message_context' && typeof value === 'object' && value !== null) {
      const v = value as { channel_id?: unknown; message_ts?: unknown };
      if (typeof v.channel_id === 'string' && typeof v.message_ts === 'string') {
        items.push({ kind: 'message', id: v.channel_id, messageId: v.message_ts, ...workspace });
      }
    }
    if (items.length >= 5) break;
  }
  return items;
}

const ENTITY_KINDS: Record<string, ViewedItem['kind'] | undefined> = {
  'slack#/types/channel_id': 'channel',
  'slack#/types/canvas_id': 'canvas',
  'slack#/types/list_id': 'list',
};

/** What each user was last seen viewing (app_context_changed), per workspace; bounded, expiring. */
export class Viewing {
  private readonly byUser = new Map<string, { items: ViewedItem[]; at: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  get size(): number {
    return this.byUser.size;
  }

  note(team: string, user: string, items: ViewedItem[]): void {
    const key = `${team}:${user}`;
    this.byUser.delete(key);
    this.byUser.set(key, { items, at: this.now() });
    if (this.byUser.size > MAX_USERS) {
      const oldest = this.byUser.keys().next().value;
      if (oldest !== undefined) this.byUser.delete(oldest);
    }
  }

  /** The message's own context when it carries one, else the user's last seen (within the hour). */
  of(team: string, user: string, messageContext: unknown): ViewedItem[] {
    if (messageContext !== undefined) return viewedItems(messageContext);
    const hit = this.byUser.get(`${team}:${user}`);
    if (hit === undefined) return [];
    if (this.now() - hit.at > VIEWING_TTL_MS) {
      this.byUser.delete(`${team}:${user}`);
      return [];
    }
    return hit.items;
  }
}

/** Users greeted in the Messages tab; bounded (oldest forgotten: the DM check still holds then). */
export class Greetings {
  private readonly seen = new Set<string>();

  get size(): number {
    return this.seen.size;
  }

  /** True the first time for a user (and marks them), false after. */
  first(team: string, user: string): boolean {
    const key = `${team}:${user}`;
    if (this.seen.has(key)) return false;
    this.seen.add(key);
    if (this.seen.size > MAX_USERS) {
      const oldest = this.seen.values().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
    return true;
  }
}

type GreetClient = Pick<webApi.WebClient, 'conversations' | 'chat' | 'assistant'>;

/**
 * The greeting and prompts of a user's first Messages-tab open. Never throws; anything unsure
 * (the DM's history cannot be read) means no greeting: a missed greeting is better than a repeat.
 */
export async function greetOnce(
  client: GreetClient,
  greetings: Greetings,
  where: { team: string; user: string; channel: string },
  logger: Logger,
  reads: HistoryReads = new HistoryReads(DEFAULT_SLACK_LIMITS, undefined),
): Promise<'greeted' | 'known'> {
  if (!greetings.first(where.team, where.user)) return 'known';
  try {
    // Paid from the workspace's history bucket, like every history read (history-reads.ts).
    const past = await reads.read(where.team, () => client.conversations.history({ channel: where.channel, limit: 1 }));
    if ((past.messages ?? []).length > 0) return 'known';
    await client.chat.postMessage({ channel: where.channel, text: GREETING });
  } catch (err) {
    logger.debug({ err: scrubSecrets(String(err)) }, 'Slack Messages tab greeting skipped');
    return 'known';
  }
  try {
    await client.assistant.threads.setSuggestedPrompts({
      channel_id: where.channel,
      title: PROMPTS_TITLE,
      prompts: SUGGESTED_PROMPTS,
    });
  } catch (err) {
    logger.debug({ err: scrubSecrets(String(err)) }, 'Slack suggested prompts not set');
  }
  return 'greeted';
}

/** The fields of `app_home_opened` this connector reads. */
interface HomeOpenedEvent {
  user?: string;
  channel?: string;
  tab?: string;
  context?: unknown;
}

/** The fields of `app_context_changed` read (`user` and `channel` per @slack/types; not in every sample). */
interface ContextChangedEvent {
  user?: string;
  context?: unknown;
}

export interface AgentHomeDeps {
  logger: Logger;
  greetings: Greetings;
  viewing: Viewing;
  /** The history calls' budget (the greeting's look at the DM). */
  reads?: HistoryReads;
  /** The connector takes events (started, not stopping). */
  live(): boolean;
}

export function registerAgentHome(app: App, deps: AgentHomeDeps): void {
  app.event('app_home_opened', async ({ event, client, context, body }) => {
    const ev = event as unknown as HomeOpenedEvent;
    if (ev.tab !== 'messages' || !ev.user || !ev.channel || !deps.live()) return;
    const team = context.teamId ?? (body as { team_id?: string }).team_id ?? '';
    if (ev.context !== undefined) deps.viewing.note(team, ev.user, viewedItems(ev.context));
    // Not awaited: the event is acked at once, whatever Slack takes to answer.
    void greetOnce(client, deps.greetings, { team, user: ev.user, channel: ev.channel }, deps.logger, deps.reads).then(
      (r) => deps.logger.debug({ result: r }, 'Slack Messages tab opened'),
    );
  });
  app.event('app_context_changed', async ({ event, context, body }) => {
    const ev = event as unknown as ContextChangedEvent;
    // The event names its user (@slack/types); Slack's sample shows none, and then the
    // authorization's non-bot user is the viewer.
    const auths = (body as { authorizations?: { user_id?: string; is_bot?: boolean }[] }).authorizations ?? [];
    const user = ev.user ?? auths.find((a) => a.is_bot === false)?.user_id;
    if (user === undefined) return;
    const team = context.teamId ?? (body as { team_id?: string }).team_id ?? '';
    deps.viewing.note(team, user, viewedItems(ev.context));
  });
}
