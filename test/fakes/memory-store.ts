import {
  type ConversationRecord,
  type ConversationStore,
  type EventStore,
  type ExpectedUpstreamId,
  expectedOf,
  type FeedbackReply,
  type FeedbackStore,
  type FeedbackVote,
  type InFlightRecord,
  type InFlightState,
  type InFlightStore,
  type Place,
  type Platform,
  type PlaygroundOwnerStore,
  placeKey,
  type ReplyTarget,
} from '../../src/core/ports.js';

// In-memory implementations of the persistence ports, for tests that run the core without SQLite.
// They follow the same contracts as src/store (copies in and out, so a caller
// mutating a record cannot change what is stored).

export class MemoryConversationStore implements ConversationStore {
  private readonly map = new Map<string, ConversationRecord>();

  async get(place: Place): Promise<ConversationRecord | undefined> {
    const rec = this.map.get(placeKey(place));
    return rec === undefined ? undefined : { ...rec, place: { ...rec.place } };
  }

  async put(rec: ConversationRecord): Promise<void> {
    this.map.set(placeKey(rec.place), { ...rec, place: { ...rec.place } });
  }

  async touch(place: Place, at: number): Promise<void> {
    const rec = this.map.get(placeKey(place));
    if (rec !== undefined) rec.lastUsedAt = at;
  }

  async delete(place: Place): Promise<void> {
    this.map.delete(placeKey(place));
  }

  async replaceIfUnchanged(place: Place, expected: ExpectedUpstreamId, next: ConversationRecord): Promise<boolean> {
    const cur = this.map.get(placeKey(place));
    if (expectedOf(cur) !== expected) return false;
    await this.put(next);
    return true;
  }

  get size(): number {
    return this.map.size;
  }
}

export class MemoryEventStore implements EventStore {
  private readonly seen = new Map<string, number>();

  async recordDelivery(platform: Platform, eventId: string, at: number): Promise<boolean> {
    const key = `${platform}:${eventId}`;
    if (this.seen.has(key)) return false;
    this.seen.set(key, at);
    return true;
  }

  async wasDelivered(platform: Platform, eventId: string): Promise<boolean> {
    return this.seen.has(`${platform}:${eventId}`);
  }

  async prune(before: number): Promise<number> {
    let n = 0;
    for (const [k, at] of this.seen) {
      if (at < before) {
        this.seen.delete(k);
        n++;
      }
    }
    return n;
  }
}

export class MemoryInFlightStore implements InFlightStore {
  private readonly records = new Map<number, InFlightRecord>();
  private nextId = 1;

  async begin(rec: {
    platform: Platform;
    eventId: string;
    target: ReplyTarget;
    upstreamId?: string;
    at: number;
  }): Promise<number> {
    const id = this.nextId++;
    this.records.set(id, {
      id,
      platform: rec.platform,
      eventId: rec.eventId,
      target: structuredClone(rec.target),
      messageIds: [],
      lastText: '',
      upstreamId: rec.upstreamId,
      state: 'streaming',
      startedAt: rec.at,
      updatedAt: rec.at,
    });
    return id;
  }

  async progress(id: number, messageIds: string[], lastText: string, at: number): Promise<void> {
    const r = this.records.get(id);
    if (r === undefined) return;
    r.messageIds = [...messageIds];
    r.lastText = lastText;
    r.updatedAt = at;
  }

  async setUpstreamId(id: number, upstreamId: string): Promise<void> {
    const r = this.records.get(id);
    if (r !== undefined) r.upstreamId = upstreamId;
  }

  async finish(id: number, state: Exclude<InFlightState, 'streaming'>, at: number): Promise<void> {
    const r = this.records.get(id);
    if (r === undefined) return;
    r.state = state;
    r.updatedAt = at;
  }

  async listOpen(platform?: Platform): Promise<InFlightRecord[]> {
    return [...this.records.values()]
      .filter((r) => r.state === 'streaming' && (platform === undefined || r.platform === platform))
      .map((r) => structuredClone(r));
  }

  async prune(before: number): Promise<number> {
    let n = 0;
    for (const [id, r] of this.records) {
      if (r.state !== 'streaming' && r.updatedAt < before) {
        this.records.delete(id);
        n++;
      }
    }
    return n;
  }

  /** Test helper: any record by id, whatever its state. */
  getRecord(id: number): InFlightRecord | undefined {
    const r = this.records.get(id);
    return r === undefined ? undefined : structuredClone(r);
  }

  all(): InFlightRecord[] {
    return [...this.records.values()].map((r) => structuredClone(r));
  }
}

export interface MemoryStore {
  conversations: MemoryConversationStore;
  events: MemoryEventStore;
  inflight: MemoryInFlightStore;
  close(): void;
}

/** Votes in memory (FeedbackStore), same contract as src/store/sqlite/reply-repo.ts. */
export class MemoryFeedbackStore implements FeedbackStore {
  private readonly replies = new Map<string, FeedbackReply>();
  private readonly votes = new Map<string, FeedbackVote>();

  async rememberReply(reply: FeedbackReply): Promise<void> {
    this.replies.set(reply.replyKey, { ...reply });
  }

  async reply(replyKey: string): Promise<FeedbackReply | undefined> {
    const r = this.replies.get(replyKey);
    return r === undefined ? undefined : { ...r };
  }

  async vote(v: Omit<FeedbackVote, 'deliveredAt'>): Promise<void> {
    this.votes.set(`${v.replyKey}\u0000${v.userId}`, { ...v, deliveredAt: undefined });
  }

  async pending(upstreamId: string, userId: string): Promise<FeedbackVote[]> {
    return (await this.forConversation(upstreamId)).filter((v) => v.userId === userId && v.deliveredAt === undefined);
  }

  async delivered(votes: { replyKey: string; userId: string }[], at: number): Promise<void> {
    for (const v of votes) {
      const rec = this.votes.get(`${v.replyKey}\u0000${v.userId}`);
      if (rec !== undefined && rec.deliveredAt === undefined) rec.deliveredAt = at;
    }
  }

  async forConversation(upstreamId: string): Promise<FeedbackVote[]> {
    return [...this.votes.values()]
      .filter((v) => v.upstreamId === upstreamId)
      .sort((a, b) => a.at - b.at)
      .map((v) => ({ ...v }));
  }

  async prune(before: number): Promise<number> {
    let n = 0;
    for (const [k, r] of this.replies) {
      if (r.at < before) {
        this.replies.delete(k);
        n++;
      }
    }
    return n;
  }
}

export function openMemoryStore(): MemoryStore {
  return {
    conversations: new MemoryConversationStore(),
    events: new MemoryEventStore(),
    inflight: new MemoryInFlightStore(),
    close: () => {},
  };
}

/** Who owns each playground conversation: the first claim wins, as in the stores. */
export class MemoryPlaygroundOwnerStore implements PlaygroundOwnerStore {
  private readonly owners = new Map<string, string>();

  ownerOf(conversation: string): Promise<string | undefined> {
    return Promise.resolve(this.owners.get(conversation));
  }

  claim(conversation: string, owner: string): Promise<string> {
    const held = this.owners.get(conversation);
    if (held !== undefined) return Promise.resolve(held);
    this.owners.set(conversation, owner);
    return Promise.resolve(owner);
  }
}
