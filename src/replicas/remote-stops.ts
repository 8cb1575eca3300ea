import type { Logger } from 'pino';
import type { StopResult } from '../core/ports.js';
import type { RemoteStops } from '../core/intake/relay.js';
import type { PlaceLeases, StoreSignals } from '../store/ports.js';

// A Stop for a reply another replica writes. The replica holding a place records in its lease
// which reply it writes there and who asked (PlaceLeases.describe); any replica can then check a
// click or a `stop` against it (only the asker may stop) and pass it on as a signal, which the
// holder applies to its live reply. A stop that reaches the holder after the reply ended does
// nothing there, as it would in one process.

const CHANNEL = 'bridge_stop';

export interface RemoteStopsOptions {
  leases: PlaceLeases;
  signals: StoreSignals;
  replicaId: string;
  logger: Logger;
}

interface StopSignal {
  to: string;
  replyKey: string;
  userId: string;
}

export function createRemoteStops(o: RemoteStopsOptions): RemoteStops {
  const warn = (what: string) => (err: unknown) =>
    o.logger.warn({ err: err instanceof Error ? err.message : String(err) }, what);
  return {
    started(placeKey, replyKey, askerId) {
      void o.leases.describe(placeKey, o.replicaId, replyKey, askerId).catch(warn('could not describe a place lease'));
    },

    async stop(by, userId): Promise<StopResult> {
      const lease = await o.leases.findReply(by);
      if (lease === undefined || lease.replyKey === undefined || lease.holder === o.replicaId) return 'not_found';
      if (lease.askerId !== userId) return 'not_owner';
      const signal: StopSignal = { to: lease.holder, replyKey: lease.replyKey, userId };
      await o.signals.publish(CHANNEL, JSON.stringify(signal));
      o.logger.info({ holder: lease.holder }, 'stop passed to the replica writing the reply');
      return 'stopped';
    },

    onStop(handler) {
      o.signals.subscribe(CHANNEL, (payload) => {
        let signal: StopSignal;
        try {
          signal = JSON.parse(payload) as StopSignal;
        } catch {
          return;
        }
        if (signal.to !== o.replicaId || typeof signal.replyKey !== 'string' || typeof signal.userId !== 'string')
          return;
        handler(signal.replyKey, signal.userId);
      });
    },
  };
}
