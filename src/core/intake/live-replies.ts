import type { StopResult } from '../ports.js';

// The replies being written now, by reply key and by place: who asked, and how to stop them.
// Stop (a button or `stop` typed in the place) and a vote that arrives while the reply's record
// is still being written both look here.

export interface LiveReply {
  replyKey: string;
  askerId: string;
  placeKey: string;
  /** Aborted by Stop; the reply ends with the text so far and the note. */
  stop: AbortController;
  /** Resolves when the reply's turn is over (its feedback record written). */
  done: Promise<void>;
}

export class LiveReplies {
  private readonly byKey = new Map<string, LiveReply>();
  private readonly byPlace = new Map<string, LiveReply>();

  /** Registers a reply; `end()` must be called when its turn is over. */
  begin(replyKey: string, askerId: string, placeKey: string): { entry: LiveReply; end: () => void } {
    let turnDone: () => void = () => {};
    const entry: LiveReply = {
      replyKey,
      askerId,
      placeKey,
      stop: new AbortController(),
      done: new Promise<void>((resolve) => (turnDone = resolve)),
    };
    this.byKey.set(replyKey, entry);
    this.byPlace.set(placeKey, entry);
    const end = () => {
      this.byKey.delete(replyKey);
      if (this.byPlace.get(placeKey) === entry) this.byPlace.delete(placeKey);
      turnDone();
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
