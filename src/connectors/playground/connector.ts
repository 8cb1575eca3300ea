import { randomUUID } from 'node:crypto';
import type {
  BucketRef,
  Connector,
  IncomingMessage,
  MessageHandler,
  Place,
  PostResult,
  ReplySink,
  ReplyTarget,
  StopResult,
  Vote,
  VoteResult,
  WriteOptions,
  WriteResult,
} from '../../core/ports.js';
import type { Logger } from '../../logger.js';
import type { AskView, ReplyState, ReplyView } from './history-merge.js';

// The playground: a web chat served by the bridge itself. A conversation of the page is a place
// (`playground:-:<conversation>:-`), kept in the store like a Slack thread or a Discord channel.
// Its replies go through the same relay, scheduler, writer and splitting; the sink records each
// post and edit and pushes it to the page (SSE, see http.ts), so the page shows what a platform
// would get, edit by edit.

/** Characters in one message of a reply: longer replies continue in a new one, as on a platform. */
export const PLAYGROUND_MAX_CHARS = 4000;
/** The one user of the page: Stop and thumbs check the asker, who is always this user. */
export const PLAYGROUND_USER = 'playground-user';

export type { ReplyState, ReplyView } from './history-merge.js';

export type ReplyListener = (view: ReplyView) => void;

export interface PlaygroundConnector extends Connector {
  /** A message typed in the page. Resolves once the relay took it (the reply streams on). */
  send(conversation: string, text: string): { eventId: string };
  stopReply(replyKey: string): Promise<StopResult>;
  voteReply(replyKey: string, vote: Vote): Promise<VoteResult>;
  resetConversation(conversation: string): Promise<void>;
  /** The replies of a conversation still kept in memory (streaming ones first of all). */
  live(conversation: string): ReplyView[];
  /** The messages typed in a conversation still kept in memory, oldest first (see history-merge.ts). */
  asked(conversation: string): AskView[];
  /** Follow a conversation's writes; returns the unsubscribe function. */
  subscribe(conversation: string, listener: ReplyListener): () => void;
  placeOf(conversation: string): Place;
}

export interface PlaygroundOptions {
  logger: Logger;
  now?: () => number;
  /** Writes per second allowed in one conversation: generous, the page is local. */
  writesPerSecond?: number;
}

/** Conversation ids the page makes: short, URL-safe. */
export const CONVERSATION_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** Replies kept per conversation for a page that reconnects (older ones are read from upstream). */
const KEPT_PER_CONVERSATION = 50;

export function createPlaygroundConnector(opts: PlaygroundOptions): PlaygroundConnector {
  const { logger } = opts;
  const now = opts.now ?? Date.now;
  const perSecond = opts.writesPerSecond ?? 20;
  let handler: MessageHandler | undefined;
  let stopping = false;
  const replies = new Map<string, ReplyView[]>();
  /** Messages typed in the page: a reload shows them even when the upstream never got them. */
  const asks = new Map<string, AskView[]>();
  const listeners = new Map<string, Set<ReplyListener>>();
  /** Replies whose Stop was pressed: their final write shows `stopped`. */
  const stopRequested = new Set<string>();

  const placeOf = (conversation: string): Place => ({ platform: 'playground', channelId: conversation });

  const publish = (view: ReplyView): void => {
    let list = replies.get(view.conversation);
    if (list === undefined) replies.set(view.conversation, (list = []));
    if (!list.includes(view)) {
      list.push(view);
      if (list.length > KEPT_PER_CONVERSATION) list.shift();
    }
    for (const l of listeners.get(view.conversation) ?? []) {
      try {
        l({ ...view });
      } catch (err) {
        logger.warn({ err }, 'playground: a listener failed');
      }
    }
  };

  const find = (conversation: string, id: string): ReplyView | undefined =>
    replies.get(conversation)?.find((r) => r.id === id);

  class PlaygroundSink implements ReplySink {
    readonly maxChars = PLAYGROUND_MAX_CHARS;
    readonly needsFinalWrite = true;
    readonly target: ReplyTarget;
    readonly views: ReplyView[] = [];
    private readonly bucket: BucketRef;

    constructor(
      private readonly conversation: string,
      private readonly eventId: string,
    ) {
      this.target = { place: placeOf(conversation) };
      this.bucket = { key: `playground:${conversation}`, limit: perSecond, windowMs: 1000, perPlace: true };
    }

    buckets(): BucketRef[] {
      return [this.bucket];
    }
    async showWorking(): Promise<void> {}
    async clearWorking(): Promise<void> {}

    async post(text: string, o: WriteOptions): Promise<PostResult> {
      const view: ReplyView = {
        id: `${this.eventId}.${o.part}`,
        conversation: this.conversation,
        text,
        state: 'streaming',
        feedback: false,
        writes: 0,
      };
      this.views.push(view);
      this.apply(view, text, o);
      return { messageId: view.id };
    }

    async edit(messageId: string, text: string, o: WriteOptions): Promise<WriteResult> {
      const view = this.views.find((v) => v.id === messageId) ?? find(this.conversation, messageId);
      if (view === undefined) return {};
      this.apply(view, text, o);
      return {};
    }

    private apply(view: ReplyView, text: string, o: WriteOptions): void {
      view.text = text;
      view.writes += 1;
      if (o.replyKey !== undefined) view.replyKey = o.replyKey;
      if (o.final) {
        const stopped = o.replyKey !== undefined && stopRequested.has(o.replyKey);
        view.state = stopped ? 'stopped' : 'final';
        view.feedback = o.last === true && o.feedback === true;
      } else {
        view.state = 'streaming';
      }
      publish(view);
    }

    /** After the relay is done with the message: a failed or cut reply says so. */
    settle(state: ReplyState | undefined): void {
      const last = this.views.at(-1);
      if (last === undefined || state === undefined) return;
      if (last.state === 'stopped' && state !== 'error') return;
      last.state = state;
      last.feedback = state === 'final' ? last.feedback : false;
      publish(last);
    }
  }

  return {
    platform: 'playground',

    async start(h: MessageHandler): Promise<void> {
      handler = h;
    },

    async stop(): Promise<void> {
      stopping = true;
    },

    isReady(): boolean {
      return handler !== undefined && !stopping;
    },

    async markInterrupted(target: ReplyTarget, messageId: string, text: string): Promise<void> {
      const conversation = target.place.channelId;
      const view = find(conversation, messageId) ?? {
        id: messageId,
        conversation,
        text,
        state: 'interrupted' as const,
        feedback: false,
        writes: 0,
      };
      view.text = text;
      view.state = 'interrupted';
      view.writes += 1;
      publish(view);
    },

    async postInterrupted(target: ReplyTarget, text: string): Promise<void> {
      publish({
        id: `interrupted-${randomUUID()}`,
        conversation: target.place.channelId,
        text,
        state: 'interrupted',
        feedback: false,
        writes: 1,
      });
    },

    send(conversation: string, text: string): { eventId: string } {
      const h = handler;
      if (h === undefined || stopping) throw new Error('the playground is not running');
      const eventId = randomUUID();
      const place = placeOf(conversation);
      const sink = new PlaygroundSink(conversation, eventId);
      const receivedAt = now();
      const arrival = h.arrive?.(place, eventId, receivedAt);
      const msg: IncomingMessage = {
        eventId,
        place,
        origin: place,
        messageId: eventId,
        userId: PLAYGROUND_USER,
        userName: 'you',
        text: text.trim(),
        isDm: true,
        mentionsBot: true,
        isFromBot: false,
        receivedAt,
        sink,
        ...(arrival !== undefined ? { arrival } : {}),
      };
      let kept = asks.get(conversation);
      if (kept === undefined) asks.set(conversation, (kept = []));
      kept.push({ eventId, text: msg.text });
      if (kept.length > KEPT_PER_CONVERSATION) kept.shift();
      logger.info({ eventId, conversation }, 'playground: message');
      void h.handle(msg).then(
        (r) => {
          if (r.status === 'failed') sink.settle('error');
          else if (r.status === 'interrupted') sink.settle('interrupted');
          else if (r.status === 'stopped') sink.settle('stopped');
        },
        (err: unknown) => {
          logger.error(
            { eventId, err: err instanceof Error ? err.message : String(err) },
            'playground: handler failed',
          );
          sink.settle('error');
        },
      );
      return { eventId };
    },

    async stopReply(replyKey: string): Promise<StopResult> {
      if (handler?.stop === undefined) return 'not_found';
      stopRequested.add(replyKey);
      const result = await handler.stop(replyKey, PLAYGROUND_USER);
      if (result !== 'stopped') stopRequested.delete(replyKey);
      return result;
    },

    async voteReply(replyKey: string, vote: Vote): Promise<VoteResult> {
      if (handler?.vote === undefined) return 'not_found';
      return handler.vote(replyKey, PLAYGROUND_USER, vote);
    },

    async resetConversation(conversation: string): Promise<void> {
      if (handler === undefined) throw new Error('the playground is not running');
      await handler.reset(placeOf(conversation));
      replies.delete(conversation);
      asks.delete(conversation);
    },

    live(conversation: string): ReplyView[] {
      return (replies.get(conversation) ?? []).map((v) => ({ ...v }));
    },

    asked(conversation: string): AskView[] {
      return (asks.get(conversation) ?? []).map((a) => ({ ...a }));
    },

    subscribe(conversation: string, listener: ReplyListener): () => void {
      let set = listeners.get(conversation);
      if (set === undefined) listeners.set(conversation, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(conversation);
      };
    },

    placeOf,
  };
}
