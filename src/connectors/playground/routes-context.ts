import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChatService } from '../../core/chat-port.js';
import type { Clock, ConversationStore, FeedbackStore, PlaygroundOwnerStore } from '../../core/ports.js';
import type { TrustProxy } from '../../config/trust-proxy.js';
import type { UserRateLimiter } from '../../core/intake/admission.js';
import type { Logger } from '../../logger.js';
import { sendJson } from '../../server/http-server.js';
import type { PlaygroundConnector } from './connector.js';
import type { Guard, Refusal } from './guard.js';
import type { GuessLimits } from './guesses.js';
import type { PageFacts } from './page-serve.js';
import type { StreamLimits, Streams } from './streams.js';

// What the playground's routes share (http.ts builds it once; page-route.ts, history-route.ts
// and api-actions.ts are functions of it), and how a refused request is answered: every check
// runs before the body is read or the connector is called, so a refusal does nothing at all.

export interface PlaygroundHttpOptions {
  connector: PlaygroundConnector;
  chat: ChatService;
  conversations: ConversationStore;
  /** Who owns each conversation, kept in the store (the in-memory table forgets; a restart too). */
  owners: PlaygroundOwnerStore;
  botFor: (place: { platform: string; workspaceId?: string; channelId: string }) => string;
  /** Answer clients that are not on this machine too (PLAYGROUND=on): each with `token`. */
  allowRemote: boolean;
  /** PLAYGROUND_TOKEN (required with allowRemote: configForStart refuses without). */
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

export interface RoutesContext {
  opts: PlaygroundHttpOptions;
  connector: PlaygroundConnector;
  logger: Logger;
  guard: Guard;
  /** Messages per client address (the relay's own limit counts a browser). */
  perAddress: UserRateLimiter;
  streams: Streams;
}

export const DETAIL: Record<Refusal, string> = {
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

/** A wrong token is a guess: said at warn (with the address, never the guess). */
export function wrongToken(ctx: RoutesContext, address: string, how: string): void {
  ctx.logger.warn({ client: address, how }, 'playground: wrong PLAYGROUND_TOKEN presented');
}

/** A refused API request: 401, 429 or 403 with the reason; the body (if any) is not read. */
export function refuse(
  ctx: RoutesContext,
  req: IncomingMessage,
  res: ServerResponse,
  reason: Refusal,
  retryAfterS?: number,
): void {
  ctx.logger.debug({ reason, method: req.method, path: pathOf(req) }, 'playground: request refused');
  const status =
    reason === 'unauthenticated' || reason === 'wrong_token' ? 401 : reason === 'too_many_guesses' ? 429 : 403;
  const error = status === 401 ? 'unauthenticated' : status === 429 ? 'too_many_requests' : 'forbidden';
  const extra: Record<string, string> = {};
  if (status === 401) extra['www-authenticate'] = 'Bearer realm="playground"';
  if (retryAfterS !== undefined) extra['retry-after'] = String(retryAfterS);
  // The connection closes after the answer.
  sendJson(res, status, { error, reason, detail: DETAIL[reason] }, { connection: 'close', ...extra });
}

export function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}
