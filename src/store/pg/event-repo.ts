import type { AsyncStore } from '../ports.js';
import { ASYNC_COMMIT, changed, type Query } from './query.js';

// Platform events' deliveries (what tells a duplicate delivery) on PostgreSQL, as
// sqlite/event-repo.ts keeps them. Of two deliveries racing on two replicas, ON CONFLICT DO NOTHING lets exactly one insert.

export function pgEvents(q: Query): AsyncStore['events'] {
  return {
    async wasDelivered(platform, eventId) {
      const r = await q('SELECT 1 FROM processed_events WHERE platform = $1 AND event_id = $2', [platform, eventId]);
      return r.rows.length > 0;
    },
    async recordDelivery(platform, eventId, at) {
      return changed(
        await q(
          `INSERT INTO processed_events (platform, event_id, seen_at) SELECT $1, $2, $3 FROM ${ASYNC_COMMIT}
           ON CONFLICT DO NOTHING`,
          [platform, eventId, at],
        ),
      );
    },
    async prune(before) {
      return (await q('DELETE FROM processed_events WHERE seen_at < $1', [before])).rowCount ?? 0;
    },
  };
}
