import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/fakes/manual-clock.js';
import type { BucketRef } from '../../core/ports.js';
import { RateLimitScheduler } from '../../core/budget/scheduler.js';
import { sqliteBudgetRows } from './budget-repo.js';
import { openStore, type SqliteStore } from './index.js';

let dir: string;
const opened: SqliteStore[] = [];
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bridge-budgets-'));
});
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  rmSync(dir, { recursive: true, force: true });
});
const open = (path: string) => {
  const s = openStore(path);
  opened.push(s);
  return s;
};

const UPDATE: BucketRef = { key: 'slack:T1:update', limit: 50, windowMs: 60_000 };

describe('learned budget repo', () => {
  it('keeps a learned budget across a restart of the process (file reopened)', async () => {
    const path = join(dir, 'bridge.db');
    const clock = new ManualClock(Date.now());
    const a = open(path);
    const s1 = new RateLimitScheduler({ clock, store: a.budgets });
    for (let i = 0; i < 3; i++) (await s1.acquire([UPDATE], 'final')).done({ ok: true });
    (await s1.acquire([UPDATE], 'final')).done({ ok: false, rateLimited: { retryAfterMs: 2000 } });
    const learned = s1.budget(UPDATE.key)?.perMinute as number;
    expect(learned).toBeLessThan(44); // shrunk from the default (44.8 per minute)
    s1.close();
    await a.close();

    const b = open(path);
    const s2 = new RateLimitScheduler({ clock, store: b.budgets });
    await s2.restore();
    (await s2.acquire([UPDATE], 'final')).done({ ok: true });
    expect(s2.budget(UPDATE.key)?.perMinute).toBeCloseTo(learned);
    expect(s2.budget(UPDATE.key)?.learned).toBe(true);
  });

  it('upserts one row per bucket and drops lessons older than the maximum age', async () => {
    const s = open(join(dir, 'bridge.db'));
    let now = 1_000_000;
    const repo = sqliteBudgetRows(s.db, { maxAgeMs: 1000, now: () => now });
    repo.save({ key: 'a', perMinute: 10, burst: 2, updatedAt: now });
    repo.save({ key: 'a', perMinute: 12, burst: 3, limitedAt: now, limitedPerMinute: 40, updatedAt: now });
    repo.save({ key: 'b', perMinute: 5, burst: 1, updatedAt: now - 5000 });
    expect(repo.load()).toEqual([
      { key: 'a', perMinute: 12, burst: 3, limitedAt: now, limitedPerMinute: 40, updatedAt: now },
    ]);
    now += 2000;
    expect(repo.load()).toEqual([]);
  });
});
