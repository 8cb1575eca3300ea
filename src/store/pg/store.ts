import type pg from 'pg';
import { type AsyncStore, BUDGET_KEEP_MS, HANDOVER_KEEP_MS } from '../ports.js';
import type { HealthMonitor } from '../health.js';
import { pgBudgets } from './budget-repo.js';
import { pgConversations } from './conversation-repo.js';
import { pgEvents } from './event-repo.js';
import { pgInstallations } from './installation-repo.js';
import { pgSchemaVersion } from './migrate.js';
import { pgOAuthStates } from './oauth-state-repo.js';
import { pgPlaygroundOwners } from './playground-owner-repo.js';
import { pgPlaygroundTurns } from './playground-turn-repo.js';
import { guardedQuery, guardedTransaction } from './query.js';
import { pgLeases, pgReplicas } from './replica-repo.js';
import { pgFeedback, pgInFlight } from './reply-repo.js';
import { pgTranscripts } from './transcript-repo.js';
import type { PgSignals } from './signals.js';

// The store port over a PostgreSQL pool, as sqlite/store.ts composes SQLite's: the repositories (a
// file per table, SQLite's names), each statement guarded by the store's health monitor
// (query.ts). Composed once at open (index.ts createPgStore).

export interface PgStoreParts {
  pool: pg.Pool;
  /** The URL without its password (index.ts describePgUrl). */
  location: string;
  /** The store's one health monitor, started: the check and every statement report to it. */
  monitor: HealthMonitor;
  signals: PgSignals;
}

/** The store port over a pool whose database is migrated (index.ts createPgStore opens it). */
export function createPgStoreOver(parts: PgStoreParts): AsyncStore {
  const { pool, location, monitor, signals } = parts;
  let open = true;
  const q = guardedQuery(pool, monitor, () => open);
  const { prune: prunePlaygroundOwners, ...playgroundOwners } = pgPlaygroundOwners(q);

  return {
    backend: 'postgres',
    location,
    conversations: pgConversations(q),
    events: pgEvents(q),
    transcripts: pgTranscripts(q),
    inflight: pgInFlight(q),
    installations: pgInstallations(q),
    replicas: pgReplicas(q),
    leases: pgLeases(q),
    budgets: pgBudgets(q),
    feedback: pgFeedback(q),
    oauthStates: pgOAuthStates(
      q,
      guardedTransaction(pool, monitor, () => open),
    ),
    playgroundOwners,
    playgroundTurns: pgPlaygroundTurns(q),
    signals,
    async housekeeping(now) {
      const handovers = await q('DELETE FROM place_handover WHERE released_at < $1', [now - HANDOVER_KEEP_MS]);
      const budgets = await q('DELETE FROM learned_budgets WHERE updated_at < $1', [now - BUDGET_KEEP_MS]);
      const playgroundOwners = await prunePlaygroundOwners(now);
      return { handovers: handovers.rowCount ?? 0, budgets: budgets.rowCount ?? 0, playgroundOwners };
    },
    schemaVersion: () => pgSchemaVersion(pool),
    isOpen: () => open,
    health: () => monitor.health(),
    check: () => monitor.check(),
    onHealthChange: (listener) => monitor.onChange(listener),
    async close() {
      if (!open) return;
      open = false;
      monitor.stop();
      await signals.close();
      await pool.end();
    },
  };
}
