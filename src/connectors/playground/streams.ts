import type { ServerResponse } from 'node:http';
import type { Clock } from '../../core/ports.js';

// The playground's open event streams (SSE), bounded: each holds a socket on the port that also
// serves /healthz and /slack/events. A browser (its id cookie) may hold `perUser` of them (a
// browser opens at most 6 connections to one host: beyond 4 streams its own requests would
// wait), a client address `perAddress` (cookies are free: fresh ids from one address share its
// bound, so one address cannot take every stream), the process `total`. A stream that carried no reply and whose browser made no request
// for `idleMs` ends with `event: idle` (the page closes it and opens a new one when used again);
// a comment line every `keepaliveMs` keeps proxies from closing a quiet one earlier.
// A stream carries `event: reply` (one per write of a reply) and `event: turn|step|sources|file`
// (news of a turn besides its writes: turn-events.ts); any name goes through `send` unchanged.

export interface StreamLimits {
  perUser: number;
  perAddress: number;
  total: number;
  idleMs: number;
  keepaliveMs: number;
}

export const STREAM_LIMITS: StreamLimits = {
  perUser: 4,
  perAddress: 16,
  total: 64,
  idleMs: 15 * 60_000,
  keepaliveMs: 15_000,
};

export type OpenResult = { ok: true } | { ok: false; status: 429 | 503; error: string; detail: string };

interface Stream {
  res: ServerResponse;
  user: string;
  address: string;
  last: number;
  end(): void;
}

export interface Streams {
  /**
   * Opens `res` as an event stream of `user` at client `address`, fed by `subscribe` (which
   * returns its unsubscribe), or says why not (nothing written then).
   */
  open(
    user: string,
    address: string,
    res: ServerResponse,
    subscribe: (send: (event: string, data: unknown) => void) => () => void,
  ): OpenResult;
  /** The browser did something: its streams are not idle. */
  touch(user: string): void;
  /** Ends every stream (shutdown). */
  close(): void;
  readonly size: number;
  sizeOf(user: string): number;
}

/** Why one more stream is refused, given the streams open now; undefined when it is not. */
function overLimit(
  limits: StreamLimits,
  open: { user: number; address: number; total: number },
): OpenResult | undefined {
  if (open.user >= limits.perUser) return tooManyStreams('browser', limits.perUser);
  if (open.address >= limits.perAddress) return tooManyStreams('address', limits.perAddress);
  if (open.total >= limits.total)
    return {
      ok: false,
      status: 503,
      error: 'playground_busy',
      detail: 'the playground follows as many conversations as it can: try again in a minute',
    };
  return undefined;
}

/** A browser or a client address that already follows its bound of conversations live. */
function tooManyStreams(who: 'browser' | 'address', bound: number): OpenResult {
  return {
    ok: false,
    status: 429,
    error: 'too_many_streams',
    detail: `this ${who} already follows ${bound} conversations live: close a tab or two`,
  };
}

/** The answer's head as an event stream that no proxy buffers, and a first comment line. */
function startEventStream(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-content-type-options': 'nosniff',
  });
  res.write(': playground\n\n');
}

/** A clock whose timers do not keep the process alive. */
const unrefClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return { clear: () => clearTimeout(t) };
  },
};

export function createStreams(limits: StreamLimits = STREAM_LIMITS, clock: Clock = unrefClock): Streams {
  const all = new Set<Stream>();
  const byUser = new Map<string, Set<Stream>>();
  const byAddress = new Map<string, number>();

  return {
    open(user, address, res, subscribe) {
      const counts = { user: byUser.get(user)?.size ?? 0, address: byAddress.get(address) ?? 0, total: all.size };
      const over = overLimit(limits, counts);
      if (over !== undefined) return over;
      startEventStream(res);
      let timer: { clear(): void } | undefined;
      let ended = false;
      const stream: Stream = {
        res,
        user,
        address,
        last: clock.now(),
        end: () => {
          if (ended) return;
          ended = true;
          timer?.clear();
          unsubscribe();
          all.delete(stream);
          const set = byUser.get(user);
          set?.delete(stream);
          if (set?.size === 0) byUser.delete(user);
          const n = (byAddress.get(address) ?? 1) - 1;
          if (n <= 0) byAddress.delete(address);
          else byAddress.set(address, n);
          if (!res.writableEnded) res.end();
        },
      };
      const send = (event: string, data: unknown): void => {
        if (ended) return;
        stream.last = clock.now();
        res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      };
      const unsubscribe = subscribe(send);
      const tick = (): void => {
        if (ended) return;
        if (clock.now() - stream.last >= limits.idleMs) {
          res.write(`event: idle\ndata: ${JSON.stringify({ idleMs: limits.idleMs })}\n\n`);
          stream.end();
          return;
        }
        res.write(': keepalive\n\n');
        timer = clock.setTimeout(tick, Math.min(limits.keepaliveMs, limits.idleMs));
      };
      timer = clock.setTimeout(tick, Math.min(limits.keepaliveMs, limits.idleMs));
      all.add(stream);
      let set = byUser.get(user);
      if (set === undefined) byUser.set(user, (set = new Set()));
      set.add(stream);
      byAddress.set(address, (byAddress.get(address) ?? 0) + 1);
      res.on('close', stream.end);
      return { ok: true };
    },

    touch(user) {
      const now = clock.now();
      for (const s of byUser.get(user) ?? []) s.last = now;
    },

    close() {
      for (const s of [...all]) s.end();
    },

    get size() {
      return all.size;
    },

    sizeOf(user) {
      return byUser.get(user)?.size ?? 0;
    },
  };
}
