import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FakeAgentView, fakeAgentView } from './agent-view.js';
import { CappedHistory, type CappedHistoryOptions } from './capped-history.js';
import { FakeFiles, type FakeFileInput, type FileDownload } from './files.js';
import { FakeUploads } from './uploads.js';
import { FakeRateLimiter, type MethodLimit } from './rate-limiter.js';
import { type RateModel, type RateModelName, type RateNumberOverrides, resolveRateModel } from './rate-models.js';
import { blockActionsPayload, type Click } from './interactions.js';
import { signSlackRequest } from './signer.js';
import { type EnvelopeOptions, FakeSocketMode, type SocketDelivery } from './socket-mode.js';
import { type FakeEphemeral, type FakeMessage, FakeState } from './state.js';
import type { SlackRefusal } from './refusals.js';
import { type ApiCall, handleWebApi, type WebApiContext, type WebApiSwitches } from './web-api.js';
import { WriteLog, type WriteLogEntry } from './write-log.js';
import { type FaultSource, faultSourceFor } from '../chaos.js';
import { slackChaosRefusal } from '../chaos-refusals.js';

export type {
  ApiCall,
  Click,
  EnvelopeOptions,
  FakeEphemeral,
  FakeFileInput,
  FakeMessage,
  FileDownload,
  RateModel,
  RateModelName,
  SocketDelivery,
  WriteLogEntry,
};
export { LOGIN_PAGE } from './files.js';
export { CappedHistory, type CappedHistoryOptions } from './capped-history.js';
export { signSlackRequest };

// A loopback Slack: Web API under /api/, Socket Mode WebSocket under /link, plus helpers to
// play a user (post a message, send its events) and to read what users would see.

export interface FakeSlackOptions {
  /** Today's per-method limits (the `current` model); `{}` turns rate limits off. */
  limits?: Record<string, MethodLimit>;
  /**
   * The rate-limit model (rate-models.ts), by name or in full. Without it and without `limits`
   * the env var FAKE_SLACK_RATE_MODEL names it; the default is `current` (today's behaviour).
   */
  rateModel?: RateModelName | RateModel;
  /** Other numbers for a named model (from `rateModel` or the env var). */
  rateNumbers?: RateNumberOverrides;
  /** The fake's clock for rate limits and the times of calls and writes (default Date.now). */
  now?: () => number;
  /** How many writes `writeLog` keeps (oldest dropped first). */
  writeLogMax?: number;
  oauth?: { clientId: string; clientSecret: string };
  pingIntervalMs?: number;
  /**
   * More workspaces the app is installed in (multi-workspace OAuth): each team id gets a bot
   * token of its own (workspaceBotToken), so the rate limits count it as its own workspace.
   */
  workspaces?: string[];
  /** Refuses writes for their form (refusals.ts); `fake.switches.refuse` changes it later. */
  refuse?: SlackRefusal;
  /** The app's messaging experience (`agent_view` or `assistant_view`; default assistant). */
  experience?: 'agent' | 'assistant';
  /** Cap conversations.replies/.history from the start (capped-history.ts; `switches.cappedHistory` later). */
  cappedHistory?: CappedHistoryOptions;
  /**
   * Lost answers (lost-answers.ts): this source, none (`false`: a test that counts calls exactly),
   * or by default the chaos run's (`CHAOS=1`, test/fakes/chaos.ts).
   */
  chaos?: FaultSource | false;
}

/** The bot token of a workspace given in FakeSlackOptions.workspaces. */
export const workspaceBotToken = (teamId: string) => `xoxb-fake-bot-token-${teamId}`;

export interface UserPost {
  channel: string;
  text: string;
  user?: string;
  threadTs?: string;
  channelType?: 'channel' | 'group' | 'im' | 'mpim';
  teamId?: string;
  /** The bot a mention addresses (default the fake's bot; OAuth installs have their own). */
  botUserId?: string;
  /** Files shared with the message: hosted at their `url_private`, and the event's subtype is `file_share`. */
  files?: FakeFileInput[];
  /** Agent messaging experience: the channel the user views, folded into the event's `app_context`. */
  appContext?: string;
}

export interface PostedByUser {
  ts: string;
  /** The `message` event Slack would send for it. */
  message: Record<string, unknown>;
  /** The `app_mention` event, when the text mentions the bot. */
  mention: Record<string, unknown> | undefined;
}

export interface FakeSlack {
  apiUrl: string;
  botToken: string;
  appToken: string;
  signingSecret: string;
  teamId: string;
  botUserId: string;
  botId: string;
  /** The OAuth flow's team and token (when `oauth` was given). */
  oauthTeamId: string;
  calls: ApiCall[];
  switches: WebApiSwitches;
  /** Requests for shared files, in order (path, whether the token was accepted). */
  fileDownloads: FileDownload[];
  /** Files the bot uploaded (the external upload flow), and a switch to refuse them. */
  uploads: FakeUploads;
  /** Refuse the bot token for files (as for a token without files:read): the login page is served. */
  refuseFileToken(refuse: boolean): void;
  readonly socketConnected: boolean;
  /** Socket Mode connections ever opened (also the number of the newest). */
  readonly socketConnections: number;
  /** The numbers of the open Socket Mode connections that take envelopes, oldest first. */
  readonly socketConnectionIds: number[];
  /** Every Socket Mode envelope sent, in order: to which connection, acked or not. */
  readonly socketDeliveries: readonly SocketDelivery[];
  readonly rateLimitHits: number;
  rateLimitHitsByMethod: Record<string, number>;
  /** 429s by the bucket that refused, e.g. `chat.update:T0FAKE` or `chat.postMessage:T0FAKE:C1`. */
  rateLimitHitsByBucket: Record<string, number>;
  /** The model enforced (its name says which guess a result was measured under). */
  rateModel: RateModel;
  /** Message writes (post, update, stream start/append/stop), accepted or not, in order. */
  readonly writeLog: readonly WriteLogEntry[];
  /** Writes dropped from the front of writeLog to keep it bounded. */
  readonly writeLogDropped: number;
  setUserName(id: string, name: string): void;
  /** Current text of each message of a channel, by ts, in posting order. */
  messages(channel: string): Map<string, string>;
  message(channel: string, ts: string): FakeMessage | undefined;
  /** The bot's messages in a thread (or at top level of a channel when threadTs is undefined), in order. */
  botMessages(channel: string, threadTs?: string): FakeMessage[];
  /** Records a user's message (so conversations.replies sees it) and returns its events. */
  userPost(p: UserPost): PostedByUser;
  /**
   * A message that was written before the test (no event is sent): a user's, the bot's own
   * (`user` = botUserId with `botId`), or another app's (`botId` and `username`, subtype bot_message).
   */
  seedMessage(
    channel: string,
    m: { text: string; user?: string; threadTs?: string; botId?: string; username?: string; subtype?: string },
  ): string;
  envelope(event: Record<string, unknown>, teamId?: string): Record<string, unknown>;
  /** Ephemeral messages the bot posted (chat.postEphemeral), in order. */
  readonly ephemerals: readonly FakeEphemeral[];
  /** The statuses agents.sessions.setStatus set on a DM thread's session, in order. */
  agentStatuses(channel: string, threadTs: string): string[];
  /**
   * The Stop buttons a user sees in a thread: Slack's own while its agent session is `processing`,
   * and each bot message's Block Kit Stop (action_id `bridge_stop`).
   */
  stopsShown(channel: string, threadTs: string): number;
  /** The `agent_session_stopped` event of `user` (default U0USER) pressing Slack's Stop (send it as any event). */
  sessionStopped(p: { channel: string; threadTs: string; user?: string }): Record<string, unknown>;
  /** The Agent messaging experience's events, prompts and statuses (agent-view.ts). */
  agent: FakeAgentView;
  /** The block_actions payload Slack sends for a click. */
  blockActions(click: Click): Record<string, unknown>;
  /** A click delivered over Socket Mode (envelope type `interactive`); resolves with the ack. */
  sendClick(click: Click): Promise<unknown>;
  /** Any envelope over Socket Mode (`interactive`, `slash_commands`, …); resolves with the ack. */
  sendEnvelope(type: string, payload: Record<string, unknown>, opts?: EnvelopeOptions): Promise<unknown>;
  /** A click delivered in HTTP mode: a signed form POST with `payload=<json>`. */
  postClick(url: string, click: Click): Promise<{ status: number; body: string }>;
  /**
   * An event over Socket Mode, in a new envelope: round-robin over the open connections unless
   * `connection` or `avoid` choose; resolves with the ack.
   */
  sendEvent(event: Record<string, unknown>, opts?: EnvelopeOptions & { teamId?: string }): Promise<unknown>;
  /**
   * An Events API body (from `envelope`) over Socket Mode, as is: sent again with `retryNum` and
   * `avoid`, it is Slack's retry of the same event (same `event_id`) on another connection.
   */
  deliverEvent(body: Record<string, unknown>, opts?: EnvelopeOptions): Promise<{ connection: number; ack: unknown }>;
  postSignedEvent(
    url: string,
    body: Record<string, unknown>,
    opts?: { badSignature?: boolean; stale?: boolean; noSignature?: boolean; retryNum?: number },
  ): Promise<{ status: number; body: string }>;
  waitConnected(): Promise<void>;
  /** Resolves once exactly `count` Socket Mode connections take envelopes. */
  waitSocketConnections(count: number, timeoutMs?: number): Promise<void>;
  /** Resolves once Socket Mode connection `id` is closed. */
  waitSocketClosed(id: number, timeoutMs?: number): Promise<void>;
  /** Resolves with the first call (past or future) that matches. */
  waitForCall(pred: (c: ApiCall) => boolean, timeoutMs?: number): Promise<ApiCall>;
  refreshSocket(): void;
  dropSocket(): void;
  close(): Promise<void>;
}

export async function startFakeSlack(opts: FakeSlackOptions = {}): Promise<FakeSlack> {
  const ids = { teamId: 'T0FAKE', botUserId: 'U0BOT', botId: 'B0BOT' };
  const botToken = 'xoxb-fake-bot-token';
  const appToken = 'xapp-fake-app-token';
  const signingSecret = 'fake-signing-secret';
  const state = new FakeState();
  state.tokens.set(botToken, { ...ids, kind: 'bot' });
  state.tokens.set(appToken, { ...ids, kind: 'app' });
  for (const teamId of opts.workspaces ?? [])
    state.tokens.set(workspaceBotToken(teamId), { ...ids, teamId, kind: 'bot' });
  const now = opts.now ?? Date.now;
  const limiter = new FakeRateLimiter(resolveRateModel(opts), now);
  const writeLog = new WriteLog(opts.writeLogMax);
  const calls: ApiCall[] = [];
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  const users = new Map<string, string>();
  const switches: WebApiSwitches = {
    missingChannels: new Set(),
    holdMethods: new Map(),
    faults: faultSourceFor(opts.chaos),
  };
  // A test's own refusal, or the chaos run's (a few rich writes refused, chaos-refusals.ts).
  const refuse = opts.refuse ?? (opts.chaos === false ? undefined : slackChaosRefusal(switches.faults));
  if (refuse !== undefined) switches.refuse = refuse;
  if (opts.cappedHistory) switches.cappedHistory = new CappedHistory(opts.cappedHistory, now);

  let port = 0;
  const base = () => `http://127.0.0.1:${port}`;
  const files = new FakeFiles(state, base, ids.teamId);
  const uploads = new FakeUploads(base);
  const ctx: WebApiContext = {
    state,
    limiter,
    now,
    writeLog,
    switches,
    calls,
    users,
    socketUrl: () => `${base().replace('http', 'ws')}/link?ticket=fake`,
    oauth: opts.oauth ? { ...opts.oauth, teamId: 'T0OAUTH', token: 'xoxb-oauth-installed-token' } : undefined,
    onCall: (c) => emitter.emit('call', c),
    experience: opts.experience ?? 'assistant',
    uploads,
  };
  const agent = fakeAgentView(state, ids.teamId);
  const server: Server = createServer((req, res) => {
    if (files.handle(req, res)) return;
    if (uploads.handle(req, res)) return;
    if ((req.url ?? '').startsWith('/api/') && req.method === 'POST') {
      handleWebApi(ctx, req, res).catch(() => {
        res.statusCode = 500;
        res.end();
      });
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  const socket = new FakeSocketMode(server, opts.pingIntervalMs);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;

  const envelope = (event: Record<string, unknown>, teamId = ids.teamId) => ({
    token: 'legacy-verification-token',
    team_id: teamId,
    api_app_id: 'A0FAKE',
    event,
    type: 'event_callback',
    event_id: `Ev${state.nextTs().replace('.', '')}`,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [
      { enterprise_id: null, team_id: teamId, user_id: ids.botUserId, is_bot: true, is_enterprise_install: false },
    ],
    is_ext_shared_channel: false,
  });

  const blockActions = (click: Click) => blockActionsPayload(click, state, base(), ids.teamId);

  return {
    apiUrl: `${base()}/api/`,
    botToken,
    appToken,
    signingSecret,
    ...ids,
    oauthTeamId: 'T0OAUTH',
    calls,
    switches,
    fileDownloads: files.downloads,
    uploads,
    refuseFileToken: (refuse) => {
      files.refuseTokens = refuse;
    },
    get socketConnected() {
      return socket.connected;
    },
    get socketConnections() {
      return socket.connections;
    },
    get socketConnectionIds() {
      return socket.connectionIds;
    },
    get socketDeliveries() {
      return socket.deliveries;
    },
    get rateLimitHits() {
      return limiter.hits;
    },
    rateLimitHitsByMethod: limiter.hitsByMethod,
    rateLimitHitsByBucket: limiter.hitsByBucket,
    rateModel: limiter.model,
    get writeLog() {
      return writeLog.entries;
    },
    get writeLogDropped() {
      return writeLog.dropped;
    },
    setUserName: (id, name) => users.set(id, name),
    messages: (channel) => new Map(state.list(channel).map((m) => [m.ts, m.text])),
    message: (channel, ts) => state.get(channel, ts),
    botMessages: (channel, threadTs) =>
      state.list(channel).filter((m) => m.botId !== undefined && m.threadTs === threadTs),
    userPost(p) {
      const user = p.user ?? 'U0USER';
      const m = state.add({
        channel: p.channel,
        text: p.text,
        format: 'mrkdwn',
        user,
        ...(p.threadTs ? { threadTs: p.threadTs } : {}),
      });
      const common = {
        user,
        text: p.text,
        ts: m.ts,
        channel: p.channel,
        event_ts: m.ts,
        team: p.teamId ?? ids.teamId,
        ...(p.threadTs ? { thread_ts: p.threadTs } : {}),
        ...(p.appContext !== undefined ? { app_context: agent.appContext(p.appContext) } : {}),
        ...(p.files !== undefined && p.files.length > 0
          ? { subtype: 'file_share', files: p.files.map((f) => files.add(f)) }
          : {}),
      };
      const channelType = p.channelType ?? (p.channel.startsWith('D') ? 'im' : 'channel');
      const message = { type: 'message', ...common, channel_type: channelType };
      const mentioned = p.text.includes(`<@${p.botUserId ?? ids.botUserId}>`) && channelType !== 'im';
      return { ts: m.ts, message, mention: mentioned ? { type: 'app_mention', ...common } : undefined };
    },
    seedMessage(channel, m) {
      const posted = state.add({
        channel,
        text: m.text,
        format: 'mrkdwn',
        ...(m.user !== undefined ? { user: m.user } : {}),
        ...(m.threadTs !== undefined ? { threadTs: m.threadTs } : {}),
        ...(m.botId !== undefined ? { botId: m.botId } : {}),
        ...(m.username !== undefined ? { username: m.username } : {}),
        ...(m.subtype !== undefined ? { subtype: m.subtype } : {}),
      });
      return posted.ts;
    },
    envelope,
    ephemerals: state.ephemerals,
    agentStatuses: (channel, threadTs) => [...(state.agentStatuses.get(`${channel}:${threadTs}`) ?? [])],
    stopsShown: (channel, threadTs) => {
      const session = state.agentStatuses.get(`${channel}:${threadTs}`)?.at(-1) === 'processing' ? 1 : 0;
      const buttons = state
        .list(channel)
        .filter((m) => m.botId !== undefined && m.threadTs === threadTs)
        .flatMap((m) => m.blocks ?? [])
        .filter((b) => b.type === 'actions' && JSON.stringify(b.elements ?? []).includes('"bridge_stop"')).length;
      return session + buttons;
    },
    sessionStopped: (p) => {
      // Like Slack: the app's streams in that thread stop at the click (appends to them now fail
      // with message_not_in_streaming_state), and the event lists them.
      const stopped = state
        .list(p.channel)
        .filter((m) => m.botId !== undefined && m.threadTs === p.threadTs && m.streaming);
      for (const m of stopped) m.streaming = false;
      const fields = { channel: p.channel, user: p.user ?? 'U0USER', thread_ts: p.threadTs };
      const streaming_message_ts = stopped.map((m) => m.ts);
      return { type: 'agent_session_stopped', ...fields, streaming_message_ts, event_ts: state.nextTs() };
    },
    agent,
    blockActions,
    sendClick: (click) => socket.send('interactive', blockActions(click)),
    sendEnvelope: (type, payload, o = {}) => socket.send(type, payload, o),
    async postClick(url, click) {
      const raw = new URLSearchParams({ payload: JSON.stringify(blockActions(click)) }).toString();
      const ts = Math.floor(Date.now() / 1000);
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-slack-signature': signSlackRequest(signingSecret, ts, raw),
          'x-slack-request-timestamp': String(ts),
        },
        body: raw,
      });
      return { status: res.status, body: await res.text() };
    },
    async sendEvent(event, o = {}) {
      return socket.send('events_api', envelope(event, o.teamId), o);
    },
    deliverEvent: (body, o = {}) => socket.deliver('events_api', body, o),
    async postSignedEvent(url, body, o = {}) {
      const raw = JSON.stringify(body);
      const ts = Math.floor(Date.now() / 1000) - (o.stale ? 6 * 60 : 0);
      let sig = signSlackRequest(signingSecret, ts, raw);
      if (o.badSignature) sig = signSlackRequest('wrong-secret', ts, raw);
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (!o.noSignature) {
        headers['x-slack-signature'] = sig;
        headers['x-slack-request-timestamp'] = String(ts);
      }
      if (o.retryNum !== undefined) {
        headers['x-slack-retry-num'] = String(o.retryNum);
        headers['x-slack-retry-reason'] = 'http_timeout';
      }
      const res = await fetch(url, { method: 'POST', headers, body: raw });
      return { status: res.status, body: await res.text() };
    },
    waitConnected: () => socket.waitConnected(),
    waitSocketConnections: (count, timeoutMs) => socket.waitConnections(count, timeoutMs),
    waitSocketClosed: (id, timeoutMs) => socket.waitClosed(id, timeoutMs),
    waitForCall(pred, timeoutMs = 10_000) {
      const found = calls.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          emitter.off('call', on);
          reject(new Error('fake Slack: no matching call in time'));
        }, timeoutMs);
        const on = (c: ApiCall) => {
          if (!pred(c)) return;
          clearTimeout(timer);
          emitter.off('call', on);
          resolve(c);
        };
        emitter.on('call', on);
      });
    },
    refreshSocket: () => socket.refresh(),
    dropSocket: () => socket.drop(),
    async close() {
      socket.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
