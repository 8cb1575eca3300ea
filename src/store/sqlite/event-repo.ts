import type Database from 'better-sqlite3';
import type { EventStore, Immediate } from '../../core/ports.js';

export function createEventRepo(db: Database.Database): Immediate<EventStore> {
  // INSERT OR IGNORE is atomic: of two deliveries racing, exactly one sees changes === 1.
  const insert = db.prepare('INSERT OR IGNORE INTO processed_events (platform, event_id, seen_at) VALUES (?, ?, ?)');
  const prune = db.prepare('DELETE FROM processed_events WHERE seen_at < ?');
  const find = db.prepare<[string, string], { one: number }>(
    'SELECT 1 AS one FROM processed_events WHERE platform = ? AND event_id = ?',
  );
  return {
    markSeen(platform, eventId, at) {
      return insert.run(platform, eventId, at).changes === 1;
    },
    wasSeen(platform, eventId) {
      return find.get(platform, eventId) !== undefined;
    },
    prune(before) {
      return prune.run(before).changes;
    },
  };
}
