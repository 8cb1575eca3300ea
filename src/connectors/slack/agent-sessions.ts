import type { App, webApi } from '@slack/bolt';
import {
  type MessageHandler,
  type Place,
  PlatformRateLimitedError,
  type RateLimitObserver,
  type ReplySink,
  type WriteOptions,
} from '../../core/ports.js';
import { type Logger, scrubSecrets } from '../../logger.js';
import { translateSlackError } from './rate-limits.js';

// Slack's agent sessions (thread-based, in DMs with the app and in channels) are how a native
// stream gets Slack's own Stop: while the session's status is `processing` Slack shows its Stop
// button, and a press comes back as the `agent_session_stopped` event, naming the streams Slack
// already stopped (`streaming_message_ts`); the sink finishes those by an edit, never an append. Best
// effort throughout: a status that cannot be set costs the button (typed `stop` still works),
// never the reply.

const MAX_STOPPED_STREAMS = 1000;
/** Reply threads whose conversation lives elsewhere (top-level DMs), while their reply runs. */
const MAX_CONVERSATIONS = 10_000;

export const SET_STATUS_METHOD = 'agents.sessions.setStatus';
export const SESSION_STOPPED_EVENT = 'agent_session_stopped';
export type AgentSessionStatus = 'active' | 'processing' | 'suspended';

/** One reply's hold on its place's session: `processing` from begin() until end(). */
export interface AgentSessionTurn {
  /** The reply started: Slack shows its Stop. Once; later calls do nothing. */
  begin(): void;
  /** The reply is over, however it ended: back to `active`. Idempotent; nothing before begin(). */
  end(): void;
  /** Slack already stopped this stream (agent_session_stopped named it): appends would fail. */
  streamStopped?(channel: string, ts: string): boolean;
}

/**
 * A native stream's sink holding the agent session while its reply runs: `processing` when the
 * reply starts (showWorking, which notices never call), `active` after its last write. A reply
 * that ends without one (a write failed for good) is ended by the intake when the relay is done.
 */
export function withAgentSession(session: AgentSessionTurn | undefined, sink: ReplySink): ReplySink {
  if (session === undefined) return sink;
  const afterWrite = <T>(opts: WriteOptions, result: T): T => {
    if (opts.last === true) session.end();
    return result;
  };
  return {
    ...sink,
    showWorking: () => {
      session.begin();
      return sink.showWorking();
    },
    post: async (text, opts) => afterWrite(opts, await sink.post(text, opts)),
    edit: async (messageId, text, opts) => afterWrite(opts, await sink.edit(messageId, text, opts)),
  };
}

/** What the status calls need of a Web API client (a WebClient; tests give a slower one). */
export type StatusClient = Pick<webApi.WebClient, 'apiCall'>;

interface PlaceSession {
  /** The turn that set `processing` and has not ended; undefined when the session is idle. */
  owner: object | undefined;
  /** Status calls of the place, one after another, so they reach Slack in the order made. */
  chain: Promise<void>;
}

export interface AgentSessionsDeps {
  logger: Logger;
  /** 429s of the status calls go to the scheduler, like the connector's other calls. */
  rateLimits: RateLimitObserver;
}

/** The connector's agent sessions by DM thread: which reply holds each, and its status calls. */
export class AgentSessions {
  private readonly places = new Map<string, PlaceSession>();
  /** `channel:ts` of streams Slack stopped; bounded, oldest dropped first. */
  private readonly stoppedStreams = new Set<string>();
  /**
   * A session's thread → the conversation's place, while a reply runs there and the two differ:
   * a top-level DM is answered in a thread under it (Slack's Agent messaging experience: DMs are
   * threads), but its conversation is the DM's own, so Slack's Stop in that thread must reach the
   * reply of the DM's place. Entries go when the reply ends; bounded all the same.
   */
  private readonly conversations = new Map<string, Place>();
  private warned = false;

  constructor(private readonly deps: AgentSessionsDeps) {}

  /** Places with a reply holding them or a status call pending (bounded: idle ones are dropped). */
  get size(): number {
    return this.places.size;
  }

  /** Slack stopped these streams of a channel (agent_session_stopped's streaming_message_ts). */
  markStopped(channel: string, timestamps: readonly string[]): void {
    for (const ts of timestamps) {
      this.stoppedStreams.add(`${channel}:${ts}`);
      if (this.stoppedStreams.size > MAX_STOPPED_STREAMS) {
        const oldest = this.stoppedStreams.values().next().value;
        if (oldest !== undefined) this.stoppedStreams.delete(oldest);
      }
    }
  }

  isStopped(channel: string, ts: string): boolean {
    return this.stoppedStreams.has(`${channel}:${ts}`);
  }

  /** The place whose reply a Stop in this session's thread stops (the thread's own if none was noted). */
  conversationOf(session: Place): Place {
    return this.conversations.get(sessionKey(session)) ?? session;
  }

  /**
   * A turn for one reply in a DM thread (a place without a thread has no session: no calls).
   * `conversation`: the place the reply belongs to when it is not the session's thread (a
   * top-level DM answered in a thread under it).
   */
  turn(client: StatusClient, place: Place, conversation?: Place): AgentSessionTurn {
    const threadTs = place.threadId;
    const channel = place.channelId;
    const key = sessionKey(place);
    const noteConversation = () => {
      if (conversation === undefined || threadTs === undefined) return;
      this.conversations.delete(key);
      this.conversations.set(key, conversation);
      if (this.conversations.size > MAX_CONVERSATIONS) {
        const oldest = this.conversations.keys().next().value;
        if (oldest !== undefined) this.conversations.delete(oldest);
      }
    };
    const me = {};
    let state: 'new' | 'begun' | 'ended' = 'new';
    return {
      streamStopped: (c, ts) => this.isStopped(c, ts),
      begin: () => {
        if (state !== 'new' || threadTs === undefined) return;
        state = 'begun';
        noteConversation();
        let s = this.places.get(key);
        if (s === undefined) {
          s = { owner: undefined, chain: Promise.resolve() };
          this.places.set(key, s);
        }
        s.owner = me;
        this.send(key, s, client, channel, threadTs, 'processing');
      },
      end: () => {
        const begun = state === 'begun';
        state = 'ended';
        if (!begun || threadTs === undefined) return;
        if (conversation !== undefined && this.conversations.get(key) === conversation) this.conversations.delete(key);
        const s = this.places.get(key);
        // A later reply of the place holds the session now: its status is not this turn's to end.
        if (s === undefined || s.owner !== me) return;
        s.owner = undefined;
        this.send(key, s, client, channel, threadTs, 'active');
      },
    };
  }

  private send(
    key: string,
    s: PlaceSession,
    client: StatusClient,
    channel: string,
    threadTs: string,
    status: AgentSessionStatus,
  ): void {
    const call = s.chain.then(() => this.setStatus(client, channel, threadTs, status));
    s.chain = call;
    void call.then(() => {
      if (s.chain === call && s.owner === undefined && this.places.get(key) === s) this.places.delete(key);
    });
  }

  /** Never throws. */
  private async setStatus(
    client: StatusClient,
    channel: string,
    threadTs: string,
    status: AgentSessionStatus,
  ): Promise<void> {
    try {
      await client.apiCall(SET_STATUS_METHOD, { channel_id: channel, thread_ts: threadTs, status });
    } catch (err) {
      const e = translateSlackError(err, `slack:api:${SET_STATUS_METHOD}`);
      if (e instanceof PlatformRateLimitedError) this.deps.rateLimits.limited(e.bucket, e.retryAfterMs);
      const fields = { err: scrubSecrets(e.message), status };
      // Said once at info (an app without agent features fails every call), then at debug.
      if (this.warned) {
        this.deps.logger.debug(fields, 'Slack agent session status not set');
      } else {
        this.warned = true;
        this.deps.logger.info(fields, "Slack agent session status not set: native streams show no Stop of Slack's");
      }
    }
  }
}

/** Slack's DM channel ids start with D (an app's DMs with one user each). */
function isDmChannel(channel: string): boolean {
  return channel.startsWith('D');
}

function sessionKey(place: Place): string {
  return `${place.workspaceId ?? '-'}:${place.channelId}:${place.threadId ?? '-'}`;
}

/** The fields of `agent_session_stopped` this connector reads. */
interface SessionStoppedEvent {
  channel?: string;
  user?: string;
  thread_ts?: string;
  /** The streams Slack already stopped (a ts, or a list of them). */
  streaming_message_ts?: string | string[];
}

/**
 * Slack's Stop on an agent session: the reply being written in that DM thread is stopped when the
 * user who pressed it asked for it; anyone else's press, or one after the reply ended, does nothing.
 */
export function registerSessionStop(
  app: App,
  handler: () => MessageHandler | undefined,
  logger: Logger,
  sessions?: AgentSessions,
): void {
  app.event(SESSION_STOPPED_EVENT, async ({ event, context, body }) => {
    const ev = event as unknown as SessionStoppedEvent;
    // Recorded first: the reply's last write, made when the stop below ends it, must not append.
    const stopped = ev.streaming_message_ts;
    if (ev.channel !== undefined && stopped !== undefined) {
      sessions?.markStopped(ev.channel, Array.isArray(stopped) ? stopped : [stopped]);
    }
    const teamId = context.teamId ?? (body as { team_id?: string }).team_id ?? '';
    const h = handler();
    if (ev.channel === undefined || ev.thread_ts === undefined || ev.user === undefined || h?.stopPlace === undefined) {
      logger.debug({ channel: ev.channel }, 'Slack: agent session stop without a place, user or relay');
      return;
    }
    // The place a DM thread's messages make (events.ts placeOf), so the relay finds its reply; for
    // the thread a top-level DM's reply opened, the DM's own place while that reply runs.
    const thread: Place = { platform: 'slack', workspaceId: teamId, channelId: ev.channel, threadId: ev.thread_ts };
    const place = sessions?.conversationOf(thread) ?? thread;
    let result = await h.stopPlace(place, ev.user);
    // Which top-level DM reply opened this thread is known only to the replica writing it. At
    // another replica nothing runs in the thread's place; the reply, if any, is the DM's own
    // place's (the one a top-level DM makes), which the relay finds at whichever replica holds
    // it (remote stops). Still only the asker's press stops it.
    if (result === 'not_found' && place === thread && isDmChannel(ev.channel)) {
      const { threadId: _thread, ...dm } = thread;
      result = await h.stopPlace(dm, ev.user);
    }
    if (result === 'stopped') logger.info({ channel: ev.channel }, 'Slack: reply stopped from its agent session');
    else logger.debug({ result, channel: ev.channel }, 'Slack: agent session stop ignored');
  });
}
