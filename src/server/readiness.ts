// Readiness: the database is open and writable, and every configured connector is connected
// (CONTRACT.md 3).
// A check's value is `true` when it passes; `false` or a string (the reason) when it does not.

export type CheckValue = boolean | string;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, CheckValue>;
}

export type Readiness = () => ReadinessReport;

/** Something whose readiness is a function call, e.g. a Connector (`isReady`). */
export type ReadinessCheck = () => CheckValue;

/** Something that watches its own health, such as the store (`Store.health()`). */
export interface HealthSource {
  health(): { ok: boolean; reason?: string };
}

/**
 * A check reading a HealthSource: `true`, or its reason (e.g. "not writable: attempt to write a
 * readonly database"). Cheap: the source keeps its health up to date; /readyz does no I/O.
 */
export function healthCheck(source: HealthSource): ReadinessCheck {
  return () => {
    const h = source.health();
    return h.ok || (h.reason ?? false);
  };
}

/**
 * Builds the readiness function from named checks. A check that throws counts as not ready,
 * with the error message as the reason, so /readyz never fails with a 500.
 */
export function readinessFrom(checks: Record<string, ReadinessCheck>): Readiness {
  return () => {
    const values: Record<string, CheckValue> = {};
    for (const [name, check] of Object.entries(checks)) {
      try {
        values[name] = check();
      } catch (err) {
        values[name] = err instanceof Error ? err.message : String(err);
      }
    }
    return { ready: Object.values(values).every((v) => v === true), checks: values };
  };
}

/** Names of the checks that do not pass, in order. */
export function notReady(checks: Record<string, CheckValue>): string[] {
  return Object.entries(checks)
    .filter(([, v]) => v !== true)
    .map(([k]) => k);
}
