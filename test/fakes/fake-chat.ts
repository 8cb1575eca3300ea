import { randomUUID } from 'node:crypto';
import {
  ChatError,
  type ChatService,
  type ChatStream,
  type SendRequest,
  type SendResult,
  type StreamEvent,
} from '../../src/core/chat-port.js';
import type { ChatForm } from '../../src/upstream/index.js';

// A scripted ChatService for relay unit tests (the integration tests use the real client against
// the emulator). Each request is answered by `script(req)`; Form A assigns `conv-N` ids to new
// conversations. A reply can be held at a gate to test ordering and shutdown.

/** One event of a scripted stream, or a pause until `gate` resolves (a tool that runs a while). */
export type ScriptedEvent = StreamEvent | { type: 'gate'; gate: Promise<void> };

export interface ScriptedReply {
  chunks?: string[];
  /**
   * The whole stream, in order, instead of `chunks` (steps, sources, files beside the text; `send`
   * answers with the text events joined). The end event is added.
   */
  events?: ScriptedEvent[];
  /** Thrown by stream()/send() before any text (the request was refused). */
  refuse?: ChatError;
  /** Thrown by the iterator after the chunks. */
  failAfter?: ChatError;
  /** Form A: where the conversation id is revealed. Default 'both'. */
  ids?: 'header' | 'event' | 'both' | 'none';
  /** Resolve to let the stream continue after its first chunk. */
  gate?: Promise<void>;
  /** The client stopped reading at its cap (CHAT_REPLY_MAX_CHARS). */
  endReason?: 'too_long';
}

export interface RecordedRequest extends Omit<SendRequest, 'signal'> {
  endpoint: 'send' | 'stream';
  /** The conversation the fake answered in (Form A: assigned when new). */
  answeredIn: string;
}

export class FakeChat implements ChatService {
  readonly requests: RecordedRequest[] = [];
  script: (req: SendRequest, n: number) => ScriptedReply = (req) => ({ chunks: [`You said: ${req.message}`] });
  private nextConv = 1;
  cancelled = 0;

  readonly flavor: string;
  readonly capabilities: ChatService['capabilities'];

  constructor(readonly form: ChatForm = 'b') {
    this.flavor = form;
    this.capabilities = { idsFromReplies: form === 'a' };
  }

  mintConversationId(): string | undefined {
    return this.form === 'b' ? randomUUID() : undefined;
  }

  async send(req: SendRequest): Promise<SendResult> {
    const { reply, conv } = this.take(req, 'send');
    if (reply.refuse !== undefined) throw reply.refuse;
    if (reply.failAfter !== undefined) throw reply.failAfter;
    const texts = reply.events?.flatMap((e) => (e.type === 'text' ? [e.text] : []));
    const res: SendResult = {
      text: (texts ?? reply.chunks ?? []).join(''),
      conversationId: conv,
      messageId: `m-${this.requests.length}`,
    };
    if (reply.endReason !== undefined) res.endReason = reply.endReason;
    return res;
  }

  async stream(req: SendRequest): Promise<ChatStream> {
    const { reply, conv } = this.take(req, 'stream');
    if (reply.refuse !== undefined) throw reply.refuse;
    const ids = this.form === 'a' ? (reply.ids ?? 'both') : 'none';
    const signal = req.signal;
    let cancelled = false;
    async function* events(): AsyncGenerator<StreamEvent> {
      for (const [i, ev] of (reply.events ?? []).entries()) {
        if (cancelled || signal?.aborted) throw new ChatError('interrupted', 'cancelled', { partial: i > 0 });
        if (ev.type === 'gate') await ev.gate;
        else yield ev;
      }
      const chunks = reply.chunks ?? [];
      for (let i = 0; i < chunks.length; i++) {
        if (cancelled || signal?.aborted) throw new ChatError('interrupted', 'cancelled', { partial: i > 0 });
        yield { type: 'text', text: chunks[i] as string };
        if (i === 0 && reply.gate !== undefined) await reply.gate;
      }
      if (reply.failAfter !== undefined) throw reply.failAfter;
      if (ids === 'event' || ids === 'both') yield { type: 'ids', conversationId: conv };
      yield reply.endReason !== undefined ? { type: 'end', reason: reply.endReason } : { type: 'end' };
    }
    return {
      conversationId: ids === 'header' || ids === 'both' ? conv : undefined,
      cancel: () => {
        if (!cancelled) this.cancelled++;
        cancelled = true;
      },
      [Symbol.asyncIterator]: () => events(),
    };
  }

  async history(): Promise<never> {
    throw new Error('not scripted');
  }

  async listConversations(): Promise<never> {
    throw new Error('not scripted');
  }

  async close(): Promise<void> {}

  private take(req: SendRequest, endpoint: 'send' | 'stream'): { reply: ScriptedReply; conv: string } {
    const conv = req.conversationId ?? (this.form === 'a' ? `conv-${this.nextConv++}` : 'missing-session');
    const rec: RecordedRequest = { endpoint, botId: req.botId, message: req.message, answeredIn: conv };
    if (req.conversationId !== undefined) rec.conversationId = req.conversationId;
    if (req.metadata !== undefined) rec.metadata = req.metadata;
    this.requests.push(rec);
    return { reply: this.script(req, this.requests.length), conv };
  }
}

/** A FakeChat (Form B) that answers every request with `events`. */
export function scriptedChat(events: ScriptedEvent[]): FakeChat {
  const chat = new FakeChat('b');
  chat.script = () => ({ events });
  return chat;
}

/** A pause a scripted stream waits at (a `gate` event) until the test opens it. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/**
 * The agent reply the platform tests show (test/integration/*-agent.test.ts): two tool calls, the
 * second running until `tool` resolves, two sources, the answer "Hello world.".
 */
export function weatherAgentReply(tool: Promise<void>): ScriptedEvent[] {
  return [
    { type: 'step', step: { id: 'c1', title: 'Searching the web', state: 'running' } },
    { type: 'step', step: { id: 'c1', title: 'Searching the web', state: 'done' } },
    { type: 'step', step: { id: 'c2', title: 'get_weather', state: 'running' } },
    { type: 'gate', gate: tool },
    { type: 'step', step: { id: 'c2', title: 'get_weather', state: 'done' } },
    { type: 'source', source: { url: 'https://example.com/a', title: 'Example A' } },
    { type: 'source', source: { url: 'https://b.example.org/x' } },
    { type: 'text', text: 'Hello ' },
    { type: 'text', text: 'world.' },
  ];
}
