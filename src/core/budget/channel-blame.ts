// Which bucket a 429 in a workspace-wide bucket blames: the workspace, or the channel the write
// went to (platforms may limit a method per channel too, without saying so). Blaming the channel
// wrongly costs one more 429; blaming the workspace wrongly slows every channel. So:
//
// - only one channel wrote lately: the workspace (both fit the evidence; it is the safe one);
// - the channel already has a learned limit: the channel;
// - otherwise the channel is suspected (blocked for the Retry-After, nothing learned yet): the
//   next write of another channel within the Retry-After decides (the workspace sends one write
//   at a time meanwhile; Slack rounds the Retry-After up to whole seconds, so only the part that
//   is sure counts). Accepted: the workspace had budget, so the channel is limited. Another
//   429 first, or no decision: the workspace is the limit;
// - a channel suspected before, undecided, and refused again: both learn a limit. Either may be
//   the cause, and blaming only one of them would leave the other to refuse a third time.

/** How recently another channel must have had a write accepted to suspect a channel limit. */
const RECENT_MS = 10_000;
/** A suspicion that expired undecided makes the next 429 within this long the workspace's. */
const UNDECIDED_MS = 60_000;
/** How long the workspace bucket sends one write at a time after a suspicion (or until decided). */
export const PROBE_MS = UNDECIDED_MS;
/** A channel suspected and left undecided is remembered this long (a stationary limit's horizon). */
const SUSPECTED_MEMORY_MS = 10 * 60_000;

export type Blame = 'workspace' | 'channel' | 'both' | 'suspect';

/**
 * Slack's Retry-After is whole seconds, rounded up: the workspace bucket may have had budget again
 * up to this much before it ran out.
 */
const RETRY_AFTER_ROUNDING_MS = 1000;

interface Suspect {
  channel: string;
  at: number;
  /** The 429's Retry-After ran out: the suspicion is undecided from then on. */
  until: number;
  /**
   * Were the workspace bucket empty, nothing would pass before then: the Retry-After less its
   * rounding. Only a write granted before it is evidence (one granted later may have had the
   * token the workspace refilled meanwhile).
   */
  proofUntil: number;
}

interface WorkspaceTrack {
  lastAccepted: Map<string, number>;
  suspect: Suspect | undefined;
  /** When a suspicion last expired without a decision. */
  undecidedAt: number;
  /** Channels suspected and not confirmed since, by when (pruned after SUSPECTED_MEMORY_MS). */
  suspected: Map<string, number>;
}

export class ChannelBlame {
  private readonly tracks = new Map<string, WorkspaceTrack>();

  private track(workspaceKey: string): WorkspaceTrack {
    let t = this.tracks.get(workspaceKey);
    if (t === undefined) {
      t = {
        lastAccepted: new Map(),
        suspect: undefined,
        undecidedAt: Number.NEGATIVE_INFINITY,
        suspected: new Map(),
      };
      this.tracks.set(workspaceKey, t);
    }
    return t;
  }

  /**
   * A write in `channel` was accepted. Returns a suspected channel this confirms: the write went
   * to another channel, granted after the 429 and before the shortest wait its Retry-After allows
   * ran out (an empty workspace bucket would have refused it; after that it may have refilled).
   */
  accepted(workspaceKey: string, channel: string, now: number, grantedAt: number): string | undefined {
    const t = this.track(workspaceKey);
    t.lastAccepted.delete(channel); // re-insert: the map stays ordered by time (cheap pruning)
    t.lastAccepted.set(channel, now);
    for (const [c, at] of t.lastAccepted) {
      if (now - at <= RECENT_MS) break;
      t.lastAccepted.delete(c);
    }
    const s = this.live(t, now);
    if (s === undefined || s.channel === channel || grantedAt < s.at || grantedAt >= s.proofUntil) return undefined;
    t.suspect = undefined;
    t.suspected.delete(s.channel);
    return s.channel;
  }

  /** A write in `channel` met a 429 of the workspace bucket, to be retried after `retryAfterMs`. */
  limited(workspaceKey: string, channel: string, now: number, retryAfterMs: number, channelLearned: boolean): Blame {
    const t = this.track(workspaceKey);
    const s = this.live(t, now);
    for (const [c, at] of t.suspected) {
      if (now - at <= SUSPECTED_MEMORY_MS) break; // ordered by time
      t.suspected.delete(c);
    }
    const again = !channelLearned && t.suspected.has(channel);
    if (s !== undefined || now - t.undecidedAt < UNDECIDED_MS) {
      // Refused again before another channel showed the workspace had budget: the workspace
      // is the safe blame (and the channel too, when it is the one refused before).
      t.suspect = undefined;
      t.undecidedAt = Number.NEGATIVE_INFINITY;
      return again ? 'both' : 'workspace';
    }
    if (again) return 'both';
    if (!this.othersSince(t, channel, now - RECENT_MS)) return 'workspace';
    if (channelLearned) return 'channel';
    t.suspected.delete(channel); // re-insert: the map stays ordered by time
    t.suspected.set(channel, now);
    t.suspect = {
      channel,
      at: now,
      until: now + retryAfterMs,
      proofUntil: now + Math.max(0, retryAfterMs - RETRY_AFTER_ROUNDING_MS),
    };
    return 'suspect';
  }

  private othersSince(t: WorkspaceTrack, channel: string, since: number): boolean {
    for (const [c, at] of t.lastAccepted) if (c !== channel && at >= since) return true;
    return false;
  }

  private live(t: WorkspaceTrack, now: number): Suspect | undefined {
    if (t.suspect !== undefined && now >= t.suspect.until) {
      t.undecidedAt = now;
      t.suspect = undefined;
    }
    return t.suspect;
  }

  /** Forget a workspace bucket (its runtime state was forgotten). */
  forget(workspaceKey: string): void {
    this.tracks.delete(workspaceKey);
  }
}
