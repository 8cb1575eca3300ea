import { type Place, placeKey, type StopResult } from '../ports.js';

// The replies being written now, by reply key and by place: who asked, and how to stop them.
// A user's Stop (a button or `stop` typed in the place) and a vote that arrives while the reply's
// record is still being written both look here. (A user's Stop ends one reply; the process's
// shutdown is the relay's drain, a different thing.)

export interface LiveReply {
  replyKey: string;
  askerId: string;
  placeKey: string;
  /** Aborted by Stop; the reply ends with the text so far and the note. */
  stop: AbortController;
  /** Resolves when the reply has ended (its feedback record written). */
  done: Promise<void>;
}

export class LiveReplies {
  private readonly byKey = new Map<string, LiveReply>();
  private readonly byPlace = new Map<string, LiveReply>();

  /** Registers a reply; `end()` must be called when it has ended. */
  begin(replyKey: string, askerId: string, placeKey: string): { entry: LiveReply; end: () => void } {
    let markDone: () => void = () => {};
    const entry: LiveReply = {
      replyKey,
      askerId,
      placeKey,
      stop: new AbortController(),
      done: new Promise<void>((resolve) => (markDone = resolve)),
    };
    this.byKey.set(replyKey, entry);
    this.byPlace.set(placeKey, entry);
    const end = () => {
      this.byKey.delete(replyKey);
      if (this.byPlace.get(placeKey) === entry) this.byPlace.delete(placeKey);
      markDone();
    };
    return { entry, end };
  }

  get(replyKey: string): LiveReply | undefined {
    return this.byKey.get(replyKey);
  }

  inPlace(placeKey: string): LiveReply | undefined {
    return this.byPlace.get(placeKey);
  }

  /** Only the asker can stop a reply; a Stop after it finished finds nothing. */
  stop(replyKey: string, userId: string): StopResult {
    const entry = this.byKey.get(replyKey);
    if (entry === undefined) return 'not_found';
    if (entry.askerId !== userId) return 'not_owner';
    if (!entry.stop.signal.aborted) entry.stop.abort();
    return 'stopped';
  }
}

/** Stops for replies other replicas write (a click or `stop` may reach any replica). */
export interface RemoteStops {
  /** This replica, holding the place's lease, started `replyKey` for `askerId` there. */
  started(placeKey: string, replyKey: string, askerId: string): void;
  /** Stop, at the replica writing it, the reply with this key or the one in this place. */
  stop(by: { replyKey: string } | { placeKey: string }, userId: string): Promise<StopResult>;
  /** Stops other replicas pass to this one arrive here. */
  onStop(handler: (replyKey: string, userId: string) => void): void;
}

/** Where a user's Stop goes (userStops). */
export interface UserStops {
  /** A Stop control on a reply (its key). */
  reply(replyKey: string, userId: string): Promise<StopResult>;
  /** A Stop that names the place: the reply being written there, if any. */
  place(place: Place, userId: string): Promise<StopResult>;
}

/**
 * A user's Stop: the reply it names is stopped here if this replica writes it, else at the
 * replica that does (RemoteStops, with several replicas). Only the asker may stop a reply (the
 * rule is LiveReplies.stop's, applied where the reply runs).
 */
export function userStops(live: LiveReplies, remote: RemoteStops | undefined): UserStops {
  return {
    async reply(replyKey, userId) {
      const here = live.stop(replyKey, userId);
      if (here !== 'not_found' || remote === undefined) return here;
      return remote.stop({ replyKey }, userId);
    },
    async place(place, userId) {
      const reply = live.inPlace(placeKey(place));
      if (reply !== undefined) return live.stop(reply.replyKey, userId);
      return remote === undefined ? 'not_found' : remote.stop({ placeKey: placeKey(place) }, userId);
    },
  };
}
