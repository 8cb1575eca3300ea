import type { PlaygroundOwnerStore } from '../../core/ports.js';
import type { Query } from './query.js';

// Playground conversations' owners on PostgreSQL (migration postgres/0008), as
// sqlite/playground-owner-repo.ts keeps them. The claim is one statement: of two replicas
// inserting for one conversation, the second waits on the first's row, does nothing, and reads
// the first's owner.

/** How long a row outlives its conversation mapping (SQLite's PLAYGROUND_OWNER_GRACE_MS). */
const GRACE_MS = 24 * 3600_000;

export function pgPlaygroundOwners(q: Query): PlaygroundOwnerStore & { prune(now: number): Promise<number> } {
  return {
    async ownerOf(conversation) {
      const r = await q<{ owner: string }>('SELECT owner FROM playground_owners WHERE conversation = $1', [
        conversation,
      ]);
      return r.rows[0]?.owner;
    },
    async claim(conversation, owner, at) {
      const inserted = await q<{ owner: string }>(
        `INSERT INTO playground_owners (conversation, owner, claimed_at) VALUES ($1, $2, $3)
         ON CONFLICT (conversation) DO NOTHING RETURNING owner`,
        [conversation, owner, at],
      );
      if (inserted.rows[0] !== undefined) return inserted.rows[0].owner;
      const r = await q<{ owner: string }>('SELECT owner FROM playground_owners WHERE conversation = $1', [
        conversation,
      ]);
      return r.rows[0]?.owner ?? owner;
    },
    async prune(now) {
      const r = await q(
        `DELETE FROM playground_owners o WHERE o.claimed_at < $1 AND NOT EXISTS
           (SELECT 1 FROM conversations c WHERE c.place_key = 'playground:-:' || o.conversation || ':-')`,
        [now - GRACE_MS],
      );
      return r.rowCount ?? 0;
    },
  };
}
