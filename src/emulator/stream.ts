// Paces a reply onto a streamed response: chunks, delays, and the cut/stall/error faults.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pause, whenAborted } from './http.js';
import { splitBytes, splitText } from './replies.js';
import type { FrameIds, StreamWriter } from './stream-writers.js';

export interface StreamFaults {
  cut?: number | undefined;
  stall?: number | undefined;
  error?: number | undefined;
}

export interface StreamPlan extends StreamFaults {
  writer: StreamWriter;
  /** Bytes-level pieces (plain) instead of text pieces. */
  bytes: boolean;
  headers: Record<string, string>;
  startIds: FrameIds;
  doneIds: FrameIds;
  text: string;
  /** The chunks as written frames, when the reply is more than text pieces (an agent's work, a protocol). */
  frames?: string[] | undefined;
  pieces?: number | undefined;
  delayMs: number;
  splitWrites: boolean;
  /** Called once the whole text was written, before the end frame. */
  onComplete: () => void;
}

export type StreamOutcome = 'done' | 'cut' | 'stalled' | 'error' | 'gone';

/** Which fault (if any) fires once `written` chunks are out. */
function faultAt(f: StreamFaults, written: number, total: number): 'cut' | 'stall' | 'error' | undefined {
  const hit = (n: number | undefined) => n !== undefined && (n === written || (written === total && n > total));
  if (hit(f.cut)) return 'cut';
  if (hit(f.stall)) return 'stall';
  if (hit(f.error)) return 'error';
  return undefined;
}

/**
 * Streams the plan. Stops writing as soon as the client goes away or `closing` aborts
 * (the emulator is closing), and then destroys the socket so nothing stays open.
 */
export async function runStream(
  req: IncomingMessage,
  res: ServerResponse,
  plan: StreamPlan,
  closing: AbortSignal,
  live: { streams: number } = { streams: 0 },
): Promise<StreamOutcome> {
  live.streams += 1;
  const gone = new AbortController();
  const onGone = () => gone.abort();
  const onClosing = () => {
    gone.abort();
    res.socket?.destroy();
  };
  res.on('close', onGone);
  closing.addEventListener('abort', onClosing, { once: true });
  if (closing.aborted) onClosing();

  const writeRaw = (buf: Buffer) =>
    new Promise<void>((resolve) => {
      if (gone.signal.aborted) return resolve();
      const onAbort = () => resolve();
      gone.signal.addEventListener('abort', onAbort, { once: true });
      res.write(buf, () => {
        gone.signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });

  const write = async (data: string | Buffer) => {
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    if (buf.length === 0 || gone.signal.aborted) return;
    if (plan.splitWrites && buf.length > 1) {
      const mid = Math.floor(buf.length / 2);
      await writeRaw(buf.subarray(0, mid));
      await pause(1, gone.signal);
      await writeRaw(buf.subarray(mid));
    } else {
      await writeRaw(buf);
    }
  };

  try {
    res.writeHead(200, { 'cache-control': 'no-cache', 'x-accel-buffering': 'no', ...plan.headers });
    res.flushHeaders();
    await write(plan.writer.start(plan.startIds));

    const chunks: (string | Buffer)[] =
      plan.frames ??
      (plan.bytes
        ? splitBytes(Buffer.from(plan.text, 'utf8'), plan.pieces)
        : splitText(plan.text, plan.pieces).map((t) => plan.writer.delta(t)));

    for (let written = 0; ; written++) {
      if (gone.signal.aborted) return 'gone';
      const fault = faultAt(plan, written, chunks.length);
      if (fault === 'cut') {
        req.socket.destroy();
        return 'cut';
      }
      if (fault === 'stall') {
        await whenAborted(gone.signal);
        res.socket?.destroy();
        return 'stalled';
      }
      if (fault === 'error') {
        const frame = plan.writer.error('The bot failed while answering (emulated)', 'BOT_ERROR');
        if (frame === undefined) {
          req.socket.destroy();
          return 'cut';
        }
        await write(frame);
        res.end();
        return 'error';
      }
      if (written === chunks.length) break;
      await pause(plan.delayMs, gone.signal);
      const chunk = chunks[written];
      if (chunk !== undefined) await write(chunk);
    }
    if (gone.signal.aborted) return 'gone';
    plan.onComplete();
    await write(plan.writer.done(plan.doneIds));
    res.end();
    return 'done';
  } finally {
    live.streams -= 1;
    res.off('close', onGone);
    closing.removeEventListener('abort', onClosing);
  }
}
