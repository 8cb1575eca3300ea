import type { BucketRef } from '../ports.js';

// The buckets one write counts in: each BucketRef it names, and for a workspace-wide bucket that
// names its channel, the implicit per-channel bucket (unlimited until a 429 blames that channel).

export interface Slot {
  key: string;
  ref: BucketRef;
  shadow: boolean;
}

export function shadowKey(key: string, channelKey: string): string {
  return `${key}#${channelKey}`;
}

export function expand(buckets: readonly BucketRef[]): Slot[] {
  const slots: Slot[] = [];
  for (const ref of buckets) {
    slots.push({ key: ref.key, ref, shadow: false });
    if (ref.channelKey !== undefined) slots.push({ key: shadowKey(ref.key, ref.channelKey), ref, shadow: true });
  }
  return slots;
}

export function sharesBucket(a: readonly Slot[], b: readonly Slot[]): boolean {
  return a.some((x) => b.some((y) => y.key === x.key));
}
