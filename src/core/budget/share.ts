// Several replicas share one Slack workspace or one Discord bot, and the platform counts their
// writes together. Each replica therefore spends a share of every bucket: 1 / the live replicas,
// rebalanced whenever the caller (the heartbeat) sees the count change. The shares add up to the
// whole bucket, so the replicas together never exceed it, without asking each other per write.
// The cost: a replica that is busy while the others idle gets only its share.

/** The share of each bucket one of `liveReplicas` replicas spends (at least one replica: this). */
export function shareOf(liveReplicas: number): number {
  return 1 / Math.max(1, Math.floor(liveReplicas));
}

/** A share must be in (0, 1]. */
export function checkShare(fraction: number): number {
  if (!(fraction > 0 && fraction <= 1)) throw new RangeError(`a budget share is in (0, 1], not ${fraction}`);
  return fraction;
}
