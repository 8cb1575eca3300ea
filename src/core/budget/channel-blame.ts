// Which bucket a 429 in a workspace-wide bucket blames: the workspace, or the channel the write
// went to (platforms may limit a method per channel too, without saying so). Blaming the channel
// wrongly costs one more 429; blaming the workspace wrongly slows every channel. So:
//
// - only one channel wrote lately: the workspace (both fit the evidence; it is the safe one);
// - the channel already has a learned limit: the channel;
// - otherwise the channel is suspected (blocked for the Retry-After, nothing learned yet): the
//   next write of another channel decides. Accepted: the workspace had budget, so the channel is
//   limited. Refused too: the workspace is the limit.

/** How recently another channel must have had a write accepted to suspect a channel limit. */
const RECENT_MS = 10_000;
/** A suspicion nobody confirmed or refuted in this long is dropped. */
const SUSPECT_MS = 30_000;

export type Blame = 'workspace' | 'channel' | 'suspect';

interface Suspect {
  channel: string;
  at: number;
}

interface WorkspaceTrack {
  lastAccepted: Map<string, number>;
  suspect: Suspect | undefined;
}

export class ChannelBlame {
  private readonly tracks = new Map<string, WorkspaceTrack>();

  private track(workspaceKey: string): WorkspaceTrack {
    let t = this.tracks.get(workspaceKey);
    if (t === undefined) {
      t = { lastAccepted: new Map(), suspect: undefined };
      this.tracks.set(workspaceKey, t);
    }
    return t;
  }

  /**
   * A write in `channel` was accepted. Returns a suspected channel this confirms (the write went
   * to another channel and was granted after the suspicion).
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
    if (s === undefined || s.channel === channel || grantedAt < s.at) return undefined;
    t.suspect = undefined;
    return s.channel;
  }

  /** A write in `channel` met a 429 of the workspace bucket. */
  limited(workspaceKey: string, channel: string, now: number, channelLearned: boolean): Blame {
    const t = this.track(workspaceKey);
    const s = this.live(t, now);
    if (s !== undefined && s.channel !== channel) {
      t.suspect = undefined;
      return 'workspace';
    }
    let othersActive = false;
    for (const [c, at] of t.lastAccepted) if (c !== channel && now - at <= RECENT_MS) othersActive = true;
    if (!othersActive) return 'workspace';
    if (channelLearned) return 'channel';
    t.suspect = { channel, at: now };
    return 'suspect';
  }

  private live(t: WorkspaceTrack, now: number): Suspect | undefined {
    if (t.suspect !== undefined && now - t.suspect.at > SUSPECT_MS) t.suspect = undefined;
    return t.suspect;
  }

  /** Forget a workspace bucket (its runtime state was forgotten). */
  forget(workspaceKey: string): void {
    this.tracks.delete(workspaceKey);
  }
}
