import type Database from 'better-sqlite3';
import {
  type ConversationRecord,
  type ConversationStore,
  type Immediate,
  type Place,
  placeKey,
} from '../core/ports.js';

export interface Row {
  platform: string;
  workspace_id: string | null;
  channel_id: string;
  thread_id: string | null;
  bot_id: string;
  /** The chat service's flavor (ChatService.flavor), kept in the `form` column. */
  form: string;
  upstream_id: string | null;
  created_at: number;
  last_used_at: number;
}

export function toRecord(r: Row): ConversationRecord {
  const place: Place = { platform: r.platform as Place['platform'], channelId: r.channel_id };
  if (r.workspace_id !== null) place.workspaceId = r.workspace_id;
  if (r.thread_id !== null) place.threadId = r.thread_id;
  return {
    place,
    botId: r.bot_id,
    flavor: r.form,
    upstreamId: r.upstream_id ?? undefined,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
  };
}

export function createConversationRepo(db: Database.Database): Immediate<ConversationStore> {
  const get = db.prepare<[string], Row>('SELECT * FROM conversations WHERE place_key = ?');
  const put = db.prepare(
    `INSERT INTO conversations (place_key, platform, workspace_id, channel_id, thread_id, bot_id, form, upstream_id, created_at, last_used_at)
     VALUES (@key, @platform, @workspaceId, @channelId, @threadId, @botId, @form, @upstreamId, @createdAt, @lastUsedAt)
     ON CONFLICT (place_key) DO UPDATE SET bot_id = excluded.bot_id, form = excluded.form,
       upstream_id = excluded.upstream_id, created_at = excluded.created_at, last_used_at = excluded.last_used_at`,
  );
  const touch = db.prepare('UPDATE conversations SET last_used_at = ? WHERE place_key = ?');
  const del = db.prepare('DELETE FROM conversations WHERE place_key = ?');
  return {
    get(place) {
      const row = get.get(placeKey(place));
      return row ? toRecord(row) : undefined;
    },
    put(rec) {
      put.run({
        key: placeKey(rec.place),
        platform: rec.place.platform,
        workspaceId: rec.place.workspaceId ?? null,
        channelId: rec.place.channelId,
        threadId: rec.place.threadId ?? null,
        botId: rec.botId,
        form: rec.flavor,
        upstreamId: rec.upstreamId ?? null,
        createdAt: rec.createdAt,
        lastUsedAt: rec.lastUsedAt,
      });
    },
    touch(place, at) {
      touch.run(at, placeKey(place));
    },
    delete(place) {
      del.run(placeKey(place));
    },
  };
}
