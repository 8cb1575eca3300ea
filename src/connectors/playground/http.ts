import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChatService } from '../../core/chat-port.js';
import type { ConversationStore } from '../../core/ports.js';
import type { Logger } from '../../logger.js';
import type { RequestListener } from '../../server/http-server.js';
import { sendJson } from '../../server/health.js';
import { ChatError } from '../../core/chat-port.js';
import { CONVERSATION_ID, type PlaygroundConnector, type ReplyView } from './connector.js';
import { PAGE_CSS, PAGE_HTML } from './page.js';
import { PAGE_JS } from './page-script.js';
import { mergeHistory } from './history-merge.js';
import { serveVendor } from './vendor.js';

// The playground's routes on the bridge's HTTP server: `/` (the page), `/playground/app.js`,
// `/playground/app.css`, `/playground/vendor/<file>` (vendor.ts), `/playground/api/{send,stop,vote,reset,history}` and the SSE stream of a
// conversation's writes, `/playground/events?conversation=ID`. It spends the operator's API key,
// so by default only loopback clients get an answer.

const MAX_BODY = 64 * 1024;
const HISTORY_LIMIT = 100;
/** A comment line on each open stream this often, so proxies and browsers keep it open. */
const KEEPALIVE_MS = 15_000;

export interface PlaygroundHttpOptions {
  connector: PlaygroundConnector;
  chat: ChatService;
  conversations: ConversationStore;
  botFor: (place: { platform: string; workspaceId?: string; channelId: string }) => string;
  /** Answer clients that are not on this machine too (PLAYGROUND=on). */
  allowRemote: boolean;
  logger: Logger;
}

export interface PlaygroundRoutes {
  page: RequestListener;
  api: RequestListener;
  /** Ends every open event stream (shutdown). */
  close(): void;
}

export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const a = address.startsWith('::ffff:') ? address.slice(7) : address;
  return a === '::1' || /^127\./.test(a);
}

export function createPlaygroundRoutes(opts: PlaygroundHttpOptions): PlaygroundRoutes {
  const { connector, logger } = opts;
  const streams = new Set<ServerResponse>();

  const allowed = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (opts.allowRemote || isLoopback(req.socket.remoteAddress)) return true;
    sendJson(res, 403, {
      error: 'forbidden',
      detail: 'the playground answers this machine only (PLAYGROUND=on opens it)',
    });
    return false;
  };

  const page: RequestListener = (req, res) => {
    if (!allowed(req, res)) return;
    sendText(res, 200, 'text/html; charset=utf-8', PAGE_HTML);
  };

  /**
   * The conversation as the page shows it (history-merge.ts). `gone`: the upstream no longer
   * knows the conversation (a restarted emulator, an expired session); the page says so.
   */
  const history = async (conversation: string): Promise<unknown> => {
    const place = connector.placeOf(conversation);
    const rec = await opts.conversations.get(place);
    const asks = connector.asked(conversation);
    const views = connector.live(conversation);
    if (rec?.upstreamId === undefined) return { messages: mergeHistory(undefined, asks, views) };
    try {
      const pageOf = await opts.chat.history(rec.botId || opts.botFor(place), rec.upstreamId, { limit: HISTORY_LIMIT });
      const upstream = pageOf.messages.map((m) => ({ id: m.id, role: m.role, text: m.content }));
      return { messages: mergeHistory(upstream, asks, views) };
    } catch (err) {
      if (!(err instanceof ChatError) || err.kind !== 'conversation_gone') throw err;
      return { messages: mergeHistory(undefined, asks, views), gone: true };
    }
  };

  const events = (req: IncomingMessage, res: ServerResponse, conversation: string): void => {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(': playground\n\n');
    const send = (v: ReplyView) => res.write(`event: reply\ndata: ${JSON.stringify(v)}\n\n`);
    const unsubscribe = connector.subscribe(conversation, send);
    const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
    keepalive.unref();
    streams.add(res);
    const end = () => {
      clearInterval(keepalive);
      unsubscribe();
      streams.delete(res);
    };
    req.on('close', end);
    res.on('close', end);
  };

  const api: RequestListener = async (req, res) => {
    if (!allowed(req, res)) return;
    const url = new URL(req.url ?? '/', 'http://playground.local');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    try {
      if (method === 'GET' && path === '/playground/app.js') {
        sendText(res, 200, 'text/javascript; charset=utf-8', PAGE_JS);
        return;
      }
      if (method === 'GET' && path === '/playground/app.css') {
        sendText(res, 200, 'text/css; charset=utf-8', PAGE_CSS);
        return;
      }
      if ((method === 'GET' || method === 'HEAD') && path.startsWith('/playground/vendor/')) {
        if (!serveVendor(req, res, path.slice('/playground/vendor/'.length)))
          sendJson(res, 404, { error: 'not_found' });
        return;
      }
      if (method === 'GET' && (path === '/playground/events' || path === '/playground/api/history')) {
        const conversation = url.searchParams.get('conversation') ?? '';
        if (!CONVERSATION_ID.test(conversation)) {
          sendJson(res, 400, { error: 'bad_conversation' });
          return;
        }
        if (path === '/playground/events') events(req, res, conversation);
        else sendJson(res, 200, await history(conversation));
        return;
      }
      if (method !== 'POST') {
        sendJson(res, 404, { error: 'not_found' });
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
          if (!CONVERSATION_ID.test(conversation) || text.trim() === '') {
            sendJson(res, 400, { error: 'bad_message' });
            return;
          }
          sendJson(res, 202, connector.send(conversation, text));
          return;
        }
        case '/playground/api/stop':
          sendJson(res, 200, { result: await connector.stopReply(replyKey) });
          return;
        case '/playground/api/vote': {
          const vote = body.vote === 'up' || body.vote === 'down' ? body.vote : undefined;
          if (vote === undefined) {
            sendJson(res, 400, { error: 'bad_vote' });
            return;
          }
          sendJson(res, 200, { result: await connector.voteReply(replyKey, vote) });
          return;
        }
        case '/playground/api/reset':
          if (!CONVERSATION_ID.test(conversation)) {
            sendJson(res, 400, { error: 'bad_conversation' });
            return;
          }
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
    api,
    close() {
      for (const s of streams) s.end();
      streams.clear();
    },
  };
}

function sendText(res: ServerResponse, status: number, type: string, text: string): void {
  res.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    // Nothing from outside the machine: scripts, styles and requests go to this origin only.
    'content-security-policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
  });
  res.end(text);
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
