import type { App, webApi } from '@slack/bolt';
import type { SlackConfig, SlackStreaming } from '../../config/config.js';
import type { IncomingMessage, MessageHandler, Place, ReplySink } from '../../core/ports.js';
import { type Logger, scrubSecrets } from '../../logger.js';
import { type Arrived, type ArrivalDeps, arrive, type HandOff, inPlaceOrder } from '../arrival.js';
import { collectAttachments } from '../attachments.js';
import type { AgentSessions, AgentSessionTurn } from './agent-sessions.js';
import type { Viewing } from './agent-home.js';
import { ephemeralRefusal, type SinkDeps, type SlackDestination } from './destination.js';
import { ALLOW_ALL, isAllowed } from '../../core/intake/admission.js';
import {
  type BotIdentity,
  classify as eventTrigger,
  eventTeams,
  mentions,
  placeOf,
  recordEvent,
  type EventTeams,
  type SlackMessageEvent,
  type SlackSeen,
  slackFile,
  stripBotMention,
  tokenOrigins,
  type Trigger,
} from './events.js';
import { slackHistoryReader } from './history.js';
import type { SlackLimits } from './rate-limits.js';
import { ackAfter } from './app.js';
import type { ThreadMembership } from './thread-membership.js';
import { createEditSink } from './reply-sink-edit.js';
import { createNativeSink } from './reply-sink-native.js';

// A Slack event becomes an IncomingMessage with its reply sink and goes to the relay, in the
// steps Discord's intake takes too: classify (a mention, a DM, a reply in a thread, or nothing
// for the bot), allow (bots, the allowlists), arrive (its place in its place's queue,
// ../arrival.ts), then in the place's order enrich (is the bot in this thread, the author's
// name, the files, the thread's context) and the sink, and the hand-off to the relay. Runs after
// Bolt asked to ack the event; the relay is never awaited here (it resolves when the reply is
// complete), so one slow reply holds up nothing else. Typed `stop` and `reset` are the relay's.

export interface IntakeDeps extends ArrivalDeps {
  config: SlackConfig;
  limits: SlackLimits;
  logger: Logger;
  threads: ThreadMembership;
  users: UserNames;
  /** Agent sessions of DM threads: Slack's own Stop for native streams. */
  sessions: AgentSessions;
  /** What each user views beside the app's DM (app_context_changed); absent: nothing sent. */
  viewing?: Viewing;
  /** The record of messages seen in events, read back for context (events.ts recordEvent). */
  seen?: SlackSeen;
  /** ATTACHMENT_MAX_BYTES (default 200000). */
  attachmentMaxBytes?: number;
  now(): number;
}

export interface IntakeArgs {
  event: SlackMessageEvent;
  client: webApi.WebClient;
  /** Where the event comes from, as it says (eventTeams). */
  teams: EventTeams;
  bot: BotIdentity;
  /** Set for messages in an assistant thread. */
  assistant?: { onFirstMessage?: (text: string) => Promise<void> };
}

/** Where the connector puts the relay when it starts (and takes it back at stop), read per event. */
export function relayHandle(): { handler(): MessageHandler | undefined; set(h: MessageHandler | undefined): void } {
  let current: MessageHandler | undefined;
  return {
    handler: () => current,
    set: (h) => {
      current = h;
    },
  };
}

/** Messages in channels and DMs: a mention comes as both `app_mention` and `message`; the relay collapses them. */
export function listenForMessages(app: App, deps: IntakeDeps): void {
  for (const type of ['app_mention', 'message'] as const) {
    app.event(type, async ({ event, client, context, body }) => {
      const ev = event as unknown as SlackMessageEvent;
      intake(deps, {
        event: ev,
        client,
        // The event's own teams: with one token, Bolt's context holds the token's team.
        teams: eventTeams(body, ev, context),
        bot: { userId: context.botUserId ?? '', botId: context.botId },
      });
    });
  }
}

/** The relay's `stop` (core/intake/relay.ts). */
const STOP_TEXT = /^stop$/i;

// The steps, in the order Discord's intake takes them too: classify, allow, arrive, then in the
// place's order enrich and the sink, and the hand-off to the relay.

export function intake(deps: IntakeDeps, args: IntakeArgs): void {
  if (deps.seen !== undefined) noteSeen(deps, deps.seen, args);
  const kind = classify(deps, args);
  if (kind === undefined || !allow(deps, args, kind)) return;
  const { event: ev } = args;
  const arrived = arrive(deps, kind.place, `${ev.channel ?? ''}:${ev.ts ?? ''}`, deps.now());
  // Slack hears the ack only once the arrival is recorded, so its next event cannot overtake
  // this one (app.ts OrderedAckApp).
  if (arrived.arrival !== undefined) ackAfter(arrived.arrival.recorded);
  void inPlaceOrder(
    deps,
    arrived,
    async (): Promise<HandOff> => {
      const found = await enrich(deps, args, kind);
      if (found === undefined) return undefined;
      const { sink, session } = chooseSink(deps, args, kind);
      const msg = incoming(args, kind, arrived, found, sink);
      return (handler) => handOff(deps, args, handler, msg, session);
    },
    (err: unknown) => {
      deps.logger.error({ err: scrubSecrets(String(err)) }, 'Slack event intake failed');
    },
  );
}

/** What classify found: the kind of event for the bot and where it belongs. */
interface Classified {
  trigger: Exclude<Trigger, { kind: 'ignore' }>;
  /** Where the message was written, as a place (events.ts placeOf). */
  written: Place;
  /** The conversation's place: the written one, but a typed Stop's in a DM thread is the DM's. */
  place: Place;
  /** Where the message was written (a mention's place is the thread its reply opens). */
  origin: Place;
  isDm: boolean;
  /** The text without the bot's mention. */
  text: string;
}

/** A mention, a DM, a reply in a thread the bot may be part of (events.ts classify), or undefined (ignored). */
function classify(deps: IntakeDeps, args: IntakeArgs): Classified | undefined {
  const { event: ev, bot } = args;
  const { teamId } = args.teams;
  const trigger = args.assistant ? ({ kind: 'dm' } as const) : eventTrigger(ev, bot);
  if (trigger.kind === 'ignore') {
    deps.logger.trace({ reason: trigger.reason, type: ev.type }, 'slack event ignored');
    return undefined;
  }
  const written = placeOf(ev, trigger, teamId);
  const isDm = ev.channel_type === 'im';
  const text = stripBotMention(ev.text ?? '', bot.userId);
  // `stop` written in the thread where a top-level DM's reply streams stops that reply, whose
  // conversation is the DM's own (agent-sessions.ts conversationOf); any other message there is
  // the thread's.
  const typedStop = isDm && written.threadId !== undefined && STOP_TEXT.test(text);
  const place = typedStop ? deps.sessions.conversationOf(written) : written;
  const origin: Place = {
    platform: 'slack',
    workspaceId: teamId,
    channelId: ev.channel ?? '',
    ...(ev.thread_ts ? { threadId: ev.thread_ts } : {}),
  };
  return { trigger, written, place, origin, isDm, text };
}

/**
 * Not the bot itself nor another bot (in an assistant thread: classify ignores them elsewhere),
 * and the core's one allowlist check, early: nothing is spent (API calls, downloads, a place in
 * line) on a message the relay would refuse; the relay checks it again all the same.
 */
function allow(deps: IntakeDeps, args: IntakeArgs, kind: Classified): boolean {
  const { event: ev, bot } = args;
  if (args.assistant && (ev.bot_id !== undefined || ev.user === bot.userId || !ev.user)) return false;
  const { workspaces } = args.teams;
  if (isAllowed(allowOf(deps.config), { place: kind.place, origin: kind.origin, workspaces })) return true;
  deps.logger.debug(
    { teams: workspaces.map((w) => w.id), channel: ev.channel ?? '' },
    'slack event outside the allowed teams/channels',
  );
  return false;
}

interface Enriched {
  userName: string | undefined;
  attachments: IncomingMessage['attachments'];
  history: IncomingMessage['history'];
  viewing: NonNullable<IncomingMessage['viewing']>;
}

/**
 * What the message needs from Slack, in the place's order: is the bot part of the thread (a
 * reply there without a mention is the bot's only then; undefined: not for the bot), the
 * author's name, the files (fetched with the bot token in a header, so a later message of the
 * place waits for them), the thread's context, what the user views beside the app's DM.
 */
async function enrich(deps: IntakeDeps, args: IntakeArgs, kind: Classified): Promise<Enriched | undefined> {
  const { event: ev, bot, client } = args;
  const { teamId } = args.teams;
  const channel = ev.channel ?? '';
  const { trigger, place } = kind;
  if (trigger.kind === 'thread') {
    const member =
      deps.threads.known(teamId, channel, trigger.threadTs) ??
      (await deps.threads.ask(client, teamId, channel, trigger.threadTs, bot));
    if (!member) return undefined;
  } else if (trigger.kind === 'mention' && place.threadId) {
    deps.threads.mark(teamId, channel, place.threadId);
  }
  const [userName, attachments] = await Promise.all([
    deps.users.name(client, teamId, ev.user ?? ''),
    ev.files !== undefined && ev.files.length > 0
      ? collectAttachments(
          ev.files.map((f) => slackFile(f, client.token, tokenOrigins(deps.config.apiUrl))),
          {
            logger: deps.logger,
            ...(deps.attachmentMaxBytes !== undefined ? { maxBytes: deps.attachmentMaxBytes } : {}),
          },
        )
      : undefined,
  ]);
  // A mention at the top of a channel opens its thread: nothing in it the assistant has not seen.
  const opensThread = trigger.kind === 'mention' && !ev.thread_ts;
  const history = opensThread
    ? undefined
    : slackHistoryReader({
        client,
        teamId,
        channel,
        threadTs: place.threadId,
        bot,
        users: deps.users,
        limits: deps.limits,
        ...(deps.seen !== undefined ? { seen: deps.seen } : {}),
      });
  const viewing = kind.isDm ? (deps.viewing?.of(teamId, ev.user ?? '', ev.app_context) ?? []) : [];
  return { userName, attachments, history, viewing };
}

/** The reply's sink, and the agent session it streams in (Slack's own Stop) where there is one. */
function chooseSink(
  deps: IntakeDeps,
  args: IntakeArgs,
  kind: Classified,
): { sink: ReplySink; session: AgentSessionTurn | undefined } {
  const { event: ev, bot, client } = args;
  const { place, written, isDm } = kind;
  const ts = ev.ts ?? '';
  // Slack's Agent messaging experience: DMs are threads in the app's Messages tab, so a
  // top-level DM is answered in a thread under it (native stream, status, Slack's Stop),
  // while its conversation stays the DM's own (one rolling conversation per DM).
  const inThread = isDm && place.threadId === undefined && ts !== '' && place === written;
  const replyPlace = inThread ? { ...place, threadId: ts } : written;
  const dest: SlackDestination = {
    client,
    place: replyPlace,
    ...(args.teams.enterpriseId ? { enterpriseId: args.teams.enterpriseId } : {}),
    userId: ev.user ?? '',
    ...((ev.user_team ?? ev.team) ? { userTeamId: ev.user_team ?? ev.team } : {}),
    userMessageTs: ts,
    // Every DM thread is an agent thread: the working sign is its status (loading messages).
    assistant: args.assistant !== undefined || inThread,
    bot,
  };
  // Slack's agent sessions are thread-based, in DMs and channels; the bridge holds them (for
  // Slack's Stop) in DM threads with the app (assistant threads are DMs too).
  const session =
    (isDm || args.assistant !== undefined) && replyPlace.threadId !== undefined
      ? deps.sessions.turn(client, replyPlace, inThread ? place : undefined)
      : undefined;
  const teamId = args.teams.teamId;
  const sink = sinkFor(deps.config.streaming, dest, isDm, {
    limits: deps.limits,
    logger: deps.logger,
    onPosted: (c, t) => deps.threads.mark(teamId, c, t),
    ...(session !== undefined ? { session } : {}),
  });
  return { sink, session };
}

function incoming(
  args: IntakeArgs,
  kind: Classified,
  arrived: Arrived,
  found: Enriched,
  sink: ReplySink,
): IncomingMessage {
  const { event: ev, bot } = args;
  return {
    eventId: arrived.eventId,
    place: kind.place,
    // A mention in a channel opens its thread as the place; the message itself was written
    // in the channel (or the thread it came from), which is what the upstream is told.
    origin: kind.origin,
    workspaces: args.teams.workspaces,
    messageId: ev.ts ?? '',
    userId: ev.user ?? '',
    ...(found.userName ? { userName: found.userName } : {}),
    text: kind.text,
    ...(found.attachments !== undefined ? { attachments: found.attachments } : {}),
    isDm: kind.isDm,
    ...(found.viewing.length > 0 ? { viewing: found.viewing } : {}),
    mentionsBot: kind.trigger.kind === 'mention' || mentions(ev.text, bot.userId),
    isFromBot: false,
    receivedAt: arrived.receivedAt,
    sink,
    ...(found.history !== undefined ? { history: found.history } : {}),
    ...(arrived.arrival !== undefined ? { arrival: arrived.arrival } : {}),
  };
}

/** The message goes to the relay, which is not awaited; the agent session ends with the reply. */
function handOff(
  deps: IntakeDeps,
  args: IntakeArgs,
  handler: MessageHandler,
  msg: IncomingMessage,
  session: AgentSessionTurn | undefined,
): void {
  deps.logger.debug({ eventId: msg.eventId, text: msg.text }, 'slack message for the bot');
  void handler
    .handle(msg)
    .catch((err: unknown) => {
      deps.logger.error({ err: scrubSecrets(String(err)), eventId: msg.eventId }, 'relay failed on a Slack message');
    })
    // However the reply ended (a platform write that failed for good leaves no last write).
    .finally(() => session?.end());
  if (args.assistant?.onFirstMessage) void args.assistant.onFirstMessage(msg.text);
}

/** Every message of an allowed channel goes into the record, for the bot or not (events.ts recordEvent). */
function noteSeen(deps: IntakeDeps, seen: SlackSeen, args: IntakeArgs): void {
  const { event: ev } = args;
  if (ev.type !== 'message' && ev.type !== 'app_mention') return;
  const channelId = ev.channel ?? '';
  const place = { platform: 'slack' as const, workspaceId: args.teams.teamId, channelId };
  if (!isAllowed(allowOf(deps.config), { place, origin: place, workspaces: args.teams.workspaces })) return;
  recordEvent(seen, args.teams.teamId, ev);
}

/** SLACK_ALLOWED_TEAMS / SLACK_ALLOWED_CHANNELS as the core's allowlist reads them. */
const allowOf = (config: SlackConfig) => ({
  slack: { workspaces: config.allowedTeams, channels: config.allowedChannels },
  discord: ALLOW_ALL,
});

/**
 * The reply's sink. `auto`: native streams in DMs and assistant threads, edits in shared channels.
 * Native streams are thread replies in Slack, so a top-level DM reply is always made by edits.
 */
function sinkFor(mode: SlackStreaming, dest: SlackDestination, isDm: boolean, deps: SinkDeps): ReplySink {
  const native =
    dest.place.threadId !== undefined && (mode === 'native' || (mode === 'auto' && (isDm || dest.assistant)));
  const sink = native ? createNativeSink(dest, deps) : createEditSink(dest, deps);
  return { ...sink, refusal: ephemeralRefusal(dest) };
}

// Display names for the upstream's metadata: one users.info per user and hour at most.

const NAME_TTL_MS = 60 * 60_000;
/** Names remembered at most (the cache is emptied when full). */
const MAX_NAMES = 10_000;

export class UserNames {
  private readonly cache = new Map<string, { name: string | undefined; at: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async name(client: webApi.WebClient, team: string, userId: string): Promise<string | undefined> {
    const key = `${team}:${userId}`;
    const hit = this.cache.get(key);
    if (hit && this.now() - hit.at < NAME_TTL_MS) return hit.name;
    let name: string | undefined;
    try {
      const res = await client.users.info({ user: userId });
      const u = res.user;
      name = u?.profile?.display_name || u?.real_name || u?.name || undefined;
    } catch {
      // A missing name only leaves the metadata field out.
      name = undefined;
    }
    if (this.cache.size >= MAX_NAMES) this.cache.clear();
    this.cache.set(key, { name, at: this.now() });
    return name;
  }
}
