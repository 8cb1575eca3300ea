import { AsyncLocalStorage } from 'node:async_hooks';
import { App, type ReceiverEvent } from '@slack/bolt';

// Bolt acks an Events API event before any listener runs. With several replicas that is too
// early: Slack (and a test's sender) may deliver the place's next message to another replica the
// moment the ack leaves, and that one could take the place before this message is in its line.
// So an event's ack waits until what its listeners start is recorded (ackAfter: the message has
// joined its place's line), then leaves as before. Messages whose events were acked one after
// another are answered in that order, whichever replicas took them. Nothing else changes: a
// listener that fails still has its event acked, and a slow record is waited for only so long.
// Requests a listener acks (interactions, commands) that no listener took are acked when Bolt is
// done with them: every signed request is answered well within Slack's 3 s.

/** Longest an ack waits for what its listeners recorded; Slack retries after 3 s without one. */
export const ACK_HOLD_MAX_MS = 1500;
/** Listeners run right after Bolt's ack; past this, the ack leaves with the holds seen so far. */
const LISTENERS_MAX_MS = 250;

const holds = new AsyncLocalStorage<Array<Promise<unknown>>>();

/** Called from an event's listener: its ack leaves only once `recorded` settles. */
export function ackAfter(recorded: Promise<unknown>): void {
  holds.getStore()?.push(recorded);
}

const within = (ms: number, p: Promise<unknown>) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    void p.then(
      () => (clearTimeout(timer), resolve()),
      () => (clearTimeout(timer), resolve()),
    );
  });

/**
 * Longest an ack waits for Bolt to ask for it. Bolt asks right after authorize, before any
 * listener, or never: a body it cannot type, an authorize that throws before it, a
 * `function_executed` no listener acks. The ack then leaves anyway.
 */
const ACK_ASK_MAX_MS = 1000;

/** An event_callback whose `event` is an object with a type; anything else is malformed. */
export function hasRoutableEvent(body: Record<string, unknown>): boolean {
  const ev = body.event;
  return (
    typeof ev === 'object' && ev !== null && !Array.isArray(ev) && typeof (ev as { type?: unknown }).type === 'string'
  );
}

/** Bolt's App, with Events API acks sent once what the event's listeners started is recorded. */
export class OrderedAckApp extends App {
  override async processEvent(event: ReceiverEvent): Promise<void> {
    // Interactions and commands hand ack to their listeners; only events are acked by Bolt itself.
    if (event.body.type !== 'event_callback') return this.processRequest(event);
    // Nothing to route (the HTTP receiver answers 400 before this; Socket Mode acks the envelope).
    if (!hasRoutableEvent(event.body)) return event.ack();
    const recorded: Array<Promise<unknown>> = [];
    let ackAsked = false;
    let asked: () => void = () => {};
    const askedNow = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const processed = holds.run(recorded, () =>
      super.processEvent({
        ...event,
        ack: () => {
          ackAsked = true;
          asked();
          return Promise.resolve();
        },
      }),
    );
    try {
      // Bolt asks before any listener runs, or never: a processing that ends without asking is
      // not waited past its end, and an ask that does not come is not waited for long.
      await within(ACK_ASK_MAX_MS, Promise.race([askedNow, processed]));
      if (ackAsked) {
        await within(LISTENERS_MAX_MS, processed);
        await within(ACK_HOLD_MAX_MS, Promise.allSettled(recorded));
      }
    } finally {
      await event.ack();
    }
    await processed;
  }

  /**
   * An interaction, shortcut, slash command or options request: its listener acks it. Bolt runs
   * every listener before it returns; one that no listener took (or none acked) is acked then, at
   * once, instead of waiting for the receiver's 404 after Slack's 3 s (the user sees an error).
   */
  private async processRequest(event: ReceiverEvent): Promise<void> {
    let acked = false;
    await super.processEvent({
      ...event,
      ack: (response?: unknown) => {
        acked = true;
        return event.ack(response);
      },
    });
    if (!acked) await event.ack();
  }
}
