import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SlackConnector } from '../../src/connectors/slack/connector.js';
import type { HandleResult, IncomingMessage } from '../../src/core/ports.js';
import { type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';
import { connectorFor, EchoHandler } from './slack-helpers.js';

// One Slack app, several Socket Mode connections (one per replica): two real Bolt connectors
// against the fake, which sends each envelope to one connection (round-robin, or the one a test
// names) and a retry to another. A connector that stops receiving closes its own connection
// only; the other keeps getting the events, and its own reply in progress still lands.

/** Holds each reply until `release()`, then answers like EchoHandler would in one post. */
class GatedHandler extends EchoHandler {
  private opened!: () => void;
  private readonly gate = new Promise<void>((resolve) => {
    this.opened = resolve;
  });
  private readonly arrived: Array<() => void> = [];

  override async handle(msg: IncomingMessage): Promise<HandleResult> {
    for (const a of this.arrived.splice(0)) a();
    await this.gate;
    return super.handle(msg);
  }

  /** Resolves when the next message reaches the handler. */
  nextArrival(): Promise<void> {
    return new Promise((resolve) => this.arrived.push(resolve));
  }

  release(): void {
    this.opened();
  }
}

describe('Slack Socket Mode, several connections of one app (real Bolt, fake Slack)', () => {
  let fake: FakeSlack;
  const conns: SlackConnector[] = [];

  const connect = async (handler: EchoHandler): Promise<SlackConnector> => {
    const conn = connectorFor(fake, { socketPingTimeoutMs: 500 });
    conns.push(conn);
    await conn.start(handler);
    // One at a time, so connection n is the n-th connector's.
    await fake.waitSocketConnections(conns.length);
    return conn;
  };

  beforeEach(async () => {
    fake = await startFakeSlack({ limits: {} });
  });

  afterEach(async () => {
    await Promise.allSettled(conns.splice(0).map((c) => c.shutdown()));
    await fake.close();
  });

  it('spreads events round-robin over the open connections, or sends one to the connection named', async () => {
    const [one, two] = [new EchoHandler(), new EchoHandler()];
    await connect(one);
    await connect(two);
    expect(fake.socketConnectionIds).toEqual([1, 2]);
    for (let i = 1; i <= 4; i++) await fake.sendEvent(fake.userPost({ channel: `D${i}`, text: `m${i}` }).message);
    await Promise.all([one.answered(2), two.answered(2)]);
    expect(fake.socketDeliveries.map((d) => d.connection)).toEqual([1, 2, 1, 2]);
    expect(fake.socketDeliveries.every((d) => d.acked && d.retryAttempt === 0)).toBe(true);
    expect(one.received.map((m) => m.text)).toEqual(['m1', 'm3']);
    expect(two.received.map((m) => m.text)).toEqual(['m2', 'm4']);

    const named = await fake.deliverEvent(fake.envelope(fake.userPost({ channel: 'D5', text: 'to two' }).message), {
      connection: 2,
    });
    expect(named.connection).toBe(2);
    await two.answered(3);
    expect(two.received.at(-1)?.text).toBe('to two');
    expect(fake.agent.replies('D5').map((m) => m.text)).toEqual(['You said: to two']);
  });

  it("delivers Slack's retry of an event to another connection: same event, retry_attempt 1", async () => {
    const [one, two] = [new EchoHandler(), new EchoHandler()];
    await connect(one);
    await connect(two);
    const post = fake.userPost({ channel: 'D1', text: 'once please' });
    const body = fake.envelope(post.message);
    const first = await fake.deliverEvent(body);
    const again = await fake.deliverEvent(body, { retryNum: 1, avoid: first.connection });
    expect(again.connection).not.toBe(first.connection);
    await Promise.all([one.answered(1), two.answered(1)]);
    // Both connectors hand the relay the same message id: the shared store's dedup (not these
    // stand-in relays) answers it once across replicas.
    expect(one.received[0]?.eventId).toBe(`D1:${post.ts}`);
    expect(two.received[0]?.eventId).toBe(`D1:${post.ts}`);
    const [d1, d2] = fake.socketDeliveries;
    expect([d1?.retryAttempt, d2?.retryAttempt]).toEqual([0, 1]);
    expect(d2?.eventId).toBe(d1?.eventId);
    expect(d1?.eventId).toBe(body.event_id);
  });

  it('closeIntake closes only its own connection: new events go to the other, its reply still lands', async () => {
    const gated = new GatedHandler();
    const other = new EchoHandler();
    const leaving = await connect(gated);
    await connect(other);
    const arrived = gated.nextArrival();
    await fake.sendEvent(fake.userPost({ channel: 'D1', text: 'before the deploy' }).message, { connection: 1 });
    await arrived;

    await leaving.closeIntake();
    await fake.waitSocketClosed(1);
    expect(fake.socketConnectionIds).toEqual([2]);
    expect(leaving.isReady()).toBe(false);
    expect(conns[1]?.isReady()).toBe(true);
    for (let i = 2; i <= 4; i++) await fake.sendEvent(fake.userPost({ channel: `D${i}`, text: `m${i}` }).message);
    await other.answered(3);
    expect(fake.socketDeliveries.slice(1).map((d) => d.connection)).toEqual([2, 2, 2]);

    // The reply it was writing goes out over the Web API after its connection closed.
    gated.release();
    await gated.answered(1);
    expect(fake.agent.replies('D1').map((m) => m.text)).toEqual(['You said: before the deploy']);
    await leaving.closeIntake(); // twice is harmless
    await leaving.shutdown();
    expect(fake.socketConnectionIds).toEqual([2]);
  });
});
