import { randomUUID } from 'node:crypto';
import { type Arrival, type Place, placeKey } from '../ports.js';
import type { PlaceLocks, PlaceTicket } from './relay-types.js';

// A message's ticket in its place's line across replicas (PlaceLocks): joined when the event
// arrives (MessageHandler.arrive, before the connector's own awaits), or in handle() for a
// connector that does not arrive first. Each delivery has a ticket of its own: a retry of the
// same event must not take the first delivery's place. Without PlaceLocks (one replica) there is
// no line and every ticket is undefined.

export interface PlaceLine {
  /** Join on arrival; the Arrival is passed on as msg.arrival, or left when the message is dropped. */
  arrive(place: Place, eventId: string, at: number): Arrival;
  /** The ticket joined on arrival (taken out: the Arrival's leave() then does nothing), else a new one. */
  ticket(key: string, eventId: string, at: number, arrival: Arrival | undefined): PlaceTicket | undefined;
}

export function placeLine(locks: PlaceLocks | undefined): PlaceLine {
  const arrived = new WeakMap<Arrival, PlaceTicket>();
  const join = (key: string, eventId: string, at: number) => locks?.join(key, { id: `${eventId}#${randomUUID()}`, at });
  const take = (arrival: Arrival | undefined): PlaceTicket | undefined => {
    const line = arrival === undefined ? undefined : arrived.get(arrival);
    if (line !== undefined && arrival !== undefined) arrived.delete(arrival);
    return line;
  };
  return {
    arrive(place, eventId, at) {
      const line = join(placeKey(place), eventId, at);
      const arrival: Arrival = {
        recorded: line?.joined ?? Promise.resolve(),
        leave: () => take(arrival)?.leave(),
      };
      if (line !== undefined) arrived.set(arrival, line);
      return arrival;
    },
    ticket: (key, eventId, at, arrival) => take(arrival) ?? join(key, eventId, at),
  };
}
