import type { BridgeMetrics } from '../metrics-port.js';
import type { Clock, EventStore, HandleResult, IncomingMessage } from '../ports.js';

// The dedup record: an event is taken once, by whichever replica records it first.

export interface DedupDeps {
  events: EventStore;
  metrics: BridgeMetrics;
  clock: Clock;
  notice(msg: IncomingMessage, text: string): Promise<unknown>;
}

export function dedupOf(d: DedupDeps) {
  return {
    /** Records the event; false (counted) when it was already taken. */
    async seen(msg: IncomingMessage): Promise<boolean> {
      const fresh = await d.events.markSeen(msg.place.platform, msg.eventId, d.clock.now());
      if (!fresh) d.metrics.dedupHit(msg.place.platform);
      return fresh;
    },

    /**
     * A refusal that leaves the event unrecorded (a retry may be answered, by another replica
     * say): the notice, unless the event was already taken, whose retry gets no word.
     */
    async refuseUnseen(msg: IncomingMessage, text: string, status: HandleResult['status']): Promise<HandleResult> {
      const known = await Promise.resolve(d.events.wasSeen(msg.place.platform, msg.eventId)).catch(() => false);
      if (known) {
        d.metrics.dedupHit(msg.place.platform);
        return { status: 'duplicate' };
      }
      await d.notice(msg, text);
      return { status };
    },
  };
}
