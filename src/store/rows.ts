import type { ConversationRecord, FeedbackReply, FeedbackVote, Lesson, Place, Platform, Vote } from '../core/ports.js';
import { type InFlightRecord, type InFlightState, placeKey, readReplyTarget } from '../core/ports.js';
import type { LiveLease, OwnedInFlightRecord } from './ports.js';

// The rows both backends keep (one table layout: migrations/ and migrations/postgres/) and how
// they map to the core's records. Neither backend owns this module: each writes its own SQL and
// shares the mapping, so a column changes in one place.

// ---- conversations ----

export interface ConversationRow {
  platform: string;
  workspace_id: string | null;
  channel_id: string;
  thread_id: string | null;
  bot_id: string;
  /** The chat service's flavor (ChatService.flavor). */
  flavor: string;
  upstream_id: string | null;
  created_at: number;
  last_used_at: number;
}

export function conversationFromRow(r: ConversationRow): ConversationRecord {
  const place: Place = { platform: r.platform as Place['platform'], channelId: r.channel_id };
  if (r.workspace_id !== null) place.workspaceId = r.workspace_id;
  if (r.thread_id !== null) place.threadId = r.thread_id;
  return {
    place,
    botId: r.bot_id,
    flavor: r.flavor,
    upstreamId: r.upstream_id ?? undefined,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
  };
}

/** The named parameters of a conversation row, keyed by `place` (which `next.place` must match). */
export function conversationParams(place: Place, next: ConversationRecord) {
  const key = placeKey(place);
  if (placeKey(next.place) !== key)
    throw new Error(`replaceIfUnchanged: record for ${placeKey(next.place)}, not ${key}`);
  return {
    key,
    platform: place.platform,
    workspaceId: place.workspaceId ?? null,
    channelId: place.channelId,
    threadId: place.threadId ?? null,
    botId: next.botId,
    flavor: next.flavor,
    upstreamId: next.upstreamId ?? null,
    createdAt: next.createdAt,
    lastUsedAt: next.lastUsedAt,
  };
}

// ---- replies in flight ----

export interface InFlightRow {
  id: number;
  platform: string;
  event_id: string;
  target: string;
  message_ids: string;
  last_text: string;
  upstream_id: string | null;
  state: InFlightState;
  started_at: number;
  updated_at: number;
  /** The replica streaming the reply ('' for rows written before migration 0004). */
  owner: string;
}

export function inFlightFromRow(r: InFlightRow): InFlightRecord {
  return {
    id: r.id,
    platform: r.platform as Platform,
    eventId: r.event_id,
    target: readReplyTarget(JSON.parse(r.target)),
    messageIds: JSON.parse(r.message_ids) as string[],
    lastText: r.last_text,
    upstreamId: r.upstream_id ?? undefined,
    state: r.state,
    startedAt: r.started_at,
    updatedAt: r.updated_at,
  };
}

export const ownedFromRow = (r: InFlightRow): OwnedInFlightRecord => ({ ...inFlightFromRow(r), owner: r.owner });

// ---- place leases (SQLite migrations 0004 and 0006; PostgreSQL 0001 and 0002) ----

export interface LeaseRow {
  place_key: string;
  holder: string;
  reply_key: string | null;
  asker_id: string | null;
}

export const liveLease = (r: LeaseRow): LiveLease => ({
  placeKey: r.place_key,
  holder: r.holder,
  replyKey: r.reply_key ?? undefined,
  askerId: r.asker_id ?? undefined,
});

// ---- feedback (FEEDBACK): the replies that showed the buttons, and each user's last vote ----

export interface ReplyRow {
  reply_key: string;
  platform: string;
  place_key: string;
  upstream_id: string | null;
  message_id: string;
  finished_at: number;
}

export interface VoteRow {
  reply_key: string;
  user_id: string;
  place_key: string;
  upstream_id: string | null;
  message_id: string;
  vote: Vote;
  voted_at: number;
  delivered_at: number | null;
}

export const toVote = (r: VoteRow): FeedbackVote => ({
  replyKey: r.reply_key,
  userId: r.user_id,
  placeKey: r.place_key,
  upstreamId: r.upstream_id ?? undefined,
  messageId: r.message_id,
  vote: r.vote,
  at: r.voted_at,
  deliveredAt: r.delivered_at ?? undefined,
});

export const toReply = (r: ReplyRow): FeedbackReply => ({
  replyKey: r.reply_key,
  platform: r.platform as Platform,
  placeKey: r.place_key,
  upstreamId: r.upstream_id ?? undefined,
  messageId: r.message_id,
  at: r.finished_at,
});

// ---- learned rate-limit budgets (see src/core/budget) ----

export interface BudgetRow {
  bucket_key: string;
  per_minute: number;
  burst: number;
  limited_at: number | null;
  limited_per_minute: number | null;
  updated_at: number;
}

/** A `learned_budgets` row as the scheduler reads it. */
export function budgetFromRow(r: BudgetRow): Lesson {
  const b: Lesson = { key: r.bucket_key, perMinute: r.per_minute, burst: r.burst, updatedAt: r.updated_at };
  if (r.limited_at !== null) b.limitedAt = r.limited_at;
  if (r.limited_per_minute !== null) b.limitedPerMinute = r.limited_per_minute;
  return b;
}

/** The row's columns in table order: bucket_key, per_minute, burst, limited_at, limited_per_minute, updated_at. */
export function budgetColumns(b: Lesson): [string, number, number, number | null, number | null, number] {
  return [b.key, b.perMinute, b.burst, b.limitedAt ?? null, b.limitedPerMinute ?? null, b.updatedAt];
}

/**
 * The upsert both backends run: a row replaces the stored one unless that one is newer. Replicas
 * save without waiting for each other, so saves can land out of order; the newer lesson must win.
 */
export const UPSERT_NEWER = `ON CONFLICT (bucket_key) DO UPDATE SET per_minute = excluded.per_minute, burst = excluded.burst,
       limited_at = excluded.limited_at, limited_per_minute = excluded.limited_per_minute,
       updated_at = excluded.updated_at
     WHERE learned_budgets.updated_at <= excluded.updated_at`;
