import type { Logger } from 'pino';
import type { BridgeMetrics } from '../metrics-port.js';
import type { Clock, Connector, InFlightRecord, InFlightStore } from '../ports.js';
import { fenceCloser } from './fences.js';
import { MESSAGES } from '../user-messages.js';

// Start-up repair: replies the last run left streaming (a crash) are edited to end with the
// interruption note, or told in their place when nothing was shown yet.

/**
 * What start-up repair did with the replies the last run left open. Kept apart so a connector
 * without postInterrupted does not pass for a repair the user never saw.
 */
export interface RecoveryReport {
  /** The platform was edited or told: the user sees the reply was interrupted. */
  repaired: number;
  /** Nothing was shown and the connector cannot post a note: the user was not told. */
  unrepairable: number;
  /** The edit or the note threw. */
  failed: number;
}

export interface RecoveryDeps {
  inflight: InFlightStore;
  metrics: BridgeMetrics;
  logger: Logger;
  clock: Clock;
}

/**
 * Repairs `records` (default: every reply still open, which at start-up of a lone bridge are all
 * the last run's). With several replicas the caller passes the replies it claimed from gone ones.
 */
export async function recoverInterrupted(
  deps: RecoveryDeps,
  connectors: Connector[],
  records?: readonly InFlightRecord[],
): Promise<RecoveryReport> {
  const { inflight, metrics, logger, clock } = deps;
  const report: RecoveryReport = { repaired: 0, unrepairable: 0, failed: 0 };
  for (const rec of records ?? (await inflight.listOpen())) {
    const connector = connectors.find((c) => c.platform === rec.platform);
    if (connector === undefined) continue; // that platform is not running now: leave it for later
    const last = rec.messageIds.at(-1);
    if (last === undefined) {
      // Nothing was shown, and the event is deduplicated: without a word here the user's
      // message would stay unanswered for good.
      if (connector.postInterrupted === undefined) {
        report.unrepairable++;
        logger.warn({ platform: rec.platform }, 'cannot tell of an interrupted reply: the connector has no way');
      } else {
        try {
          await connector.postInterrupted(rec.target, MESSAGES.interruptedBeforeText);
          metrics.replyInterrupted(rec.platform);
          report.repaired++;
        } catch (err) {
          failed(report, logger, rec, err, 'could not tell of an interrupted reply');
        }
      }
      await inflight.finish(rec.id, 'interrupted', clock.now());
      continue;
    }
    try {
      await connector.markInterrupted(
        rec.target,
        last,
        rec.lastText + fenceCloser(rec.lastText) + MESSAGES.interrupted,
      );
      await inflight.finish(rec.id, 'interrupted', clock.now());
      metrics.replyInterrupted(rec.platform);
      report.repaired++;
    } catch (err) {
      failed(report, logger, rec, err, 'could not mark an interrupted reply');
      await inflight.finish(rec.id, 'failed', clock.now());
    }
  }
  if (report.unrepairable + report.failed > 0) {
    logger.warn(report, 'some replies left open by the last run could not be marked interrupted');
  } else if (report.repaired > 0) {
    logger.info(report, 'marked replies left open by the last run as interrupted');
  }
  return report;
}

/** A repair that threw: counted, and said at warn with the platform and the error. */
function failed(report: RecoveryReport, logger: Logger, rec: InFlightRecord, err: unknown, what: string): void {
  report.failed++;
  logger.warn({ platform: rec.platform, err: err instanceof Error ? err.message : String(err) }, what);
}
