import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CappedHistory } from './capped-history.js';
import { attachmentsError, blocksError, textError } from './limits.js';
import type { FakeRateLimiter } from './rate-limiter.js';
import type { SlackRefusal } from './refusals.js';
import type { FakeMessage, FakePrompts, FakeState, TokenInfo } from './state.js';
import { isWriteMethod, type WriteLog } from './write-log.js';
import type { FaultSource } from '../chaos.js';
import { maybeLoseAnswer, metadataOf, wantsMetadata } from './lost-answers.js';
import { applyTasks, chunksError, taskUpdates } from './stream-chunks.js';
import { type FakeUploads, UploadError } from './uploads.js';

// The fake Web API: one POST /api/<method> per call, form-encoded or JSON, bearer or body token.
// Answers like Slack does: HTTP 200 with {ok:false,error} for API errors, 429 + Retry-After.

export type Args = Record<string, unknown>;

/** The scopes manifest.json asks for, as a real installation of it would have. */
const BOT_SCOPES =
  'app_mentions:read,assistant:write,channels:history,chat:write,files:read,files:write,groups:history,im:history,im:read,im:write,mpim:history,reactions:write,users:read';

export interface ApiCall {
  method: string;
  args: Args;
  teamId: string | undefined;
  at: number;
  /** `ok`, the Slack error code, or `ratelimited`. */
  result: string;
}

export interface WebApiSwitches {
  /** chat.startStream answers this error (e.g. channel_type_not_supported). */
  failStartStream?: string;
  /** chat.appendStream answers this error. */
  failAppendStream?: string;
  /** agents.sessions.setStatus answers this error. */
  failAgentStatus?: string;
  /** assistant.threads.setStatus answers this error. */
  failThreadStatus?: string;
  /** Channels that answer channel_not_found. */
  missingChannels: Set<string>;
  /** Calls of these methods are answered only once the promise settles (a slow Slack). */
  holdMethods: Map<string, Promise<void>>;
  /** Refuses a write for its form before it takes effect (refusals.ts): the Slack error code. */
  refuse?: SlackRefusal | undefined;
  /** conversations.replies/.history capped as for apps outside the Marketplace (capped-history.ts). */
  cappedHistory?: CappedHistory;
  /** Lost answers (lost-answers.ts): a write the source picks takes effect and its answer is dropped. */
  faults?: FaultSource | undefined;
}

export interface WebApiContext {
  state: FakeState;
  limiter: FakeRateLimiter;
  /** The fake's clock (the limiter's and the logs'). */
  now: () => number;
  writeLog: WriteLog;
  switches: WebApiSwitches;
  calls: ApiCall[];
  socketUrl: () => string;
  oauth: { clientId: string; clientSecret: string; teamId: string; token: string } | undefined;
  onCall: (call: ApiCall) => void;
  users: Map<string, string>;
  /**
   * The app's messaging experience (its manifest's view). `agent`: as Slack's reference of
   * assistant.threads.setSuggestedPrompts says, a call with `thread_ts` silently does nothing.
   */
  experience: 'agent' | 'assistant';
  /** The external file upload flow (uploads.ts). */
  uploads?: FakeUploads;
}

/** An agent session's statuses (agents.sessions.setStatus, chat.stopStream's session_status). */
const SESSION_STATUSES = ['active', 'processing', 'suspended', 'closed'];

class ApiError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

/** Slack's 4,000-character guidance counts what users see: an entity is one character. */
export function visibleLength(mrkdwn: string): number {
  return mrkdwn.replace(/&(amp|lt|gt);/g, '_').length;
}

const str = (a: Args, k: string): string | undefined => (typeof a[k] === 'string' ? (a[k] as string) : undefined);
const req = (a: Args, k: string): string => {
  const v = str(a, k);
  if (v === undefined || v === '') throw new ApiError(k === 'channel' ? 'channel_not_found' : `missing_${k}`);
  return v;
};

function uploadsOf(c: WebApiContext): FakeUploads {
  if (c.uploads === undefined) throw new ApiError('unknown_method');
  return c.uploads;
}

/** An upload call, its refusals answered as API errors. */
function uploadCall(fn: () => Record<string, unknown>): Record<string, unknown> {
  try {
    return fn();
  } catch (err) {
    if (err instanceof UploadError) throw new ApiError(err.message);
    throw err;
  }
}

/** A stream call's chunks as Slack checks them (stream-chunks.ts). */
function streamChunksChecked(a: Args): void {
  const error = chunksError(a);
  if (error !== undefined) throw new ApiError(error);
}

function chunkText(a: Args): string | undefined {
  const md = str(a, 'markdown_text');
  if (md !== undefined) return md;
  let chunks: unknown = a.chunks;
  if (typeof chunks === 'string') chunks = JSON.parse(chunks);
  if (!Array.isArray(chunks)) return undefined;
  return chunks
    .filter((c): c is { type: string; text: string } => typeof c === 'object' && c !== null && 'text' in c)
    .map((c) => (c.type === 'markdown_text' ? c.text : ''))
    .join('');
}

/**
 * A stream call's `blocks` chunks, each checked as a message's blocks are and placed after the
 * text before it in the call (`base`: the message's text length before the call).
 */
function streamBlocksOf(a: Args, m: FakeMessage | undefined, base: number): FakeStreamBlocks {
  let chunks: unknown = a.chunks;
  if (typeof chunks === 'string') chunks = JSON.parse(chunks);
  const found: FakeStreamBlocks = [];
  if (!Array.isArray(chunks)) return found;
  let at = base;
  for (const c of chunks as Record<string, unknown>[]) {
    if (c.type === 'markdown_text') at += String(c.text).length;
    if (c.type !== 'blocks') continue;
    const blocks = c.blocks as Record<string, unknown>[];
    const shown = [...(m?.streamBlocks ?? []), ...found].flatMap((x) => x.blocks);
    // One message: its tables counted across every chunk (Slack takes one table per message).
    if (blocksError([...shown, ...blocks]) !== undefined) throw new ApiError('invalid_blocks');
    found.push({ at, blocks });
  }
  return found;
}

type FakeStreamBlocks = NonNullable<FakeMessage['streamBlocks']>;

function addStreamBlocks(m: FakeMessage, found: FakeStreamBlocks): void {
  if (found.length > 0) m.streamBlocks = [...(m.streamBlocks ?? []), ...found];
}

/** Characters a write sends: the text (post, update) or the chunk (streams); 0 when malformed. */
function writeLength(method: string, a: Args): number {
  try {
    const t = method.endsWith('Stream') ? chunkText(a) : (str(a, 'markdown_text') ?? str(a, 'text'));
    return t?.length ?? 0;
  } catch {
    return 0;
  }
}

/** `blocks` as sent (a JSON string in a form body, an array in a JSON body); undefined when absent. */
function blocksOf(a: Args): Record<string, unknown>[] | undefined {
  let b: unknown = a.blocks;
  if (b === undefined) return undefined;
  if (typeof b === 'string') b = JSON.parse(b);
  if (!Array.isArray(b)) throw new ApiError('invalid_blocks');
  const refused = blocksError(b);
  if (refused !== undefined) throw new ApiError(refused);
  return b as Record<string, unknown>[];
}

/** `attachments` as sent; their blocks are held to the same limits as the message's. */
function attachmentsOf(a: Args): Record<string, unknown>[] | undefined {
  let list: unknown = a.attachments;
  if (list === undefined) return undefined;
  if (typeof list === 'string') list = JSON.parse(list);
  const refused = attachmentsError(list);
  if (refused !== undefined) throw new ApiError(refused);
  return list as Record<string, unknown>[];
}

function messageJson(m: FakeMessage, withMetadata = false): Record<string, unknown> {
  return {
    ...(withMetadata && m.metadata !== undefined ? { metadata: m.metadata } : {}),
    type: 'message',
    ts: m.ts,
    thread_ts: m.threadTs,
    user: m.user,
    bot_id: m.botId,
    text: m.text,
    subtype: m.subtype,
    username: m.username,
  };
}

/** Slack's `latest`/`oldest` bounds of conversations.replies and .history (exclusive unless `inclusive`). */
function inWindow(a: Args, ts: string): boolean {
  const inclusive = a.inclusive === true || a.inclusive === 'true' || a.inclusive === '1';
  const latest = str(a, 'latest');
  const oldest = str(a, 'oldest');
  const t = Number(ts);
  if (latest !== undefined && (inclusive ? t > Number(latest) : t >= Number(latest))) return false;
  if (oldest !== undefined && (inclusive ? t < Number(oldest) : t <= Number(oldest))) return false;
  return true;
}

function limitOf(a: Args, def: number): number {
  const n = Number(a.limit ?? def);
  return Number.isFinite(n) && n > 0 ? Math.min(n, 1000) : def;
}

type Handler = (ctx: WebApiContext, a: Args, who: TokenInfo) => Record<string, unknown>;

const handlers: Record<string, Handler> = {
  'auth.test': (_c, _a, who) => ({
    url: 'https://fake.slack.test/',
    team: 'Fake Team',
    user: 'bridge',
    team_id: who.teamId,
    user_id: who.botUserId,
    bot_id: who.botId,
    is_enterprise_install: false,
  }),
  'apps.connections.open': (c, _a, who) => {
    if (who.kind !== 'app') throw new ApiError('not_allowed_token_type');
    return { url: c.socketUrl() };
  },
  'chat.postMessage': (c, a, who) => {
    const channel = req(a, 'channel');
    const { text, format } = contentOf(a);
    const blocks = blocksOf(a);
    const attachments = attachmentsOf(a);
    const metadata = metadataOf(a);
    const m = c.state.add({
      channel,
      text,
      format,
      ...(metadata !== undefined ? { metadata } : {}),
      user: who.botUserId,
      botId: who.botId,
      ...threadOf(a),
      ...(blocks !== undefined ? { blocks } : {}),
      ...(attachments !== undefined ? { attachments } : {}),
    });
    return { channel, ts: m.ts, message: messageJson(m) };
  },
  'chat.update': (c, a) => {
    const m = existing(c, a);
    if (m.streaming) throw new ApiError('cant_update_message');
    const { text, format } = contentOf(a);
    const blocks = blocksOf(a);
    const attachments = attachmentsOf(a);
    // As on Slack: an update without `blocks` (or `attachments`) keeps the message's; `[]` clears them.
    if (blocks !== undefined) m.blocks = blocks;
    if (attachments !== undefined) m.attachments = attachments;
    c.state.setText(m, text, format);
    return { channel: m.channel, ts: m.ts, text };
  },
  'chat.delete': (c, a) => {
    const m = existing(c, a);
    c.state.delete(m.channel, m.ts);
    return { channel: m.channel, ts: m.ts };
  },
  'chat.startStream': (c, a, who) => {
    const channel = req(a, 'channel');
    if (c.switches.failStartStream) throw new ApiError(c.switches.failStartStream);
    const threadTs = req(a, 'thread_ts');
    const isDm = channel.startsWith('D');
    if (!isDm && (str(a, 'recipient_user_id') === undefined || str(a, 'recipient_team_id') === undefined)) {
      throw new ApiError('missing_recipient_user_id');
    }
    streamChunksChecked(a);
    const placed = streamBlocksOf(a, undefined, 0);
    const text = chunkText(a) ?? '';
    const m = c.state.add({
      channel,
      text,
      format: 'markdown',
      user: who.botUserId,
      botId: who.botId,
      threadTs,
      streaming: true,
    });
    addStreamBlocks(m, placed);
    const timeline = applyTasks(undefined, taskUpdates(a));
    if (timeline !== undefined) m.timeline = timeline;
    const mode = str(a, 'task_display_mode');
    if (mode !== undefined) m.taskDisplayMode = mode;
    return { channel, ts: m.ts };
  },
  'chat.appendStream': (c, a) => {
    const m = existing(c, a);
    if (c.switches.failAppendStream) throw new ApiError(c.switches.failAppendStream);
    if (!m.streaming) throw new ApiError('message_not_in_streaming_state');
    streamChunksChecked(a);
    const add = chunkText(a);
    if (add === undefined) throw new ApiError('invalid_arguments');
    addStreamBlocks(m, streamBlocksOf(a, m, m.text.length));
    // A call of task updates alone changes the timeline, not the text (nor its versions).
    if (add !== '') c.state.setText(m, m.text + add, 'markdown');
    const timeline = applyTasks(m.timeline, taskUpdates(a));
    if (timeline !== undefined) m.timeline = timeline;
    return { channel: m.channel, ts: m.ts };
  },
  'chat.stopStream': (c, a) => {
    const m = existing(c, a);
    if (!m.streaming) throw new ApiError('message_not_in_streaming_state');
    streamChunksChecked(a);
    // Slack's reference: `session_status` is the session's status after the stop, `active` when absent.
    const sessionStatus = str(a, 'session_status') ?? 'active';
    if (!SESSION_STATUSES.includes(sessionStatus)) throw new ApiError('invalid_arguments');
    const placed = streamBlocksOf(a, m, m.text.length);
    const bottom = blocksOf(a);
    if (m.threadTs !== undefined) c.state.setSessionStatus(m.channel, m.threadTs, sessionStatus);
    addStreamBlocks(m, placed);
    const add = chunkText(a);
    if (add) c.state.setText(m, m.text + add, 'markdown');
    const timeline = applyTasks(m.timeline, taskUpdates(a));
    if (timeline !== undefined) m.timeline = timeline;
    if (bottom !== undefined) m.blocks = bottom;
    m.streaming = false;
    return { channel: m.channel, ts: m.ts, message: messageJson(m) };
  },
  'files.getUploadURLExternal': (c, a) => uploadCall(() => uploadsOf(c).getUploadURL(a)),
  'files.completeUploadExternal': (c, a) => uploadCall(() => uploadsOf(c).complete(a)),
  'chat.postEphemeral': (c, a) => {
    const channel = req(a, 'channel');
    const user = req(a, 'user');
    const text = str(a, 'text') ?? '';
    if (text === '') throw new ApiError('no_text');
    c.state.ephemerals.push({ channel, user, text, ...threadOf(a) });
    return { message_ts: c.state.nextTs() };
  },
  // Agent sessions exist in DMs with the app; while one is `processing` Slack shows its Stop.
  'agents.sessions.setStatus': (c, a) => {
    const channel = req(a, 'channel_id');
    const threadTs = req(a, 'thread_ts');
    const status = req(a, 'status');
    if (c.switches.failAgentStatus) throw new ApiError(c.switches.failAgentStatus);
    if (!SESSION_STATUSES.includes(status)) throw new ApiError('invalid_arguments');
    if (!channel.startsWith('D')) throw new ApiError('channel_type_not_supported');
    c.state.setSessionStatus(channel, threadTs, status, { create: true });
    return {};
  },
  'assistant.threads.setStatus': (c, a) => {
    const key = `${req(a, 'channel_id')}:${req(a, 'thread_ts')}`;
    if (c.switches.failThreadStatus) throw new ApiError(c.switches.failThreadStatus);
    const status = str(a, 'status') ?? '';
    const loading = listArg(a.loading_messages)?.map(String);
    c.state.threadStatuses.set(key, [
      ...(c.state.threadStatuses.get(key) ?? []),
      { status, ...(loading !== undefined ? { loading } : {}) },
    ]);
    return {};
  },
  // Without thread_ts: "set for the latest message in the channel" (Slack's reference).
  'assistant.threads.setSuggestedPrompts': (c, a) => {
    const channel = req(a, 'channel_id');
    const prompts = listArg(a.prompts) as FakePrompts['prompts'] | undefined;
    if (prompts === undefined || prompts.length === 0 || prompts.length > 4) throw new ApiError('invalid_arguments');
    const threadTs = str(a, 'thread_ts');
    if (threadTs !== undefined && c.experience === 'agent') return {};
    const title = str(a, 'title');
    const ts = threadTs ?? c.state.list(channel).at(-1)?.ts;
    c.state.prompts.push({ channel, ts, prompts, ...(title !== undefined ? { title } : {}) });
    return {};
  },
  'assistant.threads.setTitle': (c, a) => {
    const key = `${req(a, 'channel_id')}:${req(a, 'thread_ts')}`;
    const title = req(a, 'title');
    c.state.threadTitles.set(key, [...(c.state.threadTitles.get(key) ?? []), title]);
    return {};
  },
  'reactions.add': () => ({}),
  'reactions.remove': () => ({}),
  // Oldest first from the parent, as Slack pages a thread; `limit` cuts from the old end.
  'conversations.replies': (c, a) => {
    const channel = req(a, 'channel');
    const all = c.state.thread(channel, req(a, 'ts')).filter((m) => inWindow(a, m.ts));
    const json = (m: FakeMessage) => messageJson(m, wantsMetadata(a));
    if (c.switches.cappedHistory) return c.switches.cappedHistory.answer('conversations.replies', all.map(json), a);
    const limit = limitOf(a, 1000);
    return { messages: all.slice(0, limit).map(json), has_more: all.length > limit };
  },
  // Newest first, top-level messages only.
  'conversations.history': (c, a) => {
    const channel = req(a, 'channel');
    const all = c.state.topLevel(channel).filter((m) => inWindow(a, m.ts));
    const json = (m: FakeMessage) => messageJson(m, wantsMetadata(a));
    if (c.switches.cappedHistory) return c.switches.cappedHistory.answer('conversations.history', all.map(json), a);
    const limit = limitOf(a, 100);
    return { messages: all.slice(0, limit).map(json), has_more: all.length > limit };
  },
  'users.info': (c, a) => {
    const id = req(a, 'user');
    const name = c.users.get(id) ?? `user-${id.toLowerCase()}`;
    return { user: { id, name, real_name: name, profile: { display_name: name, real_name: name } } };
  },
};

/** An array argument: JSON in a form body, as is in a JSON body. */
function listArg(v: unknown): unknown[] | undefined {
  const parsed: unknown = typeof v === 'string' ? JSON.parse(v) : v;
  return Array.isArray(parsed) ? (parsed as unknown[]) : undefined;
}

function contentOf(a: Args): { text: string; format: FakeMessage['format'] } {
  const md = str(a, 'markdown_text');
  if (md !== undefined) {
    if (md.length > 12_000) throw new ApiError('msg_too_long');
    return { text: md, format: 'markdown' };
  }
  const text = str(a, 'text');
  if (text === undefined || text === '') throw new ApiError('no_text');
  const tooLong = textError(text);
  if (tooLong !== undefined) throw new ApiError(tooLong);
  // Stricter than Slack (which takes 40,000 and advises 4,000): the bridge promises 4,000 visible.
  if (visibleLength(text) > 4000) throw new ApiError('msg_too_long');
  return { text, format: 'mrkdwn' };
}

function threadOf(a: Args): { threadTs?: string } {
  const t = str(a, 'thread_ts');
  return t ? { threadTs: t } : {};
}

function existing(c: WebApiContext, a: Args): FakeMessage {
  const channel = req(a, 'channel');
  const m = c.state.get(channel, req(a, 'ts'));
  if (!m) throw new ApiError('message_not_found');
  return m;
}

function oauthAccess(c: WebApiContext, a: Args, authHeader: string | undefined): Record<string, unknown> {
  if (!c.oauth) throw new ApiError('invalid_client_id');
  let id = str(a, 'client_id');
  let secret = str(a, 'client_secret');
  if (authHeader?.startsWith('Basic ')) {
    [id, secret] = Buffer.from(authHeader.slice(6), 'base64').toString().split(':');
  }
  if (id !== c.oauth.clientId || secret !== c.oauth.clientSecret) throw new ApiError('invalid_client_id');
  if (str(a, 'code') !== 'good-code') throw new ApiError('invalid_code');
  const info: TokenInfo = { teamId: c.oauth.teamId, botUserId: 'U0BOT2', botId: 'B0BOT2', kind: 'bot' };
  c.state.tokens.set(c.oauth.token, info);
  return {
    app_id: 'A0FAKE',
    authed_user: { id: 'U0INSTALLER' },
    scope: 'app_mentions:read,chat:write',
    token_type: 'bot',
    access_token: c.oauth.token,
    bot_user_id: info.botUserId,
    team: { id: info.teamId, name: 'OAuth Team' },
    enterprise: null,
    is_enterprise_install: false,
  };
}

async function readBody(r: IncomingMessage): Promise<Args> {
  const chunks: Buffer[] = [];
  for await (const ch of r) chunks.push(ch as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  if ((r.headers['content-type'] ?? '').includes('application/json')) return raw ? (JSON.parse(raw) as Args) : {};
  return Object.fromEntries(new URLSearchParams(raw)) as Args;
}

export async function handleWebApi(ctx: WebApiContext, r: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = (r.url ?? '').replace(/^\/api\//, '').split('?')[0] ?? '';
  const args = await readBody(r);
  await ctx.switches.holdMethods.get(method);
  const bearer = (r.headers.authorization ?? '').replace(/^Bearer /, '');
  const token = bearer || str(args, 'token') || '';
  delete args.token;
  const send = (status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const record = (
    teamId: string | undefined,
    result: string,
    extra: { body?: Record<string, unknown>; retryAfterS?: number; bucket?: string } = {},
  ) => {
    const call: ApiCall = { method, args, teamId, at: ctx.now(), result };
    ctx.calls.push(call);
    if (isWriteMethod(method)) {
      const answered = typeof extra.body?.ts === 'string' ? extra.body.ts : undefined;
      ctx.writeLog.add({
        at: call.at,
        method,
        team: teamId,
        channel: str(args, 'channel'),
        ts: method === 'chat.postMessage' || method === 'chat.startStream' ? answered : str(args, 'ts'),
        threadTs: str(args, 'thread_ts'),
        textLength: writeLength(method, args),
        accepted: result === 'ok',
        result,
        ...(extra.retryAfterS !== undefined ? { retryAfterS: extra.retryAfterS } : {}),
        ...(extra.bucket !== undefined ? { bucket: extra.bucket } : {}),
      });
    }
    ctx.onCall(call);
  };
  try {
    if (method === 'oauth.v2.access') {
      const body = oauthAccess(ctx, args, r.headers.authorization);
      record(undefined, 'ok');
      send(200, { ok: true, ...body });
      return;
    }
    const who = ctx.state.tokens.get(token);
    if (!who) throw new ApiError(token ? 'invalid_auth' : 'not_authed');
    const handler = handlers[method];
    if (!handler) throw new ApiError('unknown_method');
    if (ctx.switches.missingChannels.has(str(args, 'channel') ?? '')) throw new ApiError('channel_not_found');
    const capWait = ctx.switches.cappedHistory?.refuse(method, who.teamId);
    if (capWait !== undefined) {
      record(who.teamId, 'ratelimited', { retryAfterS: capWait, bucket: `${method}:${who.teamId}` });
      send(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(capWait) });
      return;
    }
    const rate = ctx.limiter.decide(method, who.teamId, str(args, 'channel'));
    if (!rate.ok) {
      record(who.teamId, 'ratelimited', { retryAfterS: rate.retryAfterS, bucket: rate.bucket });
      send(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(rate.retryAfterS) });
      return;
    }
    // A refused form: answered before the write takes effect, as Slack validates a payload first.
    const refused = ctx.switches.refuse?.(method, args);
    if (refused !== undefined) throw new ApiError(refused);
    const body = handler(ctx, args, who);
    record(who.teamId, 'ok', { body });
    if (maybeLoseAnswer(ctx.switches.faults, method, res)) return;
    // Slack names the token's scopes on every answer; doctor reads them from auth.test.
    send(200, { ok: true, ...body }, who.kind === 'bot' ? { 'x-oauth-scopes': BOT_SCOPES } : {});
  } catch (err) {
    const code = err instanceof ApiError ? err.code : 'internal_error';
    record(ctx.state.tokens.get(token)?.teamId, code);
    send(200, { ok: false, error: code });
  }
}
