// The store tells the core it cannot read or write (read-only, deleted, locked, full) by an error
// with this code; the core recognises it without importing the store.

export const STORE_UNAVAILABLE = 'STORE_UNAVAILABLE';

export function isStoreUnavailable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === STORE_UNAVAILABLE;
}

/**
 * The store's own view of whether it can be used (the store's health monitor): the core waits on
 * it to try again what an outage held (intake/store-hold.ts).
 */
export interface StoreHealthSource {
  health(): { ok: boolean; reason?: string };
  onHealthChange(listener: (health: { ok: boolean; reason?: string }) => void): () => void;
}
