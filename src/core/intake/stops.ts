import type { LiveReplies } from './live-replies.js';
import { type Place, placeKey, type StopResult } from '../ports.js';
import type { RemoteStops } from './relay-types.js';

// Where a Stop goes: the reply it names is stopped here if this replica writes it, else at the
// replica that does (RemoteStops, with several replicas). Only the asker may stop a reply (the
// rule is LiveReplies.stop's, applied where the reply runs).

export interface Stops {
  /** A Stop control on a reply (its key). */
  reply(replyKey: string, userId: string): Promise<StopResult>;
  /** A Stop that names the place: the reply being written there, if any. */
  place(place: Place, userId: string): Promise<StopResult>;
}

export function stopsOf(live: LiveReplies, remote: RemoteStops | undefined): Stops {
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
