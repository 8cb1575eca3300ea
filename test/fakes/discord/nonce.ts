import type { ServerResponse } from 'node:http';
import type { FaultSource } from '../chaos.js';
import { loseAnswer } from '../lost-answers.js';

// Two behaviours of Discord's message writes that make a lost answer survivable or not:
// - `enforce_nonce`: a create with `nonce` and `enforce_nonce: true` that the same author sent
//   with that nonce a few minutes before returns the earlier message and creates nothing;
// - lost answers: a write that took effect (create, edit, interaction callback, follow-up,
//   webhook edit) whose answer the fault source drops (a cut connection or a 5xx).

/** How long Discord remembers a nonce ("a few minutes"). */
export const NONCE_WINDOW_MS = 5 * 60_000;
/** Nonces remembered at most (oldest forgotten first): the fake stays bounded. */
const MAX_NONCES = 10_000;

export class NonceMemory {
  private readonly seen = new Map<string, { messageId: string; at: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The message an earlier create of this author made with this nonce, if Discord still knows it. */
  find(authorId: string, body: Record<string, unknown>): string | undefined {
    const key = keyOf(authorId, body);
    if (key === undefined || body.enforce_nonce !== true) return undefined;
    const hit = this.seen.get(key);
    if (hit === undefined || this.now() - hit.at > NONCE_WINDOW_MS) return undefined;
    return hit.messageId;
  }

  remember(authorId: string, body: Record<string, unknown>, messageId: string): void {
    const key = keyOf(authorId, body);
    if (key === undefined) return;
    if (this.seen.size >= MAX_NONCES) {
      const oldest = this.seen.keys().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
    this.seen.set(key, { messageId, at: this.now() });
  }
}

function keyOf(authorId: string, body: Record<string, unknown>): string | undefined {
  const n = body.nonce;
  if (typeof n !== 'string' && typeof n !== 'number') return undefined;
  // Discord: an integer or a string of at most 25 characters.
  if (String(n).length > 25) return undefined;
  return `${authorId}:${String(n)}`;
}

/** The write's name as the fault source sees it: `create`, `edit`, `follow-up`, `webhook-edit`, `callback`. */
export function writeKind(method: string, path: string): string | undefined {
  if (/^\/channels\/\d+\/messages$/.test(path) && method === 'POST') return 'create';
  if (/^\/channels\/\d+\/messages\/\d+$/.test(path) && method === 'PATCH') return 'edit';
  if (/^\/webhooks\/\d+\/[^/]+$/.test(path) && method === 'POST') return 'follow-up';
  if (/^\/webhooks\/\d+\/[^/]+\/messages\//.test(path) && method === 'PATCH') return 'webhook-edit';
  return undefined;
}

/** True when the answer was lost (nothing more may be sent on `res`). */
export function maybeLoseAnswer(
  faults: FaultSource | undefined,
  method: string,
  path: string,
  status: number,
  res: ServerResponse,
): boolean {
  const kind = writeKind(method, path);
  if (faults === undefined || kind === undefined || status >= 300) return false;
  const how = faults.loseAnswer('discord', kind);
  if (how === undefined) return false;
  loseAnswer(res, how);
  return true;
}
