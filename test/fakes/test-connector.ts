import {
  type AgentFile,
  type AgentStep,
  type BucketRef,
  type Clock,
  type Connector,
  type HandleResult,
  type IncomingMessage,
  type MessageHandler,
  type Place,
  PlatformRateLimitedError,
  type PostResult,
  type ReplySink,
  type ReplyTarget,
  systemClock,
  type WriteOptions,
  type WriteResult,
} from '../../src/core/ports.js';

// A connector for core tests: messages are pushed in by the test; replies land in memory. Its
// sinks enforce a Discord-like bucket per channel (5 writes per 5 s by default, a sliding window,
// so stricter than Discord) and throw PlatformRateLimitedError beyond it, counting the 429s. Every
// write is recorded with its time, and misuse (empty text, too long, a write after the final one)
// is collected in `violations` so a test can assert there was none.

export interface TestConnectorOptions {
  clock?: Clock;
  bucketLimit?: number;
  /** The limit the sinks' BucketRef claims (default: bucketLimit). Larger than it provokes 429s. */
  declaredLimit?: number;
  bucketWindowMs?: number;
  maxChars?: number;
  maxMessageAgeMs?: number;
  /** The sink wants a final write even when nothing changed (like Slack native streams). */
  needsFinalWrite?: boolean;
  /** Report X-RateLimit-like headers (limit, remaining, reset-after) on every write. Default true. */
  reportHeaders?: boolean;
  /**
   * The sinks show an agent's steps (ReplySink.showsSteps): a message's content ends with a line
   * `-# <running step>…` while the writes carry steps, like Discord's.
   */
  showsSteps?: boolean;
  /** The sinks show image URLs themselves (ReplySink.showsFile). */
  showsImages?: boolean;
}

/** The step line the test sinks show: the running step, or the last one when none runs. */
export function testStepLine(steps: readonly AgentStep[] | undefined): string {
  if (steps === undefined || steps.length === 0) return '';
  const running = [...steps].reverse().find((s) => s.state === 'running');
  return running !== undefined ? `-# ${running.title}…` : '';
}

export interface RecordedWrite {
  op: 'post' | 'edit';
  messageId: string;
  channelKey: string;
  text: string;
  final: boolean;
  part: number;
  at: number;
  /** The write's controls as the core asked for them (WriteOptions). */
  replyKey?: string;
  last?: boolean;
  feedback?: boolean;
  steps?: readonly AgentStep[];
  files?: readonly AgentFile[];
}

export interface RecordedMessage {
  id: string;
  channelKey: string;
  content: string;
  final: boolean;
  part: number;
  writes: number;
  postedAt: number;
  interruptedByRecovery: boolean;
  /** Images shown with the message (its last write's files). */
  files?: readonly AgentFile[];
}

export type MessageInit = Partial<Omit<IncomingMessage, 'sink'>> & { text: string; channelId?: string };

export type WriteFault = (op: 'post' | 'edit', text: string) => Error | undefined;

export class TestConnector implements Connector {
  readonly platform = 'test' as const;
  readonly writes: RecordedWrite[] = [];
  readonly messages = new Map<string, RecordedMessage>();
  readonly violations: string[] = [];
  readonly workingShown: string[] = [];
  rateLimitHits = 0;
  handler: MessageHandler | undefined;
  /** Inject a failure for the next writes (return an Error to throw it). */
  fault: WriteFault | undefined;
  /** Told after each write is recorded (a test waits for what the platform shows, not for time). */
  onWrite: ((w: RecordedWrite) => void) | undefined;

  private readonly clock: Clock;
  private readonly limit: number;
  private readonly declaredLimit: number;
  private readonly windowMs: number;
  private readonly maxChars: number;
  private readonly maxMessageAgeMs: number | undefined;
  private readonly needsFinalWrite: boolean;
  private readonly reportHeaders: boolean;
  private readonly showsSteps: boolean;
  private readonly showsImages: boolean;
  /** Steps named in the working indicator (ReplySink.showStep), by channel. */
  readonly statusShown: string[] = [];
  private readonly log = new Map<string, number[]>();
  private nextMessageId = 1;
  private nextEventId = 1;
  private ready = false;

  constructor(opts: TestConnectorOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.limit = opts.bucketLimit ?? 5;
    this.declaredLimit = opts.declaredLimit ?? this.limit;
    this.windowMs = opts.bucketWindowMs ?? 5000;
    this.maxChars = opts.maxChars ?? 2000;
    this.maxMessageAgeMs = opts.maxMessageAgeMs;
    this.needsFinalWrite = opts.needsFinalWrite ?? false;
    this.reportHeaders = opts.reportHeaders ?? true;
    this.showsSteps = opts.showsSteps ?? false;
    this.showsImages = opts.showsImages ?? false;
  }

  async start(handler: MessageHandler): Promise<void> {
    this.handler = handler;
    this.ready = true;
  }

  async shutdown(): Promise<void> {
    this.ready = false;
  }

  isReady(): boolean {
    return this.ready;
  }

  async markInterrupted(_target: ReplyTarget, messageId: string, text: string): Promise<void> {
    const m = this.messages.get(messageId);
    if (m === undefined) throw new Error(`unknown message ${messageId}`);
    m.content = text;
    m.final = true;
    m.interruptedByRecovery = true;
  }

  async postInterrupted(target: ReplyTarget, text: string): Promise<void> {
    const channelKey = `test:channel:${target.place.threadId ?? target.place.channelId}`;
    const id = `msg-${this.nextMessageId++}`;
    this.messages.set(id, {
      id,
      channelKey,
      content: text,
      final: true,
      part: 0,
      writes: 1,
      postedAt: this.clock.now(),
      interruptedByRecovery: true,
    });
  }

  /** A sink for one reply in a place. */
  sink(place: Place): ReplySink {
    const channelKey = `test:channel:${place.threadId ?? place.channelId}`;
    const target: ReplyTarget = { place };
    const bucket: BucketRef = { key: channelKey, limit: this.declaredLimit, windowMs: this.windowMs };
    const sink: ReplySink = {
      maxChars: this.maxChars,
      buckets: () => [bucket],
      showWorking: async () => {
        this.workingShown.push(channelKey);
      },
      clearWorking: async () => {},
      post: async (text, opts) => this.write('post', channelKey, undefined, text, opts),
      edit: async (messageId, text, opts) => this.write('edit', channelKey, messageId, text, opts),
      target,
    };
    if (this.maxMessageAgeMs !== undefined) Object.assign(sink, { maxMessageAgeMs: this.maxMessageAgeMs });
    if (this.needsFinalWrite) Object.assign(sink, { needsFinalWrite: true });
    if (this.showsSteps) {
      Object.assign(sink, {
        showsSteps: true,
        showStep: async (step: AgentStep | undefined) => {
          this.statusShown.push(step?.title ?? '');
        },
      });
    }
    if (this.showsImages) {
      Object.assign(sink, {
        showsFile: (f: AgentFile) => f.url !== undefined && (f.mime ?? '').startsWith('image/'),
      });
    }
    return sink;
  }

  /**
   * Build a user message in a place (defaults: channel C1, user U1, a fresh event id). `channelId`
   * is short for the place `{ platform: 'test', channelId }`; the origin defaults to the place.
   */
  message(init: MessageInit): IncomingMessage {
    const place: Place = init.place ?? { platform: 'test', channelId: init.channelId ?? 'C1' };
    const id = String(this.nextEventId++);
    const msg: IncomingMessage = {
      eventId: init.eventId ?? `ev-${id}`,
      place,
      origin: init.origin ?? place,
      messageId: init.messageId ?? `m-${id}`,
      userId: init.userId ?? 'U1',
      text: init.text,
      isDm: init.isDm ?? false,
      mentionsBot: init.mentionsBot ?? true,
      isFromBot: init.isFromBot ?? false,
      receivedAt: init.receivedAt ?? this.clock.now(),
      sink: this.sink(place),
    };
    if (init.userName !== undefined) msg.userName = init.userName;
    if (init.attachments !== undefined) msg.attachments = init.attachments;
    return msg;
  }

  /** Push a message to the handler (as the platform would). */
  send(init: MessageInit): Promise<HandleResult> {
    if (this.handler === undefined) throw new Error('connector not started');
    return this.handler.handle(this.message(init));
  }

  /** Messages posted in a channel (or thread), in order. */
  messagesIn(channelOrThreadId: string): RecordedMessage[] {
    const key = `test:channel:${channelOrThreadId}`;
    return [...this.messages.values()].filter((m) => m.channelKey === key);
  }

  /** The contents of a channel's messages, in order. */
  contentsIn(channelOrThreadId: string): string[] {
    return this.messagesIn(channelOrThreadId).map((m) => m.content);
  }

  private async write(
    op: 'post' | 'edit',
    channelKey: string,
    messageId: string | undefined,
    text: string,
    opts: WriteOptions,
  ): Promise<PostResult & WriteResult> {
    // Hand control back once, like a network call would, so callers cannot rely on sync writes.
    await Promise.resolve();
    const now = this.clock.now();
    const injected = this.fault?.(op, text);
    if (injected !== undefined) throw injected;
    const times = (this.log.get(channelKey) ?? []).filter((t) => t > now - this.windowMs);
    if (times.length >= this.limit) {
      this.rateLimitHits++;
      this.log.set(channelKey, times);
      throw new PlatformRateLimitedError(channelKey, (times[0] as number) + this.windowMs - now);
    }
    times.push(now);
    this.log.set(channelKey, times);
    const line = testStepLine(opts.steps);
    if (opts.steps !== undefined && !this.showsSteps) this.violations.push(`${op} with steps to a sink without them`);
    if (opts.final && opts.steps !== undefined) this.violations.push(`final ${op} with steps in ${channelKey}`);
    const shown = line === '' ? text : text === '' ? line : `${text}\n${line}`;
    if (shown.trim() === '') this.violations.push(`${op} with empty text in ${channelKey}`);
    if (text.length > this.maxChars) this.violations.push(`${op} of ${text.length} chars in ${channelKey}`);
    text = shown;
    let id = messageId;
    if (op === 'post') {
      id = `msg-${this.nextMessageId++}`;
      this.messages.set(id, {
        id,
        channelKey,
        content: text,
        final: opts.final,
        part: opts.part,
        writes: 1,
        postedAt: now,
        interruptedByRecovery: false,
        ...(opts.files !== undefined ? { files: opts.files } : {}),
      });
    } else {
      const m = id === undefined ? undefined : this.messages.get(id);
      if (m === undefined) {
        this.violations.push(`edit of unknown message ${id}`);
      } else {
        if (m.final) this.violations.push(`edit of ${id} after its final write`);
        m.content = text;
        m.final = opts.final;
        m.writes++;
        if (opts.files !== undefined) m.files = opts.files;
      }
    }
    const recorded: RecordedWrite = {
      op,
      messageId: id as string,
      channelKey,
      text,
      final: opts.final,
      part: opts.part,
      at: now,
      ...(opts.replyKey !== undefined ? { replyKey: opts.replyKey } : {}),
      ...(opts.last !== undefined ? { last: opts.last } : {}),
      ...(opts.feedback !== undefined ? { feedback: opts.feedback } : {}),
      ...(opts.steps !== undefined ? { steps: opts.steps } : {}),
      ...(opts.files !== undefined ? { files: opts.files } : {}),
    };
    this.writes.push(recorded);
    this.onWrite?.(recorded);
    const res: PostResult = { messageId: id as string };
    if (this.reportHeaders) {
      res.rateLimits = [
        {
          bucket: channelKey,
          limit: this.limit,
          remaining: this.limit - times.length,
          resetAfterMs: (times[0] as number) + this.windowMs - now,
        },
      ];
    }
    return res;
  }
}
