import { describe, expect, it } from 'vitest';
import { PlaceSerial } from './place-order.js';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('PlaceSerial', () => {
  it('runs one key in order, lets other keys pass a waiting one, and forgets drained keys', async () => {
    const order = new PlaceSerial();
    const seen: string[] = [];
    const slow = gate();
    const fail = (err: unknown) => {
      throw err;
    };
    const a1 = order.run(
      'a',
      async () => {
        await slow.opened;
        seen.push('a1');
      },
      fail,
    );
    const a2 = order.run('a', async () => void seen.push('a2'), fail);
    await order.run('b', async () => void seen.push('b1'), fail);
    expect(seen).toEqual(['b1']);
    expect(order.size).toBe(1);
    slow.open();
    await Promise.all([a1, a2]);
    expect(seen).toEqual(['b1', 'a1', 'a2']);
    expect(order.size).toBe(0);
  });

  it('reports a failed task and still runs the next one of its key', async () => {
    const order = new PlaceSerial();
    const errors: unknown[] = [];
    const seen: string[] = [];
    void order.run(
      'a',
      async () => {
        throw new Error('boom');
      },
      (e) => errors.push(e),
    );
    await order.run(
      'a',
      async () => void seen.push('after'),
      (e) => errors.push(e),
    );
    expect(seen).toEqual(['after']);
    expect(errors).toHaveLength(1);
    expect(order.size).toBe(0);
  });

  it('idle() waits for every key queued so far', async () => {
    const order = new PlaceSerial();
    const seen: string[] = [];
    const slow = gate();
    const ignore = () => {};
    void order.run(
      'a',
      async () => {
        await slow.opened;
        seen.push('a1');
      },
      ignore,
    );
    void order.run('b', async () => void seen.push('b1'), ignore);
    const idle = order.idle().then(() => seen.push('idle'));
    slow.open();
    await idle;
    expect(seen).toEqual(['b1', 'a1', 'idle']);
  });
});
