import type { MonospaceOptions } from './reply/tables.js';
import type { BucketRef, RateLimitInfo } from './bucket-port.js';
import type { AgentFile, AgentStep } from './chat-port.js';
import type { ReplyTarget } from './place.js';

// Where one reply is shown (a connector makes one per message): its writes, what each tells the
// sink, what the platform answers, and where a refusal is told.

export interface WriteResult {
  rateLimits?: RateLimitInfo[];
  /**
   * The platform refused this write's rich form (blocks, a table, Markdown, components) and the
   * sink sent the same words plainly (the plain fallback): the reasons (the platform's error codes), each
   * counted once (`BridgeMetrics.plainFallback`).
   */
  fallbacks?: string[];
}

export interface PostResult extends WriteResult {
  /** Platform message id (Slack ts, Discord message id). */
  messageId: string;
}

export interface WriteOptions {
  /** The last write of the reply's current message (stream stop, final render). */
  final: boolean;
  /** 0 for the first message of a reply, 1.. for continuations. */
  part: number;
  /**
   * The reply's key (MessageHandler.stop / vote): a sink that can carry controls shows a Stop
   * control on every write that is not `final`, and none on final writes. Absent: no controls.
   */
  replyKey?: string;
  /** The reply's very last write (its last message, final text): the controls go away. */
  last?: boolean;
  /** With `last`: show thumbs up/down (FEEDBACK on, the reply finished). */
  feedback?: boolean;
  /**
   * SHOW_STEPS, for a sink that `showsSteps`: the agent's steps so far (oldest first), given on
   * every write that is not `final` once there are any; a final write never has them (the step
   * line goes away). Such a write may have empty text: steps before any answer text.
   */
  steps?: readonly AgentStep[];
  /** With `last`: the images and files the sink said it shows (`ReplySink.showsFile`), to show with it. */
  files?: readonly AgentFile[];
}

/**
 * Where one reply is shown. The pump gives it the *full* text of the current message each time;
 * a sink that appends (Slack native streams) sends only what is new.
 */
export interface ReplySink {
  /** Characters allowed in one message (Discord 2000, Slack edit mode 3900, Slack native ~11000). */
  readonly maxChars: number;
  /** A message older than this is finished and the text continues in a new one (Slack native streams). */
  readonly maxMessageAgeMs?: number;
  /**
   * The sink must see a final write even when the text has not changed since the last edit
   * (Slack native streams: stopStream, and words held back until final). Otherwise an unchanged
   * final write is skipped: it would only spend a rate-limit token.
   */
  readonly needsFinalWrite?: boolean;
  /**
   * The platform has no table: Markdown tables in the reply become aligned monospace blocks
   * (core/reply/tables.ts), cut by columns beyond `maxLineWidth`, before the text is split.
   */
  readonly monospaceTables?: MonospaceOptions;
  /** Buckets a post or an edit counts against. */
  buckets(op: 'post' | 'edit'): BucketRef[];
  /** Show that work started (typing, assistant status, reaction). Must not throw. */
  showWorking(): Promise<void>;
  /**
   * The sink shows an agent's steps in the reply's messages (`WriteOptions.steps`): a step that
   * runs before any answer text is posted as a message of its own, edited into the answer later.
   * Such writes are intermediate ones, the first dropped when budgets are short.
   */
  readonly showsSteps?: boolean;
  /**
   * While nothing is shown yet (the working indicator is up), name the running step there, or
   * none (`undefined`): Slack's assistant status. Costs no write budget. Must not throw.
   */
  showStep?(step: AgentStep | undefined): Promise<void>;
  /**
   * The sink shows this image or file itself with the reply's last write (`WriteOptions.files`):
   * an image URL as an image, bytes as an upload. Absent or false: the reply names it in a line.
   */
  showsFile?(file: AgentFile): boolean;
  /** Stop the working indicator. Must not throw. */
  clearWorking(): Promise<void>;
  post(text: string, opts: WriteOptions): Promise<PostResult>;
  edit(messageId: string, text: string, opts: WriteOptions): Promise<WriteResult>;
  /** Serializable description of the destination so a restart can edit the messages (see InFlightRecord). */
  readonly target: ReplyTarget;
  /**
   * Where a refusal (per-user limit, busy) is told. Absent: a post like the reply's, public.
   * Either way it opens nothing (no thread) and waits behind every write of a reply.
   */
  readonly refusal?: RefusalChannel;
}

/** How the bridge tells the asker why their message is not answered (see ReplySink.refusal). */
export interface RefusalChannel {
  /** Only the asker sees it (Slack ephemeral, a Discord interaction's ephemeral reply). */
  readonly private: boolean;
  /** Buckets one notice counts against. */
  readonly buckets: BucketRef[];
  /** Send it; opens no thread. Throws like a sink write (a 429 is a PlatformRateLimitedError). */
  send(text: string): Promise<WriteResult>;
}
