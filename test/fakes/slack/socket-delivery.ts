// Which of an app's open Socket Mode connections gets the next envelope. Slack sends each one to
// a single connection and documents no order; the fake spreads them round-robin, so that with
// several replicas every one of them gets events, and lets a test name the connection or keep a
// retry away from the connection that had the first delivery.

export interface DeliveryChoice {
  /** This connection (its number), which must be open; default: the next one round-robin. */
  connection?: number;
  /** Round-robin over the open connections but this one (a retry reaching another connection). */
  avoid?: number;
}

export interface Candidate {
  /** 1, 2, … in the order the connections opened. */
  id: number;
  /** Asked to refresh (Slack's `disconnect`): its successor should get the envelopes. */
  retiring: boolean;
}

/**
 * The connection for the next envelope among `open` (oldest first), round-robin after `last`
 * (the number of the connection that took the previous one); undefined when none fits.
 */
export function pickConnection<C extends Candidate>(
  open: readonly C[],
  last: number,
  choice: DeliveryChoice,
): C | undefined {
  if (choice.connection !== undefined) return open.find((c) => c.id === choice.connection);
  const candidates = open.filter((c) => c.id !== choice.avoid);
  const taking = candidates.filter((c) => !c.retiring);
  // A refreshed connection still gets envelopes while its successor is not open yet (a single
  // client between the `disconnect` and its reconnect): the newest of them, as before.
  const pool = taking.length > 0 ? taking : candidates.slice(-1);
  return pool.find((c) => c.id > last) ?? pool[0];
}
