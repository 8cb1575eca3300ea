// Who may probe above a confirmed burst: a family's members share one lock (bucket-table.ts makes
// them), a bucket alone has one of its own.

/** Who may probe above the confirmed burst (a family's members share one; bucket-table.ts). */
export interface ProbeLock {
  readonly refusals: number;
  mayProbe(key: string, now: number): boolean;
  take(key: string, now: number): void;
  release(key: string): void;
  confirmed(): void;
  refused(key: string): void;
}
