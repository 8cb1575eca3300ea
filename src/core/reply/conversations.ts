import type { Logger } from 'pino';
import type { ChatService } from '../chat-port.js';
import {
  type Clock,
  type ConversationRecord,
  type ConversationStore,
  expectedOf,
  type Place,
  placeKey,
} from '../ports.js';

// Place ↔ upstream conversation. When the bridge mints ids (Form B), the id is known before any
// reply. When the upstream names conversations in its replies (capabilities.idsFromReplies, Form
// A), the mapping holds no id until a reply names it, and the next turn starts a conversation
// again. If such a stream reveals no id for a new conversation, first turns use the one-response
// endpoint (send) from then on, whose answer always carries the id.

export interface ConversationUse {
  /** The id to send; undefined for a conversation the upstream has not named yet. */
  conversationId: string | undefined;
  /** This turn starts a new upstream conversation. */
  fresh: boolean;
  /** An earlier conversation was replaced (idle or gone): the reply says context was not kept. */
  renewed: boolean;
  /** Use `send` for this turn: a new conversation, and this upstream's streams reveal no id. */
  useSend: boolean;
  /** A new conversation right after a `reset` of the place: it starts without earlier context. */
  afterReset?: boolean;
}

/** The place's conversation, already named, goes on with this turn. */
const goesOn = (conversationId: string): ConversationUse => ({
  conversationId,
  fresh: false,
  renewed: false,
  useSend: false,
});

/** Places reset in this run, until their next conversation starts (bounded). */
const MAX_RESET_MARKS = 10_000;

export interface ConversationsOptions {
  store: ConversationStore;
  chat: ChatService;
  clock: Clock;
  sessionIdleSeconds: number;
  logger: Logger;
}

export class Conversations {
  /** Learned per chat service (one per relay): its streams do not name new conversations. */
  private streamsRevealNoId = false;
  private readonly resetMarks = new Set<string>();

  constructor(private readonly o: ConversationsOptions) {}

  /** The conversation for a message to this place, renewed when idle too long. */
  async begin(place: Place, botId: string): Promise<ConversationUse> {
    const now = this.o.clock.now();
    const rec = await this.o.store.get(place);
    if (rec !== undefined && rec.botId === botId && rec.flavor === this.o.chat.flavor) {
      const idle = now - rec.lastUsedAt > this.o.sessionIdleSeconds * 1000;
      if (!idle) {
        await this.o.store.touch(place, now);
        if (rec.upstreamId !== undefined) return goesOn(rec.upstreamId);
        return this.create(place, botId, false, rec);
      }
      this.o.logger.info(
        { idleSeconds: Math.round((now - rec.lastUsedAt) / 1000) },
        'conversation idle too long; renewing',
      );
      return this.create(place, botId, rec.upstreamId !== undefined, rec);
    }
    // No mapping, or one made for another bot or chat flavor (config changed): start quietly.
    return this.create(place, botId, false, rec);
  }

  /** The upstream no longer knows the conversation: a fresh one for the same place. */
  async renew(place: Place, botId: string): Promise<ConversationUse> {
    this.o.logger.info('upstream conversation gone; renewing');
    return this.create(place, botId, true, await this.o.store.get(place));
  }

  /** A reply named its conversation (idsFromReplies). */
  async captured(place: Place, botId: string, conversationId: string): Promise<void> {
    const rec = await this.o.store.get(place);
    if (rec === undefined || rec.botId !== botId) return;
    if (rec.upstreamId === conversationId) return;
    await this.o.store.put({ ...rec, upstreamId: conversationId });
  }

  /** A stream for a new conversation ended without naming it (idsFromReplies). */
  noIdFromStream(): void {
    if (!this.streamsRevealNoId)
      this.o.logger.warn(
        'upstream streams do not reveal conversation ids; first turns will use the one-response endpoint',
      );
    this.streamsRevealNoId = true;
  }

  async reset(place: Place): Promise<void> {
    await this.o.store.delete(place);
    const key = placeKey(place);
    this.resetMarks.delete(key);
    this.resetMarks.add(key);
    if (this.resetMarks.size > MAX_RESET_MARKS) {
      const oldest = this.resetMarks.values().next().value;
      if (oldest !== undefined) this.resetMarks.delete(oldest);
    }
  }

  /**
   * A new conversation for the place, replacing `read` (the mapping as read, if any) only if no
   * other replica replaced it meanwhile; if one did, its new conversation is this turn's too.
   */
  private async create(
    place: Place,
    botId: string,
    renewed: boolean,
    read: ConversationRecord | undefined,
  ): Promise<ConversationUse> {
    const now = this.o.clock.now();
    const minted = this.o.chat.mintConversationId();
    const next: ConversationRecord = {
      place,
      botId,
      flavor: this.o.chat.flavor,
      upstreamId: minted,
      createdAt: now,
      lastUsedAt: now,
    };
    const { store } = this.o;
    if (store.replaceIfUnchanged === undefined) await store.put(next);
    else if (!(await store.replaceIfUnchanged(place, expectedOf(read), next))) {
      const winner = await store.get(place);
      if (winner !== undefined && winner.upstreamId !== undefined && winner.botId === botId) {
        this.o.logger.info('another replica started the conversation first; using it');
        return goesOn(winner.upstreamId);
      }
      await store.put(next); // the winner's mapping is unusable (no id yet, another bot): ours
    }
    const afterReset = this.resetMarks.delete(placeKey(place)) && !renewed;
    return {
      conversationId: minted,
      fresh: true,
      renewed,
      useSend: this.o.chat.capabilities.idsFromReplies && this.streamsRevealNoId,
      ...(afterReset ? { afterReset } : {}),
    };
  }
}
