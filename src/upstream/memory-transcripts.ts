import type { TranscriptBounds, TranscriptStore, TranscriptTurn } from '../core/store-ports.js';

// A transcript store for one process (the terminal `chat`, a bridge built without a store): the
// same bounds as the stored one (src/store/transcripts.ts), at most MAX_CONVERSATIONS kept.

const MAX_CONVERSATIONS = 1000;

export function memoryTranscripts(): TranscriptStore {
  const all = new Map<string, TranscriptTurn[]>();
  return {
    turns(conversationId) {
      const kept = all.get(conversationId) ?? [];
      const first = kept.findIndex((t) => t.role === 'user');
      return Promise.resolve(first === -1 ? [] : kept.slice(first).map((t) => ({ ...t })));
    },
    append(conversationId, turns, bounds) {
      const kept = [...(all.get(conversationId) ?? []), ...turns];
      all.delete(conversationId);
      all.set(conversationId, keepNewest(kept, bounds));
      if (all.size > MAX_CONVERSATIONS) {
        const oldest = all.keys().next().value;
        if (oldest !== undefined) all.delete(oldest);
      }
      return Promise.resolve();
    },
  };
}

/** The newest turns within both bounds; the newest one always. */
export function keepNewest(turns: readonly TranscriptTurn[], bounds: TranscriptBounds): TranscriptTurn[] {
  let chars = 0;
  let from = turns.length;
  while (from > 0) {
    const t = turns[from - 1] as TranscriptTurn;
    const n = turns.length - from + 1;
    if (n > 1 && (n > bounds.maxTurns || chars + t.text.length > bounds.maxChars)) break;
    chars += t.text.length;
    from--;
  }
  return turns.slice(from);
}
