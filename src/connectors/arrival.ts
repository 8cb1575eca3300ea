import type { PlaceSerial } from '../core/intake/place-order.js';
import { type Arrival, type MessageHandler, type Place, placeKey } from '../core/ports.js';

// A message's arrival, the same on every platform, and its one owner. The arrival is taken from
// the relay (relay.arrive) the moment the event is known to be for the bot and allowed, before
// any of the connector's own awaits, so that a later message of the place (here or at another
// replica) cannot overtake it and a drain still answers it. Then the connector's awaits (enrich,
// sink) run in the place's order (PlaceSerial) and the message goes to the relay with its
// arrival, or the arrival is left when the message is dropped. Nothing here bounds or refuses:
// when the queues are full the relay's admission refuses with the busy notice, through the
// message's sink, on every platform alike (the one overflow path).

export interface ArrivalDeps {
  /** Each place's messages, in arrival order, through the connector's awaits. */
  serial: PlaceSerial;
  /** The relay; undefined before start and after stop. */
  handler(): MessageHandler | undefined;
}

/** A message that arrived: where, which event, when, and its place in the place's queue. */
export interface Arrived {
  place: Place;
  eventId: string;
  receivedAt: number;
  /** Undefined when the relay takes no arrivals (a test's handler) or is not there. */
  arrival: Arrival | undefined;
}

/** Takes the message's place in its place's queue now, before any await. */
export function arrive(deps: ArrivalDeps, place: Place, eventId: string, receivedAt: number): Arrived {
  return { place, eventId, receivedAt, arrival: deps.handler()?.arrive?.(place, eventId, receivedAt) };
}

/** What the connector's awaits end with: the hand-off to the relay, or undefined (the message is dropped). */
export type HandOff = ((handler: MessageHandler) => void) | undefined;

/**
 * Runs `prepare` (the connector's awaits) after every earlier message of the place has gone on.
 * The hand-off it returns is run with the relay (read before `prepare`, once the place's earlier
 * messages have gone on); when it returns undefined, throws (then `onError`) or there is no relay, the arrival
 * is left. Resolves once the message was handed off or dropped.
 */
export function inPlaceOrder(
  deps: ArrivalDeps,
  arrived: Arrived,
  prepare: () => Promise<HandOff>,
  onError: (err: unknown) => void,
): Promise<void> {
  let handedOff = false;
  return deps.serial
    .run(
      placeKey(arrived.place),
      async () => {
        const handler = deps.handler();
        if (handler === undefined) return;
        const handOff = await prepare();
        if (handOff === undefined) return;
        handedOff = true;
        handOff(handler);
      },
      onError,
    )
    .finally(() => {
      if (!handedOff) arrived.arrival?.leave();
    });
}
