import { FakeRateLimiter } from './rate-limiter.js';
import type { RateModel } from './rate-models.js';

export interface FloorReply {
  channel: string;
  /** When the upstream finished this reply (epoch ms). */
  endAt: number;
  /** Messages the reply needs (a long reply is split over several posts); default 1. */
  posts?: number;
}

/**
 * The earliest time (epoch ms) at which every reply could be final under `model`, for the best
 * client that can exist without updates: it posts each reply's message(s) once, when the reply
 * ends, through the model's chat.postMessage rules (per channel in every preset). A bridge that
 * also shows progress with updates cannot be final earlier than this, so (final time - floor)
 * is what its scheduling costs.
 *
 * How: an event-driven simulation of the model's own limiter with a virtual clock that starts
 * at `start` (buckets start as the model starts them: token buckets full, windows empty). At
 * each event time, replies that have ended are taken in end order (first come, first served
 * per channel) and each posts as long as the limiter accepts; a refused post waits. The next
 * event is the earliest of the next reply end and the earliest time a waiting post would be
 * accepted (the limiter's exact wait in ms). Replies ending before `start` post from `start`.
 * Greedy is optimal here: under every model an accepted call never makes a later call wait
 * longer than it would had the call been made later, and posts are interchangeable, so posting
 * as soon as allowed minimises the last post time. Returns `start` for no replies.
 */
export function floorMs(model: RateModel, replies: readonly FloorReply[], start: number): number {
  let t = start;
  const post = 'chat.postMessage';
  const limiter = new FakeRateLimiter({ name: model.name, rules: { [post]: model.rules[post] ?? [] } }, () => t);
  const left = replies
    .map((r) => ({ channel: r.channel, endAt: r.endAt, posts: Math.max(1, r.posts ?? 1) }))
    .sort((a, b) => a.endAt - b.endAt);
  let final = start;
  while (left.length > 0) {
    let next = Number.POSITIVE_INFINITY;
    for (const r of left) {
      if (r.endAt > t) {
        next = Math.min(next, r.endAt);
        break; // sorted by end: the rest end later
      }
      while (r.posts > 0) {
        const wait = limiter.waitMs(post, 'T', r.channel);
        if (wait > 0) {
          next = Math.min(next, t + wait);
          break;
        }
        limiter.decide(post, 'T', r.channel);
        r.posts -= 1;
        if (r.posts === 0) final = Math.max(final, t);
      }
    }
    for (let i = left.length - 1; i >= 0; i--) if (left[i]?.posts === 0) left.splice(i, 1);
    if (left.length > 0) t = next;
  }
  return final;
}
