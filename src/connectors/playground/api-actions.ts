import type { ServerResponse } from 'node:http';
import { MESSAGES } from '../../core/user-messages.js';
import { sendJson } from '../../server/http-server.js';
import { CONVERSATION_ID, type ReplyView } from './connector.js';
import type { Caller } from './guard.js';
import type { RoutesContext } from './routes-context.js';

// What an admitted API call does, once http.ts has checked who sent it: whose conversation it is
// (the claim), the event stream of a conversation, and the writes (send, stop, vote, reset).

/** A write's JSON body, and who sent it. */
export interface ApiCall {
  res: ServerResponse;
  body: Record<string, unknown>;
  caller: Caller;
  user: string;
}

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
export async function claim(
  ctx: RoutesContext,
  res: ServerResponse,
  conversation: string,
  user: string,
  write: boolean,
): Promise<boolean> {
  if (!CONVERSATION_ID.test(conversation)) {
    sendJson(res, 400, { error: 'bad_conversation' });
    return false;
  }
  let owner = await ctx.opts.owners.ownerOf(conversation);
  const claimed = owner !== undefined && owner !== user ? 'not_yours' : ctx.connector.claim(conversation, user, owner);
  if (claimed === 'full') {
    const detail = 'the playground holds as many conversations as it can: try later';
    sendJson(res, 503, { error: 'too_many_conversations', detail }, { 'retry-after': '60' });
    return false;
  }
  if (claimed === 'ok' && write && owner === undefined) {
    owner = await ctx.opts.owners.claim(conversation, user, Date.now());
    if (owner === user) return true;
    ctx.connector.claim(conversation, owner, owner);
  } else if (claimed === 'ok') return true;
  notYours(res);
  return false;
}

/** The conversation's event stream (streams.ts): its writes and its turns' news. */
export function openEvents(
  ctx: RoutesContext,
  res: ServerResponse,
  conversation: string,
  caller: Caller,
  user: string,
) {
  const { connector } = ctx;
  const opened = ctx.streams.open(user, caller.address, res, (send) => {
    const replies = connector.subscribe(conversation, (v: ReplyView) => send('reply', v));
    const turns = connector.subscribeTurns(conversation, ({ kind, ...data }) => send(kind, data));
    return () => {
      replies();
      turns();
    };
  });
  if (!opened.ok) {
    ctx.logger.info({ error: opened.error }, 'playground: event stream refused');
    sendJson(res, opened.status, { error: opened.error, detail: opened.detail }, { 'retry-after': '60' });
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export async function sendMessage(ctx: RoutesContext, { res, body, caller, user }: ApiCall): Promise<void> {
  const text = str(body.text) ?? '';
  if (text.trim() === '') {
    sendJson(res, 400, { error: 'bad_message' });
    return;
  }
  const conversation = str(body.conversation) ?? '';
  if (!(await claim(ctx, res, conversation, user, true))) return;
  // The per-user limit (the relay's) counts a browser; this one an address, whatever its cookies.
  if (!ctx.perAddress.tryTake(caller.address, Date.now())) {
    ctx.logger.info({ client: caller.address }, 'playground: an address is over its message limit');
    sendJson(res, 429, { error: 'slow_down', detail: MESSAGES.slowDown }, { 'retry-after': '60' });
    return;
  }
  // A Retry after a restart names a turn only the store remembers.
  await ctx.connector.load(conversation);
  sendJson(res, 202, ctx.connector.send(conversation, text, user, str(body.bot), str(body.retryOf)));
}

export async function stop(ctx: RoutesContext, { res, body, user }: ApiCall): Promise<void> {
  const conversation = str(body.conversation) ?? '';
  const replyKey = str(body.replyKey) ?? '';
  // A reply's Stop names its key; the Stop shown before the first word names the conversation.
  if (replyKey === '' && conversation !== '') {
    if (!(await claim(ctx, res, conversation, user, false))) return;
    sendJson(res, 200, { result: await ctx.connector.stopConversation(conversation, user) });
    return;
  }
  sendJson(res, 200, { result: await ctx.connector.stopReply(replyKey, user) });
}

export async function vote(ctx: RoutesContext, { res, body, user }: ApiCall): Promise<void> {
  const v = body.vote === 'up' || body.vote === 'down' ? body.vote : undefined;
  if (v === undefined) {
    sendJson(res, 400, { error: 'bad_vote' });
    return;
  }
  sendJson(res, 200, { result: await ctx.connector.voteReply(str(body.replyKey) ?? '', user, v) });
}

export async function reset(ctx: RoutesContext, { res, body, user }: ApiCall): Promise<void> {
  const conversation = str(body.conversation) ?? '';
  if (!(await claim(ctx, res, conversation, user, false))) return;
  await ctx.connector.resetConversation(conversation);
  sendJson(res, 200, { result: 'reset' });
}
