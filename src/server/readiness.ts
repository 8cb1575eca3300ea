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
export type ReadinessProbe = () => CheckValue;

/** Something that watches its own health, such as the store (`Store.health()`). */
export interface HealthSource {
  health(): { ok: boolean; reason?: string };
}

/**
 * A probe reading a HealthSource: `true`, or its reason (e.g. "not writable: attempt to write a
 * readonly database"). Cheap: the source keeps its health up to date; /readyz does no I/O.
 */
export function healthProbe(source: HealthSource): ReadinessProbe {
  return () => {
    const h = source.health();
    return h.ok || (h.reason ?? false);
  };
}

/**
 * Builds the readiness function from named probes. A probe that throws counts as not ready,
 * with the error message as the reason, so /readyz never fails with a 500.
 */
export function readinessFrom(probes: Record<string, ReadinessProbe>): Readiness {
  return () => {
    const checks: Record<string, CheckValue> = {};
    for (const [name, probe] of Object.entries(probes)) {
      try {
        checks[name] = probe();
      } catch (err) {
        checks[name] = err instanceof Error ? err.message : String(err);
      }
    }
    return { ready: Object.values(checks).every((v) => v === true), checks };
  };
}

/** Names of the checks that do not pass, in order. */
export function notReady(checks: Record<string, CheckValue>): string[] {
  return Object.entries(checks)
    .filter(([, v]) => v !== true)
    .map(([k]) => k);
}
