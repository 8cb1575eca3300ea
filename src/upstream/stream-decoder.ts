import type { DecodedEvent } from './event-rules.js';

// What every stream decoder is, and which one a content type gets; the decoders themselves
// (sse.ts, ndjson.ts, json-stream.ts, text.ts) implement it, and stream-reader.ts's
// `createDecoder` picks one.

/**
 * Bytes of a streamed reply in, events out, whatever the chunking. Synchronous and pure. Every
 * decoder does work in proportion to the bytes it gets: a new chunk is looked at once, never the
 * text before it again, and each JSON value is parsed once (a hostile upstream sending tiny chunks
 * must not cost quadratic CPU on the event loop).
 */
export interface StreamDecoder {
  /** Feed the next bytes; returns the events they complete (text of one push merged). */
  push(chunk: Uint8Array): DecodedEvent[];
  /** The body ended normally: flush what is pending; always ends with `end` unless an error came. */
  finish(): DecodedEvent[];
}

/** A decoder's work, counted for the tests and the bench (not timing: counts stay exact). */
export interface DecodeCounter {
  /** Characters the decoder's own code looked at; linear decoding keeps this at the characters received. */
  scanned: number;
  /** JSON.parse attempts: one per event, line or object at most. */
  parses: number;
}

export interface DecoderOptions {
  /**
   * The most characters held back while an event, a line or a JSON object is incomplete. Past it
   * the stream ends with `{ type: 'end', reason: 'too_long' }`: an endless line must not fill memory.
   */
  maxBuffered?: number | undefined;
  counter?: DecodeCounter | undefined;
}

const JSON_LINES = new Set([
  'application/x-ndjson',
  'application/ndjson',
  'application/jsonl',
  'application/x-jsonl',
  'application/jsonlines',
  'application/x-jsonlines',
  'application/json-lines',
  'application/stream+json',
]);

export type StreamFormat = 'sse' | 'ndjson' | 'json' | 'text';

export function formatOf(contentType: string | undefined): StreamFormat {
  const mime = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (mime === 'text/event-stream') return 'sse';
  if (JSON_LINES.has(mime)) return 'ndjson';
  if (mime === 'application/json' || mime.endsWith('+json')) return 'json';
  return 'text';
}
