import type Database from 'better-sqlite3';
import type { EventStore, Immediate } from '../core/ports.js';

export function createEventRepo(db: Database.Database): Immediate<EventStore> {
  // INSERT OR IGNORE is atomic: of two deliveries racing, exactly one sees changes === 1.
  const insert = db.prepare('INSERT OR IGNORE INTO processed_events (platform, event_id, seen_at) VALUES (?, ?, ?)');
  const prune = db.prepare('DELETE FROM processed_events WHERE seen_at < ?');
  return {
    markSeen(platform, eventId, at) {
      return insert.run(platform, eventId, at).changes === 1;
    },
    prune(before) {
      return prune.run(before).changes;
    },
  };
}
