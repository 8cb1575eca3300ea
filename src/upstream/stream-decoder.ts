import type { DecodedEvent } from './event-rules.js';
import { JsonLinesDecoder } from './ndjson.js';
import { SseDecoder } from './sse.js';
import { PlainTextDecoder } from './text.js';

/** Bytes of a streamed reply in, events out, whatever the chunking. Synchronous and pure. */
export interface StreamDecoder {
  /** Feed the next bytes; returns the events they complete (text of one push merged). */
  push(chunk: Uint8Array): DecodedEvent[];
  /** The body ended normally: flush what is pending; always ends with `end` unless an error came. */
  finish(): DecodedEvent[];
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

export function createDecoder(contentType: string | undefined): StreamDecoder {
  switch (formatOf(contentType)) {
    case 'sse':
      return new SseDecoder();
    case 'ndjson':
      return new JsonLinesDecoder(false);
    case 'json':
      return new JsonLinesDecoder(true);
    case 'text':
      return new PlainTextDecoder();
  }
}
