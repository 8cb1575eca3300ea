// The wire shapes of A2/B2 streams, one writer per stream format. A writer only makes bytes;
// the timing, faults and socket handling live in stream.ts.
import type { StreamFormat } from './types.js';

/** Ids a frame may carry; which are set depends on the form and on `streamIds`. */
export interface FrameIds {
  conversationId?: string;
  sessionId?: string;
  messageId?: string;
}

export interface StreamWriter {
  readonly contentType: string;
  /** Frames before the first delta (may be empty). */
  start(ids: FrameIds): string;
  /** One text piece. Plain streams write bytes directly (see stream.ts) and never call this. */
  delta(text: string): string;
  /** The end of the stream (may be empty: plain ends with the body). */
  done(ids: FrameIds): string;
  /** A stream error event, or undefined when the format has none (then the connection is cut). */
  error(message: string, code: string): string | undefined;
}

function idFields(ids: FrameIds, snake: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  if (ids.conversationId !== undefined) out[snake ? 'conversation_id' : 'conversationId'] = ids.conversationId;
  if (ids.sessionId !== undefined) out.session_id = ids.sessionId;
  if (ids.messageId !== undefined)
    out[snake || ids.sessionId !== undefined ? 'message_id' : 'messageId'] = ids.messageId;
  return out;
}

const sse = (data: string, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${data}\n\n`;

/** `data: {json}` events: start, delta…, done. */
export const sseJson: StreamWriter = {
  contentType: 'text/event-stream; charset=utf-8',
  start: ({ messageId: _unused, ...ids }) => sse(JSON.stringify({ type: 'start', ...idFields(ids, false) })),
  delta: (text) => sse(JSON.stringify({ type: 'delta', delta: text })),
  done: (ids) => sse(JSON.stringify({ type: 'done', ...idFields(ids, false) })),
  error: (message, code) => sse(JSON.stringify({ type: 'error', error: message, code }), 'error'),
};

/** `data: <text>` events (one `data:` line per text line), then `data: [DONE]`. */
export const sseText: StreamWriter = {
  contentType: 'text/event-stream; charset=utf-8',
  start: () => '',
  delta: (text) =>
    `${text
      .split('\n')
      .map((line) => `data: ${line}`)
      .join('\n')}\n\n`,
  done: () => 'data: [DONE]\n\n',
  error: (message) => sse(message.replace(/\n/g, ' '), 'error'),
};

/** One JSON object a line: `{"delta":…}` lines, then `{"done":true,…}`. */
export const ndjson: StreamWriter = {
  contentType: 'application/x-ndjson; charset=utf-8',
  start: () => '',
  delta: (text) => `${JSON.stringify({ delta: text })}\n`,
  done: (ids) => `${JSON.stringify({ done: true, ...idFields(ids, true) })}\n`,
  error: (message, code) => `${JSON.stringify({ error: message, code })}\n`,
};

/**
 * `application/json` behind an anti-hijacking preamble line (`)]}'`, as some JSON APIs send),
 * then the ndjson lines: a reader must drop the preamble and show only the deltas.
 */
export const jsonPreamble: StreamWriter = {
  ...ndjson,
  contentType: 'application/json; charset=utf-8',
  start: () => ")]}'\n",
};

/** The reply's bytes; the end of the body ends it. No error event: an error cuts the connection. */
export const plain: StreamWriter = {
  contentType: 'text/plain; charset=utf-8',
  start: () => '',
  delta: (text) => text,
  done: () => '',
  error: () => undefined,
};

export function writerFor(format: StreamFormat): StreamWriter {
  switch (format) {
    case 'sse-json':
      return sseJson;
    case 'sse-text':
      return sseText;
    case 'ndjson':
      return ndjson;
    case 'json-preamble':
      return jsonPreamble;
    case 'plain':
      return plain;
  }
}
