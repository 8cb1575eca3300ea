// What the route handlers share: options, clock, state, faults, the request log.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultQueue } from './faults.js';
import type { EmulatorConversations } from './state.js';
import type { ChatEndpoint, Fault, RecordedRequest, RuntimeOptions } from './types.js';

export interface EmulatorContext {
  readonly opts: RuntimeOptions;
  readonly now: () => number;
  readonly store: EmulatorConversations;
  readonly faults: FaultQueue;
  readonly requests: RecordedRequest[];
  /** Aborted when the emulator closes: open streams stop and their sockets are destroyed. */
  readonly closing: AbortSignal;
  /** Streams (A2/B2) currently being written or held open. */
  readonly live: { streams: number };
  /** The controls the /_emulator/* paths call. */
  readonly admin: AdminOps;
}

/** One routed chat request. */
export interface ChatCall {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  endpoint: ChatEndpoint;
  record: RecordedRequest;
  /** The parsed JSON body (POST); undefined for GET. */
  body: unknown;
  /** Form A: the bot from the path; A3: the conversation id from the path. */
  pathBotId?: string;
  pathConversationId?: string;
}

/** What admin paths can do beyond the context (implemented by the Emulator). */
export interface AdminOps {
  injectFault(fault: Fault): void;
  clearFaults(): void;
  setOptions(partial: Partial<RuntimeOptions>): void;
  expire(id: string): boolean;
  reset(): void;
}
