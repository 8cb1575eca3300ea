import type Database from 'better-sqlite3';

// Playground conversations' owners on SQLite (migration 0011): insert-if-absent, then read the
// row, so the first browser to write in a conversation keeps it.

/** How long a row outlives its conversation mapping (a first message still on its way counts). */
export const PLAYGROUND_OWNER_GRACE_MS = 24 * 3600_000;

export function createPlaygroundOwnerRepo(db: Database.Database) {
  const get = db.prepare<[string], { owner: string }>('SELECT owner FROM playground_owners WHERE conversation = ?');
  const insert = db.prepare(
    'INSERT INTO playground_owners (conversation, owner, claimed_at) VALUES (?, ?, ?) ON CONFLICT (conversation) DO NOTHING',
  );
  const claim = db.transaction((conversation: string, owner: string, at: number): string => {
    insert.run(conversation, owner, at);
    return get.get(conversation)?.owner ?? owner;
  });
  // Owners of conversations whose mapping is gone (pruned by CONVERSATION_RETENTION_DAYS, reset).
  const prune = db.prepare(
    `DELETE FROM playground_owners WHERE claimed_at < ? AND NOT EXISTS
       (SELECT 1 FROM conversations c WHERE c.place_key = 'playground:-:' || playground_owners.conversation || ':-')`,
  );
  return {
    ownerOf(conversation: string): string | undefined {
      return get.get(conversation)?.owner;
    },
    claim(conversation: string, owner: string, at: number): string {
      return claim.immediate(conversation, owner, at);
    },
    /** Housekeeping as of `now`: see PLAYGROUND_OWNER_GRACE_MS. */
    prune(now: number): number {
      return prune.run(now - PLAYGROUND_OWNER_GRACE_MS).changes;
    },
  };
}
