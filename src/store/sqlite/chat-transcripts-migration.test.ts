import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { loadMigrations } from '../migrate.js';
import { migrate } from './migrate.js';

// Migration 0011 rebuilds `conversations` without the CHECK that allowed only the flavors a and
// b: a database made by an older release keeps its mappings, and takes the OpenAI forms' flavors.

describe('migration 0011 (chat transcripts)', () => {
  it('keeps the mappings of an older database and accepts every flavor', () => {
    const db = new Database(':memory:');
    const all = loadMigrations();
    const before = all.filter((m) => m.version < 11);
    migrate(db, before);
    const insert = db.prepare(
      `INSERT INTO conversations (place_key, platform, workspace_id, channel_id, thread_id, bot_id, flavor, upstream_id, created_at, last_used_at)
       VALUES (?, 'slack', 'T1', 'C1', NULL, 'bot', ?, 'up-1', 1, 2)`,
    );
    insert.run('slack:T1:C1:-', 'b');
    expect(() => insert.run('slack:T1:C2:-', 'responses')).toThrow(/CHECK/);
    migrate(db, all);
    expect(db.prepare('SELECT place_key, flavor, upstream_id, last_used_at FROM conversations').all()).toEqual([
      { place_key: 'slack:T1:C1:-', flavor: 'b', upstream_id: 'up-1', last_used_at: 2 },
    ]);
    insert.run('slack:T1:C2:-', 'responses');
    insert.run('slack:T1:C3:-', 'chat-completions');
    const indexes = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'conversations'")
      .all();
    expect(indexes).toContainEqual({ name: 'conversations_last_used_at' });
    db.close();
  });
});
