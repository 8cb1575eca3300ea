import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChatService } from '../../core/chat-port.js';
import type { Clock, ConversationStore, FeedbackStore, PlaygroundOwnerStore } from '../../core/ports.js';
import type { TrustProxy } from '../../config/trust-proxy.js';
import { UserRateLimiter } from '../../core/intake/admission.js';
import { MESSAGES } from '../../core/user-messages.js';
import type { Logger } from '../../logger.js';
import { type RequestListener, sendJson } from '../../server/http-server.js';
import { ChatError } from '../../core/chat-port.js';
import { CONVERSATION_ID, type PlaygroundConnector, type ReplyView } from './connector.js';
import { type Caller, createGuard, type Refusal, userIdOf } from './guard.js';
import type { GuessLimits } from './guesses.js';
import { bouncePage, FAVICON_SVG, type PageFacts, pageWithToken, refusalPage, sendText } from './page-serve.js';
import { PAGE_CSS } from './page.js';
import { PAGE_JS } from './page-script.js';
import { mergeHistory } from './history-merge.js';
import { serveVendor } from './vendor.js';
import { createStreams, STREAM_LIMITS, type StreamLimits } from './streams.js';

// The playground's routes on the bridge's HTTP server: `/` and `/playground` (the page),
// `/playground/app.js`, `/playground/app.css`, `/playground/icon.svg` (also `/favicon.ico`),
// `/playground/vendor/<file>` (vendor.ts: the Markdown renderer and sanitizer),
// `/playground/api/{send,stop,vote,reset,history}` and the SSE stream of a conversation's writes
// and turns, `/playground/events?conversation=ID`.
// It spends the operator's API key: guard.ts says who may drive it, streams.ts bounds the event
// streams, conversation-table.ts the conversations kept. A refused request does nothing at all:
// every check runs before the body is read or the connector is called.

const MAX_BODY = 64 * 1024;
const HISTORY_LIMIT = 100;

export interface PlaygroundHttpOptions {
  connector: PlaygroundConnector;
  chat: ChatService;
  conversations: ConversationStore;
  /** Who owns each conversation, kept in the store (the in-memory table forgets; a restart too). */
  owners: PlaygroundOwnerStore;
  botFor: (place: { platform: string; workspaceId?: string; channelId: string }) => string;
  /** Answer clients that are not on this machine too (PLAYGROUND=on): each with `token`. */
  allowRemote: boolean;
  /** PLAYGROUND_TOKEN. */
  token?: string | undefined;
  /** PLAYGROUND_PUBLIC_HOST. */
  publicHosts?: string[] | undefined;
  /** HOST the server binds. */
  bindHost?: string | undefined;
  /** Where votes are kept: a reload shows the browser's own votes again (absent: none shown). */
  feedback?: FeedbackStore | undefined;
  /** What the page tells its user about the upstream (the built-in emulator's hint, the bots). */
  facts?: PageFacts | undefined;
  /** Caps of the event streams (tests); default STREAM_LIMITS. */
  streamLimits?: Partial<StreamLimits> | undefined;
  /** The streams' idle clock (tests). */
  clock?: Clock | undefined;
  /** This machine's addresses (tests). */
  addresses?: (() => string[]) | undefined;
  /** TRUST_PROXY: the client's address and HTTPS, as a trusted proxy reports them. */
  trustProxy?: TrustProxy | undefined;
  /** Bounds of wrong PLAYGROUND_TOKEN guesses (tests). */
  guessLimits?: GuessLimits | undefined;
  /**
   * Messages one client address may send a minute, whatever the number of browsers (cookies are
   * free): ADDRESS_BROWSERS times USER_MESSAGES_PER_MINUTE. Default from 20 a user.
   */
  messagesPerAddressPerMinute?: number | undefined;
  logger: Logger;
}

/** The browsers one address is given room for (a household, an office behind one NAT): streams and messages. */
export const ADDRESS_BROWSERS = 4;

export interface PlaygroundRoutes {
  page: RequestListener;
  /** `/favicon.ico`: the playground's icon (browsers ask for it whatever the page names). */
  favicon: RequestListener;
  api: RequestListener;
  /** Ends every open event stream (shutdown). */
  close(): void;
}

export { isLoopback } from './guard.js';

const DETAIL: Record<Refusal, string> = {
  not_this_machine: 'the playground answers this machine only (PLAYGROUND=on opens it, with PLAYGROUND_TOKEN)',
  bad_host:
    "this Host is not one of this machine's names: open the URL the bridge printed (a reverse proxy's name goes in PLAYGROUND_PUBLIC_HOST)",
  unauthenticated: 'open /playground?token=… once in this browser (PLAYGROUND_TOKEN), or send Authorization: Bearer …',
  wrong_token: 'that is not this playground’s PLAYGROUND_TOKEN',
  too_many_guesses: 'too many wrong PLAYGROUND_TOKEN guesses from this address: wait a minute',
  bad_origin: "only the playground's own page may do this",
  bad_content_type: 'send Content-Type: application/json',
  bad_page_token: 'the page is out of date (the bridge restarted?): reload it',
  no_session: 'the page is out of date: reload it',
};

export function createPlaygroundRoutes(opts: PlaygroundHttpOptions): PlaygroundRoutes {
  const { connector, logger } = opts;
  const guard = createGuard({
    allowRemote: opts.allowRemote,
    ...(opts.token !== undefined ? { token: opts.token } : {}),
    ...(opts.publicHosts !== undefined ? { publicHosts: opts.publicHosts } : {}),
    ...(opts.bindHost !== undefined ? { bindHost: opts.bindHost } : {}),
    ...(opts.addresses !== undefined ? { addresses: opts.addresses } : {}),
    ...(opts.trustProxy !== undefined ? { trustProxy: opts.trustProxy } : {}),
    ...(opts.guessLimits !== undefined ? { guessLimits: opts.guessLimits } : {}),
  });
  const perAddress = new UserRateLimiter(opts.messagesPerAddressPerMinute ?? ADDRESS_BROWSERS * 20);
  const streams = createStreams({ ...STREAM_LIMITS, ...opts.streamLimits }, opts.clock);

  /** A wrong token is a guess: said at warn (with the address, never the guess). */
  const wrongToken = (address: string, how: string): void =>
    logger.warn({ client: address, how }, 'playground: wrong PLAYGROUND_TOKEN presented');

  const refuse = (req: IncomingMessage, res: ServerResponse, reason: Refusal, retryAfterS?: number): void => {
    logger.debug({ reason, method: req.method, path: pathOf(req) }, 'playground: request refused');
    const status =
      reason === 'unauthenticated' || reason === 'wrong_token' ? 401 : reason === 'too_many_guesses' ? 429 : 403;
    const error = status === 401 ? 'unauthenticated' : status === 429 ? 'too_many_requests' : 'forbidden';
    const extra: Record<string, string> = {};
    if (status === 401) extra['www-authenticate'] = 'Bearer realm="playground"';
    if (retryAfterS !== undefined) extra['retry-after'] = String(retryAfterS);
    // The body (if any) is not read: the connection closes after the answer.
    sendJson(res, status, { error, reason, detail: DETAIL[reason] }, { connection: 'close', ...extra });
  };

  /** The page: `?token=` sets the credential cookie; a browser gets its id cookie here. */
  const page: RequestListener = (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendJson(res, 405, { error: 'method_not_allowed' }, { allow: 'GET, HEAD', connection: 'close' });
      return;
    }
    const url = new URL(req.url ?? '/', 'http://playground.local');
    const admitted = guard.admit(req);
    if ('refused' in admitted && admitted.refused === 'wrong_token') wrongToken(admitted.address, 'bearer');
    if ('refused' in admitted && admitted.refused !== 'unauthenticated') {
      logger.debug({ reason: admitted.refused }, 'playground: page refused');
      const status = admitted.refused === 'too_many_guesses' ? 429 : admitted.refused === 'wrong_token' ? 401 : 403;
      const retry: Record<string, string> =
        admitted.retryAfterS !== undefined ? { 'retry-after': String(admitted.retryAfterS) } : {};
      sendText(res, status, 'text/html; charset=utf-8', refusalPage(DETAIL[admitted.refused]), retry);
      return;
    }
    const where = 'refused' in admitted ? admitted : admitted.caller;
    const address = where.address;
    const given = guard.tokenParam(url.searchParams.get('token'), address);
    if (typeof given === 'object') {
      sendText(res, 429, 'text/html; charset=utf-8', refusalPage(DETAIL.too_many_guesses), {
        'retry-after': String(given.retryAfterS),
      });
      return;
    }
    if (given === 'wrong') {
      wrongToken(address, 'page');
      sendText(res, 403, 'text/html; charset=utf-8', refusalPage(DETAIL.wrong_token));
      return;
    }
    if (given === 'right') {
      // The token leaves the address bar: the bounce loads `/` from this page, with the cookie.
      sendText(res, 200, 'text/html; charset=utf-8', bouncePage('/'), { 'set-cookie': guard.authCookies(where) });
      return;
    }
    if ('refused' in admitted) {
      sendText(res, 401, 'text/html; charset=utf-8', refusalPage(DETAIL.unauthenticated));
      return;
    }
    let uid = admitted.caller.uid;
    const headers: Record<string, string[]> = {};
    if (uid === undefined) {
      // Arriving from another site, a SameSite=Strict cookie is not sent even when the browser has
      // one: load the page again from itself rather than replace the browser's id.
      if (req.headers['sec-fetch-site'] === 'cross-site') {
        sendText(res, 200, 'text/html; charset=utf-8', bouncePage(url.pathname));
        return;
      }
      const fresh = guard.newUid(admitted.caller);
      uid = fresh.uid;
      headers['set-cookie'] = fresh.cookies;
    }
    sendText(res, 200, 'text/html; charset=utf-8', pageWithToken(guard.pageToken(uid), opts.facts), headers);
  };

  const favicon: RequestListener = (req, res) => {
    const admitted = guard.admit(req);
    if ('refused' in admitted && admitted.refused !== 'unauthenticated') return refuse(req, res, admitted.refused);
    sendText(res, 200, 'image/svg+xml', FAVICON_SVG, { 'cache-control': 'public, max-age=86400' });
  };

  /**
   * The conversation as the page shows it (history-merge.ts). `gone`: the upstream no longer
   * knows the conversation (a restarted emulator, an expired session); the page says so.
   */
  const history = async (conversation: string, user: string): Promise<Record<string, unknown>> => {
    const place = connector.placeOf(conversation);
    const rec = await opts.conversations.get(place);
    const asks = connector.asked(conversation);
    const views = connector.live(conversation);
    if (rec?.upstreamId === undefined) return { messages: mergeHistory(undefined, asks, views) };
    try {
      const pageOf = await opts.chat.history(rec.botId || opts.botFor(place), rec.upstreamId, { limit: HISTORY_LIMIT });
      const upstream = pageOf.messages.map((m) => ({ id: m.id, role: m.role, text: m.content }));
      const messages = mergeHistory(upstream, asks, views);
      return { messages: await withVotes(messages, rec.upstreamId, user) };
    } catch (err) {
      if (!(err instanceof ChatError) || err.kind !== 'conversation_gone') throw err;
      return { messages: mergeHistory(undefined, asks, views), gone: true };
    }
  };

  /** This browser's votes on the conversation's replies (`vote` on each), from the feedback store. */
  const withVotes = async <T extends { replyKey?: string }>(
    messages: T[],
    upstreamId: string,
    user: string,
  ): Promise<(T & { vote?: string })[]> => {
    if (opts.feedback === undefined || !messages.some((m) => m.replyKey !== undefined)) return messages;
    const votes = new Map<string, string>();
    try {
      for (const v of await opts.feedback.forConversation(upstreamId))
        if (v.userId === user) votes.set(v.replyKey, v.vote);
    } catch (err) {
      // The thumbs then show unpressed: no reason to fail the whole history.
      logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'playground: votes not read');
    }
    return messages.map((m) => {
      const vote = m.replyKey === undefined ? undefined : votes.get(m.replyKey);
      return vote === undefined ? m : { ...m, vote };
    });
  };

  const events = (res: ServerResponse, conversation: string, caller: Caller, user: string): void => {
    const opened = streams.open(user, caller.address, res, (send) => {
      const replies = connector.subscribe(conversation, (v: ReplyView) => send('reply', v));
      const turns = connector.subscribeTurns(conversation, ({ kind, ...data }) => send(kind, data));
      return () => {
        replies();
        turns();
      };
    });
    if (!opened.ok) {
      logger.info({ error: opened.error }, 'playground: event stream refused');
      sendJson(res, opened.status, { error: opened.error, detail: opened.detail }, { 'retry-after': '60' });
    }
  };

  const notYours = (res: ServerResponse): void =>
    sendJson(res, 403, {
      error: 'forbidden',
      reason: 'not_your_conversation',
      detail: 'another browser uses this conversation: start a new one',
    });

  /**
   * `user` may use `conversation`: else answered (403 or 503) and false. The store's owner comes
   * first (the memory's table forgets, and a restart empties it); a message (`write`) records
   * `user` as the owner there, once: of two browsers racing on an id, the store picks one.
   */
  const claim = async (res: ServerResponse, conversation: string, user: string, write: boolean): Promise<boolean> => {
    if (!CONVERSATION_ID.test(conversation)) {
      sendJson(res, 400, { error: 'bad_conversation' });
      return false;
    }
    let owner = await opts.owners.ownerOf(conversation);
    if (owner !== undefined && owner !== user) {
      notYours(res);
      return false;
    }
    const claimed = connector.claim(conversation, user, owner);
    if (claimed === 'not_yours') {
      notYours(res);
      return false;
    }
    if (claimed === 'full') {
      sendJson(
        res,
        503,
        { error: 'too_many_conversations', detail: 'the playground holds as many conversations as it can: try later' },
        { 'retry-after': '60' },
      );
      return false;
    }
    if (write && owner === undefined) {
      owner = await opts.owners.claim(conversation, user, Date.now());
      if (owner !== user) {
        connector.claim(conversation, owner, owner);
        notYours(res);
        return false;
      }
    }
    return true;
  };

  const api: RequestListener = async (req, res) => {
    const path = pathOf(req);
    const method = req.method ?? 'GET';
    if (path === '/playground' || path === '/playground/') return page(req, res);
    const admitted = guard.admit(req);
    if ('refused' in admitted) {
      if (admitted.refused === 'wrong_token') wrongToken(admitted.address, 'bearer');
      return refuse(req, res, admitted.refused, admitted.retryAfterS);
    }
    const caller: Caller = admitted.caller;
    if (method === 'GET' && path === '/playground/app.js') {
      sendText(res, 200, 'text/javascript; charset=utf-8', PAGE_JS);
      return;
    }
    if (method === 'GET' && path === '/playground/icon.svg') {
      sendText(res, 200, 'image/svg+xml', FAVICON_SVG, { 'cache-control': 'public, max-age=86400' });
      return;
    }
    if (method === 'GET' && path === '/playground/app.css') {
      sendText(res, 200, 'text/css; charset=utf-8', PAGE_CSS);
      return;
    }
    if ((method === 'GET' || method === 'HEAD') && path.startsWith('/playground/vendor/')) {
      if (!serveVendor(req, res, path.slice('/playground/vendor/'.length))) sendJson(res, 404, { error: 'not_found' });
      return;
    }
    const isRead = path === '/playground/events' || path === '/playground/api/history';
    if (method !== (isRead ? 'GET' : 'POST') || !(isRead || path.startsWith('/playground/api/'))) {
      // Preflights (OPTIONS) land here too: no CORS header, so no other origin gets further.
      sendJson(res, method === 'GET' || method === 'POST' ? 404 : 405, { error: 'not_found' }, { connection: 'close' });
      return;
    }
    const refusal = guard.api(req, caller, !isRead);
    if (refusal !== undefined) return refuse(req, res, refusal);
    const user = userIdOf(caller);
    streams.touch(user);
    try {
      if (isRead) {
        const conversation = new URL(req.url ?? '/', 'http://playground.local').searchParams.get('conversation') ?? '';
        if (!(await claim(res, conversation, user, false))) return;
        if (path === '/playground/events') events(res, conversation, caller, user);
        else sendJson(res, 200, { ...(await history(conversation, user)), working: connector.underway(conversation) });
        return;
      }
      const body = await readJson(req);
      if (body === undefined) {
        sendJson(res, 400, { error: 'bad_json' });
        return;
      }
      const conversation = typeof body.conversation === 'string' ? body.conversation : '';
      const replyKey = typeof body.replyKey === 'string' ? body.replyKey : '';
      switch (path) {
        case '/playground/api/send': {
          const text = typeof body.text === 'string' ? body.text : '';
          if (text.trim() === '') {
            sendJson(res, 400, { error: 'bad_message' });
            return;
          }
          if (!(await claim(res, conversation, user, true))) return;
          // The per-user limit (the relay's) counts a browser; this one an address, whatever its cookies.
          if (!perAddress.tryTake(caller.address, Date.now())) {
            logger.info({ client: caller.address }, 'playground: an address is over its message limit');
            sendJson(res, 429, { error: 'slow_down', detail: MESSAGES.slowDown }, { 'retry-after': '60' });
            return;
          }
          const bot = typeof body.bot === 'string' ? body.bot : undefined;
          const retryOf = typeof body.retryOf === 'string' ? body.retryOf : undefined;
          sendJson(res, 202, connector.send(conversation, text, user, bot, retryOf));
          return;
        }
        case '/playground/api/stop':
          // A reply's Stop names its key; the Stop shown before the first word names the conversation.
          if (replyKey === '' && conversation !== '') {
            if (!(await claim(res, conversation, user, false))) return;
            sendJson(res, 200, { result: await connector.stopConversation(conversation, user) });
            return;
          }
          sendJson(res, 200, { result: await connector.stopReply(replyKey, user) });
          return;
        case '/playground/api/vote': {
          const vote = body.vote === 'up' || body.vote === 'down' ? body.vote : undefined;
          if (vote === undefined) {
            sendJson(res, 400, { error: 'bad_vote' });
            return;
          }
          sendJson(res, 200, { result: await connector.voteReply(replyKey, user, vote) });
          return;
        }
        case '/playground/api/reset':
          if (!(await claim(res, conversation, user, false))) return;
          await connector.resetConversation(conversation);
          sendJson(res, 200, { result: 'reset' });
          return;
        default:
          sendJson(res, 404, { error: 'not_found' });
      }
    } catch (err) {
      logger.warn({ err: err instanceof Error ? err.message : String(err), path }, 'playground: request failed');
      if (!res.headersSent)
        sendJson(res, 502, { error: 'failed', detail: err instanceof Error ? err.message : 'error' });
    }
  };
  api.maxBodyBytes = MAX_BODY;

  return {
    page,
    favicon,
    api,
    close() {
      streams.close();
    },
  };
}

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > MAX_BODY) return undefined;
    chunks.push(b);
  }
  try {
    const v: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
