import type { ServerResponse } from 'node:http';
import type { FaultSource, LostAnswer } from './chaos.js';

// "The write took effect, its answer never arrived": what both platform fakes do to a write the
// fault source picks. The platform has applied the write (the message exists, the text changed);
// the client sees a cut connection or a 5xx, and cannot tell it from a write that never landed.

/** Send nothing: the connection is cut after the request was read and applied. */
export function loseAnswer(res: ServerResponse, how: LostAnswer): void {
  if (how === 'cut') {
    res.socket?.destroy();
    return;
  }
  // A gateway in front of the platform gave up waiting: not JSON, no API error code.
  res.writeHead(503, { 'content-type': 'text/plain' });
  res.end('upstream connect error or disconnect/reset before headers');
}

/**
 * A fault source for a test: lose the answer of the n-th call (1-based) of each named write, once
 * (`{ 'chat.postMessage': [1] }`), the same shape each time (default `cut`).
 */
export function loseNth(plan: Record<string, number[]>, how: LostAnswer = 'cut'): FaultSource & { lost: string[] } {
  const seen = new Map<string, number>();
  const lost: string[] = [];
  return {
    lost,
    loseAnswer(_platform, what) {
      const n = (seen.get(what) ?? 0) + 1;
      seen.set(what, n);
      if (!(plan[what] ?? []).includes(n)) return undefined;
      lost.push(`${what}#${n}`);
      return how;
    },
    refuseRich: () => false,
  };
}
