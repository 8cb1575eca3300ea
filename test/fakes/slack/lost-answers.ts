import type { ServerResponse } from 'node:http';
import type { FaultSource } from '../chaos.js';
import { loseAnswer } from '../lost-answers.js';
import type { Args } from './web-api.js';

// The fake Slack's lost answers: a message write (post, update, stream start, append, stop) that
// took effect and whose answer the fault source drops. Reads, reactions and statuses are answered.

const LOSABLE = new Set([
  'chat.postMessage',
  'chat.update',
  'chat.startStream',
  'chat.appendStream',
  'chat.stopStream',
]);

/** True when the answer was lost (nothing more may be sent on `res`). */
export function maybeLoseAnswer(faults: FaultSource | undefined, method: string, res: ServerResponse): boolean {
  if (faults === undefined || !LOSABLE.has(method)) return false;
  const how = faults.loseAnswer('slack', method);
  if (how === undefined) return false;
  loseAnswer(res, how);
  return true;
}

/** A message's `metadata` as sent (a JSON string in a form body, an object in a JSON body). */
export function metadataOf(a: Args): Record<string, unknown> | undefined {
  let m: unknown = a.metadata;
  if (m === undefined) return undefined;
  if (typeof m === 'string') {
    try {
      m = JSON.parse(m);
    } catch {
      return undefined;
    }
  }
  return typeof m === 'object' && m !== null ? (m as Record<string, unknown>) : undefined;
}

/** conversations.* return metadata only when asked (`include_all_metadata`), as Slack does. */
export function wantsMetadata(a: Args): boolean {
  const v = a.include_all_metadata;
  return v === true || v === 'true' || v === '1' || v === 1;
}
