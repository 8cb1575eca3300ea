import type Database from 'better-sqlite3';
import type { Platform } from '../../core/ports.js';

/** The core's EventStore, answering at once (store.ts makes it a promise). */
export function createEventRepo(db: Database.Database) {
  // INSERT OR IGNORE is atomic: of two deliveries racing, exactly one sees changes === 1.
  const insert = db.prepare('INSERT OR IGNORE INTO processed_events (platform, event_id, seen_at) VALUES (?, ?, ?)');
  const prune = db.prepare('DELETE FROM processed_events WHERE seen_at < ?');
  const find = db.prepare<[string, string], { one: number }>(
    'SELECT 1 AS one FROM processed_events WHERE platform = ? AND event_id = ?',
  );
  return {
    recordDelivery(platform: Platform, eventId: string, at: number): boolean {
      return insert.run(platform, eventId, at).changes === 1;
    },
    wasDelivered(platform: Platform, eventId: string): boolean {
      return find.get(platform, eventId) !== undefined;
    },
    prune(before: number): number {
      return prune.run(before).changes;
    },
  };
}
