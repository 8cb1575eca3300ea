import { randomUUID } from 'node:crypto';
import type {
  BucketRef,
  Connector,
  IncomingMessage,
  MessageHandler,
  Place,
  PostResult,
  RefusalChannel,
  ReplySink,
  ReplyTarget,
  StopResult,
  Vote,
  VoteResult,
  WriteOptions,
  WriteResult,
} from '../../core/ports.js';
import type { AgentStep } from '../../core/chat-port.js';
import type { Logger } from '../../logger.js';
import { type PageFile, pageFile, type TurnListener, TurnEvents } from './turn-events.js';
import type { AskView, ReplyListener, ReplyState, ReplyView } from './history-merge.js';
import {
  type ClaimResult,
  type ConversationEntry,
  ConversationTable,
  MAX_CONVERSATIONS,
} from './conversation-table.js';

// The playground: a web chat served by the bridge itself. A conversation of the page is a place
// (`playground:-:<conversation>:-`), kept in the store like a Slack thread or a Discord channel.
// Its replies go through the same relay, scheduler, writer and splitting; the sink records each
// post and edit and pushes it to the page (SSE, see http.ts), so the page shows what a platform
// would get, edit by edit.

/** Characters in one message of a reply: longer replies continue in a new one, as on a platform. */
export const PLAYGROUND_MAX_CHARS = 4000;
/** The name a browser's messages carry (each browser is a user of its own: see guard.ts). */
export const PLAYGROUND_USER_NAME = 'you';

export type { ReplyListener, ReplyState, ReplyView } from './history-merge.js';

export interface PlaygroundConnector extends Connector {
  /**
   * `user` may use `conversation` (the store's owner `stored`, else the first browser to use one
   * since start, keeps it), or why not: call before any other method that names a conversation.
   */
  claim(conversation: string, user: string, stored?: string): ClaimResult;
  /**
   * A message typed in the page by `user`. Returns once the relay has it (the reply streams on).
   * `retryOf`: the turn whose failed reply this one replaces (Retry): that turn leaves the history.
   */
  send(conversation: string, text: string, user: string, bot?: string, retryOf?: string): { eventId: string };
  /** Turns of the conversation the bridge is not done with (their eventIds): a reload shows them as typing. */
  underway(conversation: string): string[];
  /** The bot the conversation's page picked (one of the options' `bots`), if any. */
  botOf(conversation: string): string | undefined;
  stopReply(replyKey: string, user: string): Promise<StopResult>;
  /** Stop whatever reply `user`'s turn in `conversation` writes, also before its first word. */
  stopConversation(conversation: string, user: string): Promise<StopResult>;
  voteReply(replyKey: string, user: string, vote: Vote): Promise<VoteResult>;
  resetConversation(conversation: string): Promise<void>;
  /** The replies of a conversation still kept in memory (streaming ones first of all). */
  live(conversation: string): ReplyView[];
  /** The messages typed in a conversation still kept in memory, oldest first (see history-merge.ts). */
  asked(conversation: string): AskView[];
  /** Follow a conversation's writes; returns the unsubscribe function. */
  subscribe(conversation: string, listener: ReplyListener): () => void;
  /** Follow a conversation's turns: working/done, steps, sources, files (turn-events.ts). */
  subscribeTurns(conversation: string, listener: TurnListener): () => void;
  placeOf(conversation: string): Place;
}

export interface PlaygroundOptions {
  logger: Logger;
  now?: () => number;
  /** Writes per second allowed in one conversation: generous, the page is local. */
  writesPerSecond?: number;
  /** Bots a page may pick (a picker shows when there are several). */
  bots?: readonly string[];
  /** Conversations kept in memory (least recently used forgotten first). Default 500. */
  maxConversations?: number;
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
  const table = new ConversationTable(opts.maxConversations ?? MAX_CONVERSATIONS);
  /** Replies whose Stop was pressed: their final write shows `stopped`. */
  const stopRequested = new Set<string>();
  /** Turns not done yet, by conversation (entries leave when their turn ends). */
  const unfinished = new Map<string, Set<string>>();
  /** The bot each conversation's page picked; bounded like the conversations kept. */
  const picked = new Map<string, string>();
  const turns = new TurnEvents((err) => logger.warn({ err }, 'playground: a turn listener failed'));

  const placeOf = (conversation: string): Place => ({ platform: 'playground', channelId: conversation });

  const publish = (view: ReplyView): void => {
    const entry = table.ensure(view.conversation);
    const list = entry.replies;
    if (!list.includes(view)) {
      list.push(view);
      if (list.length > KEPT_PER_CONVERSATION) list.shift();
    }
    for (const l of [...entry.listeners]) {
      try {
        l({ ...view });
      } catch (err) {
        logger.warn({ err }, 'playground: a listener failed');
      }
    }
  };

  /** A retried turn leaves the history: its message is marked replaced, its reply's messages go. */
  const replace = (entry: ConversationEntry, eventId: string): void => {
    const ask = entry.asks.find((a) => a.eventId === eventId);
    if (ask === undefined) return;
    ask.replaced = true;
    entry.replies = entry.replies.filter((v) => !v.id.startsWith(`${eventId}.`));
  };

  const find = (conversation: string, id: string): ReplyView | undefined =>
    table.get(conversation)?.replies.find((r) => r.id === id);

  class PlaygroundSink implements ReplySink {
    readonly maxChars = PLAYGROUND_MAX_CHARS;
    readonly needsFinalWrite = true;
    readonly target: ReplyTarget;
    readonly views: ReplyView[] = [];
    /**
     * Refusals (slow down, busy) go to this conversation's page, every time: its browser is the
     * only one that sees it, so none is held back as a public notice would be.
     */
    readonly refusal: RefusalChannel;
    private readonly bucket: BucketRef;

    constructor(
      private readonly conversation: string,
      private readonly eventId: string,
    ) {
      this.target = { place: placeOf(conversation) };
      this.bucket = { key: `playground:${conversation}`, limit: perSecond, windowMs: 1000, perPlace: true };
      this.refusal = {
        private: true,
        buckets: [this.bucket],
        send: async (text) => {
          publish({
            id: `notice-${this.eventId}`,
            conversation: this.conversation,
            text,
            state: 'final',
            feedback: false,
            writes: 1,
            notice: true,
          });
          return {};
        },
      };
    }

    buckets(): BucketRef[] {
      return [this.bucket];
    }
    async showWorking(): Promise<void> {
      turns.emit(this.conversation, { kind: 'turn', eventId: this.eventId, state: 'working' });
    }
    async clearWorking(): Promise<void> {}

    // An agent's work (issue 36). The page draws the steps itself (a line under the reply) and
    // offers every file (a link, or a download of the bytes); the sources come in the final text,
    // as the core writes them for every platform.
    readonly showsSteps = true;
    readonly showsFile = (): boolean => true;

    /** The running step before anything is shown (the typing indicator names it). */
    async showStep(step: AgentStep | undefined): Promise<void> {
      this.steps(step === undefined ? [] : [step]);
    }

    /** The reply's steps so far (each by id, its latest state): `[]` takes the line away. */
    private steps(steps: readonly AgentStep[]): void {
      turns.emit(this.conversation, { kind: 'step', eventId: this.eventId, steps: steps.map((st) => ({ ...st })) });
    }

    /** A file or image the assistant made: a link or a download in the page. */
    private file(file: PageFile): void {
      turns.emit(this.conversation, { kind: 'file', eventId: this.eventId, file });
    }

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
      // A final write carries no steps: the line goes away with the reply's last word.
      if (o.steps !== undefined || o.final) this.steps(o.final ? [] : (o.steps ?? []));
      if (o.last && o.files !== undefined && o.files.length > 0) {
        // Kept with the reply's last message too: a reload shows them again (history-merge.ts).
        view.files = o.files.map(pageFile);
        for (const f of view.files) this.file(f);
      }
      view.text = text;
      view.writes += 1;
      if (o.replyKey !== undefined) view.replyKey = o.replyKey;
      if (o.final) {
        // A Stop by conversation (before the first word) names no key: the reply written there is it.
        const byPlace = stopRequested.delete(`conversation:${this.conversation}`);
        const stopped = byPlace || (o.replyKey !== undefined && stopRequested.has(o.replyKey));
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

    async shutdown(): Promise<void> {
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

    claim(conversation: string, user: string, stored?: string): ClaimResult {
      return table.claim(conversation, user, stored);
    },

    send(conversation: string, text: string, user: string, bot?: string, retryOf?: string): { eventId: string } {
      const h = handler;
      if (h === undefined || stopping) throw new Error('the playground is not running');
      if (bot !== undefined && (opts.bots ?? []).length > 1 && opts.bots?.includes(bot) === true) {
        picked.delete(conversation);
        picked.set(conversation, bot);
        if (picked.size > (opts.maxConversations ?? MAX_CONVERSATIONS)) picked.delete(picked.keys().next().value ?? '');
      }
      const eventId = randomUUID();
      const place = placeOf(conversation);
      const sink = new PlaygroundSink(conversation, eventId);
      const receivedAt = now();
      const entry = table.ensure(conversation);
      entry.busy += 1;
      const arrival = h.arrive?.(place, eventId, receivedAt);
      const msg: IncomingMessage = {
        eventId,
        place,
        origin: place,
        messageId: eventId,
        userId: user,
        userName: PLAYGROUND_USER_NAME,
        text: text.trim(),
        isDm: true,
        mentionsBot: true,
        isFromBot: false,
        receivedAt,
        sink,
        ...(arrival !== undefined ? { arrival } : {}),
      };
      let mine = unfinished.get(conversation);
      if (mine === undefined) unfinished.set(conversation, (mine = new Set()));
      mine.add(eventId);
      if (retryOf !== undefined && !(unfinished.get(conversation)?.has(retryOf) ?? false)) replace(entry, retryOf);
      const kept = entry.asks;
      kept.push({ eventId, text: msg.text });
      if (kept.length > KEPT_PER_CONVERSATION) kept.shift();
      // The conversation id lets whoever reads it follow the conversation's owner: debug only.
      logger.info({ eventId }, 'playground: message');
      logger.debug({ eventId, conversation }, 'playground: message in conversation');
      void h
        .handle(msg)
        .finally(() => {
          entry.busy -= 1;
        })
        .then(
          (r) => {
            if (r.status === 'failed') sink.settle('error');
            else if (r.status === 'interrupted') sink.settle('interrupted');
            else if (r.status === 'stopped') sink.settle('stopped');
            return r.status;
          },
          (err: unknown) => {
            logger.error(
              { eventId, err: err instanceof Error ? err.message : String(err) },
              'playground: handler failed',
            );
            sink.settle('error');
            return 'failed';
          },
        )
        // After the reply's last state: the page's typing indicator and early Stop end here.
        .then((result) => {
          mine.delete(eventId);
          if (mine.size === 0 && unfinished.get(conversation) === mine) unfinished.delete(conversation);
          turns.emit(conversation, { kind: 'turn', eventId, state: 'done', result });
        });
      return { eventId };
    },

    async stopReply(replyKey: string, user: string): Promise<StopResult> {
      if (handler?.stop === undefined) return 'not_found';
      stopRequested.add(replyKey);
      const result = await handler.stop(replyKey, user);
      if (result !== 'stopped') stopRequested.delete(replyKey);
      return result;
    },

    async stopConversation(conversation: string, user: string): Promise<StopResult> {
      if (handler?.stopPlace === undefined) return 'not_found';
      const key = `conversation:${conversation}`;
      stopRequested.add(key);
      const result = await handler.stopPlace(placeOf(conversation), user);
      if (result !== 'stopped') stopRequested.delete(key);
      return result;
    },

    async voteReply(replyKey: string, user: string, vote: Vote): Promise<VoteResult> {
      if (handler?.vote === undefined) return 'not_found';
      return handler.vote(replyKey, user, vote);
    },

    async resetConversation(conversation: string): Promise<void> {
      if (handler === undefined) throw new Error('the playground is not running');
      await handler.reset(placeOf(conversation));
      const entry = table.get(conversation);
      if (entry !== undefined) {
        entry.replies = [];
        entry.asks = [];
      }
    },

    live(conversation: string): ReplyView[] {
      return (table.get(conversation)?.replies ?? []).map((v) => ({ ...v }));
    },

    asked(conversation: string): AskView[] {
      return (table.get(conversation)?.asks ?? []).map((a) => ({ ...a }));
    },

    subscribe(conversation: string, listener: ReplyListener): () => void {
      const set = table.ensure(conversation).listeners;
      set.add(listener);
      return () => set.delete(listener);
    },

    underway(conversation: string): string[] {
      return [...(unfinished.get(conversation) ?? [])];
    },

    botOf(conversation: string): string | undefined {
      return picked.get(conversation);
    },

    subscribeTurns(conversation: string, listener: TurnListener): () => void {
      return turns.subscribe(conversation, listener);
    },

    placeOf,
  };
}
