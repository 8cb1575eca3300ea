import type {
  BucketRef,
  PostResult,
  RefusalChannel,
  ReplySink,
  ReplyTarget,
  WriteOptions,
  WriteResult,
} from '../../core/ports.js';
import type { AgentStep } from '../../core/chat-port.js';
import { type PageFile, pageFile, type TurnEvents } from './turn-events.js';
import type { ReplyState, ReplyView } from './history-merge.js';
import type { ConversationTable } from './conversation-table.js';

// The sink of one turn of the page: the relay, scheduler, writer and splitting write through it as
// they write to Slack or Discord. It records each post and edit as a ReplyView and publishes it
// to the pages following the conversation (SSE, see streams.ts), so the page shows what a
// platform would get, edit by edit; the steps and files go out as turn events (turn-events.ts).

/** Characters in one message of a reply: longer replies continue in a new one, as on a platform. */
export const PLAYGROUND_MAX_CHARS = 4000;

/** What every sink of the connector shares. */
export interface SinkContext {
  table: ConversationTable;
  turns: TurnEvents;
  /** Replies whose Stop was pressed (their key, or `conversation:<id>`): their final write shows `stopped`. */
  stopRequested: Set<string>;
  /** Writes per second allowed in one conversation. */
  perSecond: number;
}

export class PlaygroundSink implements ReplySink {
  readonly maxChars = PLAYGROUND_MAX_CHARS;
  readonly needsFinalWrite = true;
  readonly target: ReplyTarget;
  readonly views: ReplyView[] = [];
  /**
   * Refusals (slow down, busy) go to this conversation's page, every time: its browser is the
   * only one that sees it, so none is held back as a public notice would be.
   */
  readonly refusal: RefusalChannel;
  private readonly bucket: BucketRef;
  /** Every step shown so far, by id, in its latest state (the list kept when it ends, see foldSteps). */
  private readonly seenSteps = new Map<string, AgentStep>();

  constructor(
    private readonly ctx: SinkContext,
    private readonly conversation: string,
    private readonly eventId: string,
  ) {
    this.target = { place: { platform: 'playground', channelId: conversation } };
    this.bucket = { key: `playground:${conversation}`, limit: ctx.perSecond, windowMs: 1000, perPlace: true };
    this.refusal = {
      private: true,
      buckets: [this.bucket],
      send: async (text) => {
        ctx.table.publish({
          id: `notice-${this.eventId}`,
          conversation: this.conversation,
          text,
          state: 'final',
          feedback: false,
          writes: 1,
          notice: true,
        });
        return {};
      },
    };
  }

  buckets(): BucketRef[] {
    return [this.bucket];
  }
  async showWorking(): Promise<void> {
    this.ctx.turns.emit(this.conversation, { kind: 'turn', eventId: this.eventId, state: 'working' });
  }
  async clearWorking(): Promise<void> {}

  // An agent's work (issue 36). The page draws the steps itself (a line under the reply) and
  // offers every file (a link, or a download of the bytes); the sources come in the final text,
  // as the core writes them for every platform.
  readonly showsSteps = true;
  readonly showsFile = (): boolean => true;

  /** The running step before anything is shown (the typing indicator names it). */
  async showStep(step: AgentStep | undefined): Promise<void> {
    this.steps(step === undefined ? [] : [step]);
  }

  /** The reply's steps so far (each by id, its latest state): `[]` takes the line away. */
  private steps(steps: readonly AgentStep[]): void {
    for (const st of steps) this.seenSteps.set(st.id, { ...st });
    const event = { kind: 'step' as const, eventId: this.eventId, steps: steps.map((st) => ({ ...st })) };
    this.ctx.turns.emit(this.conversation, event);
  }

  /** A file or image the assistant made: a link or a download in the page. */
  private file(file: PageFile): void {
    this.ctx.turns.emit(this.conversation, { kind: 'file', eventId: this.eventId, file });
  }

  async post(text: string, o: WriteOptions): Promise<PostResult> {
    const view: ReplyView = {
      id: `${this.eventId}.${o.part}`,
      conversation: this.conversation,
      text,
      state: 'streaming',
      feedback: false,
      writes: 0,
    };
    this.views.push(view);
    this.apply(view, text, o);
    return { messageId: view.id };
  }

  async edit(messageId: string, text: string, o: WriteOptions): Promise<WriteResult> {
    const view = this.views.find((v) => v.id === messageId) ?? this.ctx.table.findReply(this.conversation, messageId);
    if (view === undefined) return {};
    this.apply(view, text, o);
    return {};
  }

  private apply(view: ReplyView, text: string, o: WriteOptions): void {
    // A final write carries no steps: the line goes away with the reply's last word.
    if (o.steps !== undefined || o.final) this.steps(o.final ? [] : (o.steps ?? []));
    if (o.last && o.files !== undefined && o.files.length > 0) {
      // Kept with the reply's last message too: a reload shows them again (history-merge.ts).
      view.files = o.files.map(pageFile);
      for (const f of view.files) this.file(f);
    }
    if (o.last) this.foldSteps(view);
    view.text = text;
    view.writes += 1;
    if (o.replyKey !== undefined) view.replyKey = o.replyKey;
    if (o.final) {
      // A Stop by conversation (before the first word) names no key: the reply written there is it.
      const byPlace = this.ctx.stopRequested.delete(`conversation:${this.conversation}`);
      const stopped = byPlace || (o.replyKey !== undefined && this.ctx.stopRequested.has(o.replyKey));
      view.state = stopped ? 'stopped' : 'final';
      view.feedback = o.last === true && o.feedback === true;
    } else {
      view.state = 'streaming';
    }
    this.ctx.table.publish(view);
  }

  /**
   * The steps the reply took, kept on its last message once it ended (the page folds them into a
   * list under it, and a reload shows the same): a step still running is done, as the core marks it.
   */
  private foldSteps(view: ReplyView): void {
    if (this.seenSteps.size === 0) return;
    view.steps = [...this.seenSteps.values()].map((st) => (st.state === 'running' ? { ...st, state: 'done' } : st));
  }

  /** After the relay is done with the message: a failed or cut reply says so. */
  settle(state: ReplyState | undefined): void {
    const last = this.views.at(-1);
    if (last === undefined || state === undefined) return;
    if (last.state === 'stopped' && state !== 'error') return;
    this.foldSteps(last);
    last.state = state;
    last.feedback = state === 'final' ? last.feedback : false;
    this.ctx.table.publish(last);
  }
}
