import type { LiveLease } from './async-port.js';

// A place lease as both backends store it (migrations 0004 and 0006; PostgreSQL 0001 and 0002).
/** A place_leases row (both backends). */
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
