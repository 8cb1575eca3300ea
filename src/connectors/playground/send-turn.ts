import { randomUUID } from 'node:crypto';
import type { IncomingMessage, MessageHandler } from '../../core/ports.js';
import { type ConnectorState, placeOf } from './connector-state.js';
import { keepTurn } from './kept-turns.js';
import { PlaygroundSink } from './sink.js';

// A message typed in the page becomes a turn: an IncomingMessage handed to the relay (as a
// platform's message would be), with a sink of its own (sink.ts), followed until the relay is
// done with it: then its reply's last state is settled and the page told the turn ended.

/** The name a browser's messages carry (each browser is a user of its own: see guard.ts). */
export const PLAYGROUND_USER_NAME = 'you';

export interface TurnRequest {
  conversation: string;
  text: string;
  user: string;
  bot?: string | undefined;
  /** The turn whose failed reply this one replaces (Retry, issue 41). */
  retryOf?: string | undefined;
}

export function sendTurn(s: ConnectorState, req: TurnRequest): { eventId: string } {
  const h = s.handler;
  if (h === undefined || s.shuttingDown) throw new Error('the playground is not running');
  const { conversation } = req;
  if (req.bot !== undefined) pickBot(s, conversation, req.bot);
  const eventId = randomUUID();
  const sink = new PlaygroundSink(s, conversation, eventId);
  const msg = incoming(s, h, req, eventId, sink);
  let mine = s.unfinished.get(conversation);
  if (mine === undefined) s.unfinished.set(conversation, (mine = new Set()));
  // A turn still under way is not replaced: its reply would come after all.
  if (req.retryOf !== undefined && !mine.has(req.retryOf)) {
    s.table.replaceTurn(conversation, req.retryOf);
    keepTurn(s, conversation, req.retryOf);
  }
  mine.add(eventId);
  s.table.keepAsk(conversation, { eventId, text: msg.text });
  // Kept at once: a message the upstream never gets is still shown after a restart.
  keepTurn(s, conversation, eventId);
  // The conversation id lets whoever reads it follow the conversation's owner: debug only.
  s.logger.info({ eventId }, 'playground: message');
  s.logger.debug({ eventId, conversation }, 'playground: message in conversation');
  void follow(s, h, msg, sink, mine);
  return { eventId };
}

/** The bot the conversation's page picked, when there are several to pick from. */
function pickBot(s: ConnectorState, conversation: string, bot: string): void {
  const bots = s.opts.bots ?? [];
  if (bots.length <= 1 || !bots.includes(bot)) return;
  s.picked.delete(conversation);
  s.picked.set(conversation, bot);
  if (s.picked.size > s.maxConversations) s.picked.delete(s.picked.keys().next().value ?? '');
}

function incoming(
  s: ConnectorState,
  h: MessageHandler,
  req: TurnRequest,
  eventId: string,
  sink: PlaygroundSink,
): IncomingMessage {
  const place = placeOf(req.conversation);
  const receivedAt = s.now();
  const arrival = h.arrive?.(place, eventId, receivedAt);
  return {
    eventId,
    place,
    origin: place,
    messageId: eventId,
    userId: req.user,
    userName: PLAYGROUND_USER_NAME,
    text: req.text.trim(),
    isDm: true,
    mentionsBot: true,
    isFromBot: false,
    receivedAt,
    sink,
    ...(arrival !== undefined ? { arrival } : {}),
  };
}

/** The relay's work on the turn, to its end: the reply's last state, then `turn: done`. */
async function follow(
  s: ConnectorState,
  h: MessageHandler,
  msg: IncomingMessage,
  sink: PlaygroundSink,
  mine: Set<string>,
): Promise<void> {
  const { eventId } = msg;
  const conversation = msg.place.channelId;
  const entry = s.table.ensure(conversation);
  entry.busy += 1;
  let result: string;
  try {
    const r = await h.handle(msg);
    entry.busy -= 1;
    if (r.status === 'failed') sink.settle('error');
    else if (r.status === 'interrupted') sink.settle('interrupted');
    else if (r.status === 'stopped') sink.settle('stopped');
    result = r.status;
  } catch (err) {
    entry.busy -= 1;
    const why = err instanceof Error ? err.message : String(err);
    s.logger.error({ eventId, err: why }, 'playground: handler failed');
    sink.settle('error');
    result = 'failed';
  }
  // The reply as it ended, kept for a reload after a restart.
  keepTurn(s, conversation, eventId);
  // After the reply's last state: the page's typing indicator and early Stop end here.
  mine.delete(eventId);
  if (mine.size === 0 && s.unfinished.get(conversation) === mine) s.unfinished.delete(conversation);
  s.turns.emit(conversation, { kind: 'turn', eventId, state: 'done', result });
}
