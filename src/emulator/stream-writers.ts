// The wire shapes of A2/B2 streams, one writer per stream format. A writer only makes bytes;
// the timing, faults and socket handling live in stream.ts. An agent's work (agent-replies.ts)
// goes out as the seed's named events (CONTRACT.md §4): `status`, `source`, `file`, `reasoning`.
import type { ReplyPart } from './agent-replies.js';
import type { EmulatorStreamFormat } from './types.js';

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
  /** One part of an agent reply (text is `delta`); empty when the format cannot carry it (plain). */
  part(part: ReplyPart): string;
}

export function idFields(ids: FrameIds, snake: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  if (ids.conversationId !== undefined) out[snake ? 'conversation_id' : 'conversationId'] = ids.conversationId;
  if (ids.sessionId !== undefined) out.session_id = ids.sessionId;
  if (ids.messageId !== undefined)
    out[snake || ids.sessionId !== undefined ? 'message_id' : 'messageId'] = ids.messageId;
  return out;
}

const sse = (data: string, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${data}\n\n`;

/** A part other than text as the seed's named event: its name and its JSON fields. */
function namedEvent(part: Exclude<ReplyPart, { kind: 'text' }>): { name: string; fields: Record<string, string> } {
  switch (part.kind) {
    case 'reasoning':
      return { name: 'reasoning', fields: { text: part.text } };
    case 'step':
      return { name: 'status', fields: { id: part.id, text: part.title, state: part.state } };
    case 'source':
      return { name: 'source', fields: { url: part.url, title: part.title } };
    case 'file': {
      const where: Record<string, string> = part.url !== undefined ? { url: part.url } : { data: part.base64 ?? '' };
      return { name: 'file', fields: { name: part.name, mime: part.mime, ...where } };
    }
  }
}

/** SSE: `event: <name>` with the JSON fields as data. */
function ssePart(writer: Pick<StreamWriter, 'delta'>, part: ReplyPart): string {
  if (part.kind === 'text') return writer.delta(part.text);
  const { name, fields } = namedEvent(part);
  return sse(JSON.stringify(fields), name);
}

/** JSON lines: `{"type":"<name>", …fields}`. */
function linePart(part: ReplyPart): string {
  if (part.kind === 'text') return `${JSON.stringify({ delta: part.text })}\n`;
  const { name, fields } = namedEvent(part);
  return `${JSON.stringify({ type: name, ...fields })}\n`;
}

/** `data: {json}` events: start, delta…, done. */
export const sseJson: StreamWriter = {
  contentType: 'text/event-stream; charset=utf-8',
  start: ({ messageId: _unused, ...ids }) => sse(JSON.stringify({ type: 'start', ...idFields(ids, false) })),
  delta: (text) => sse(JSON.stringify({ type: 'delta', delta: text })),
  done: (ids) => sse(JSON.stringify({ type: 'done', ...idFields(ids, false) })),
  error: (message, code) => sse(JSON.stringify({ type: 'error', error: message, code }), 'error'),
  part: (part) => ssePart(sseJson, part),
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
  part: (part) => ssePart(sseText, part),
};

/** One JSON object a line: `{"delta":…}` lines, then `{"done":true,…}`. */
export const ndjson: StreamWriter = {
  contentType: 'application/x-ndjson; charset=utf-8',
  start: () => '',
  delta: (text) => `${JSON.stringify({ delta: text })}\n`,
  done: (ids) => `${JSON.stringify({ done: true, ...idFields(ids, true) })}\n`,
  error: (message, code) => `${JSON.stringify({ error: message, code })}\n`,
  part: linePart,
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
  part: (part) => (part.kind === 'text' ? part.text : ''),
};

export function writerFor(format: EmulatorStreamFormat): StreamWriter {
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
