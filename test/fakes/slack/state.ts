import type { FakeTimeline } from './stream-chunks.js';
// The fake's data: tokens, channels and their messages. Text is what a user would see.

export interface FakeMessage {
  ts: string;
  channel: string;
  threadTs?: string;
  user?: string;
  botId?: string;
  /** Current text (mrkdwn `text`, or `markdown_text`, or the concatenated stream). */
  text: string;
  /** Which field the text came from. */
  format: 'mrkdwn' | 'markdown';
  streaming: boolean;
  /** Every version of the text, in order (first post, each update / append). */
  versions: string[];
  subtype?: string;
  /** A bot's name on a bot_message (another app's post). */
  username?: string;
  /** Block Kit blocks as last written (undefined: none). chat.update without `blocks` keeps them. */
  blocks?: Record<string, unknown>[];
  /** Secondary attachments as last written (their `blocks` show after the message's blocks). */
  attachments?: Record<string, unknown>[];
  /** The message's `metadata` (event_type, event_payload) as posted. */
  metadata?: Record<string, unknown>;
  /** A native stream's task timeline (`task_update` chunks, stream-chunks.ts). */
  timeline?: FakeTimeline;
  /**
   * A native stream's `blocks` chunks where they show: `at` is the length of the text streamed
   * before them (Slack shows a stream's chunks in order, the blocks between the words).
   */
  streamBlocks?: { at: number; blocks: Record<string, unknown>[] }[];
  /** chat.startStream's `task_display_mode`. */
  taskDisplayMode?: string;
}

/** A chat.postEphemeral: only `user` sees it, and it is not a message of the channel. */
export interface FakeEphemeral {
  channel: string;
  user: string;
  text: string;
  threadTs?: string;
}

export interface TokenInfo {
  teamId: string;
  botUserId: string;
  botId: string;
  kind: 'bot' | 'app';
}

/** assistant.threads.setSuggestedPrompts as a user sees it: the prompts under a message. */
export interface FakePrompts {
  channel: string;
  /** The message they show under (the thread's root, or the channel's latest message). */
  ts: string | undefined;
  title?: string;
  prompts: { title: string; message: string }[];
}

export class FakeState {
  readonly tokens = new Map<string, TokenInfo>();
  /** assistant.threads.setStatus by `channel:thread_ts`: each status and its loading messages. */
  readonly threadStatuses = new Map<string, { status: string; loading?: string[] }[]>();
  /** assistant.threads.setTitle by `channel:thread_ts`: each title set, in order. */
  readonly threadTitles = new Map<string, string[]>();
  /** Suggested prompts set, in order. */
  readonly prompts: FakePrompts[] = [];
  readonly ephemerals: FakeEphemeral[] = [];
  /**
   * Agent sessions by `channel:thread_ts`: the statuses a user saw, in order (a status set again
   * to what it is changes nothing a user sees, so it is not repeated).
   */
  readonly agentStatuses = new Map<string, string[]>();
  private readonly channels = new Map<string, Map<string, FakeMessage>>();
  private tsCounter = 0;
  private readonly base = Math.floor(Date.now() / 1000);

  /**
   * A session's status: `create` (agents.sessions.setStatus) makes the session when it has none;
   * otherwise (chat.stopStream's session_status) a thread without a session stays without one.
   */
  setSessionStatus(channel: string, threadTs: string, status: string, o: { create?: boolean } = {}): void {
    const key = `${channel}:${threadTs}`;
    const seen = this.agentStatuses.get(key);
    if (seen === undefined && o.create !== true) return;
    if (seen?.at(-1) === status) return;
    this.agentStatuses.set(key, [...(seen ?? []), status]);
  }

  nextTs(): string {
    this.tsCounter += 1;
    return `${this.base}.${String(this.tsCounter).padStart(6, '0')}`;
  }

  add(msg: Omit<FakeMessage, 'ts' | 'versions' | 'streaming'> & { ts?: string; streaming?: boolean }): FakeMessage {
    const full: FakeMessage = {
      ...msg,
      ts: msg.ts ?? this.nextTs(),
      streaming: msg.streaming ?? false,
      versions: [msg.text],
    };
    let ch = this.channels.get(full.channel);
    if (!ch) {
      ch = new Map();
      this.channels.set(full.channel, ch);
    }
    ch.set(full.ts, full);
    return full;
  }

  get(channel: string, ts: string): FakeMessage | undefined {
    return this.channels.get(channel)?.get(ts);
  }

  setText(m: FakeMessage, text: string, format: FakeMessage['format']): void {
    m.text = text;
    m.format = format;
    m.versions.push(text);
  }

  delete(channel: string, ts: string): boolean {
    return this.channels.get(channel)?.delete(ts) ?? false;
  }

  list(channel: string): FakeMessage[] {
    return [...(this.channels.get(channel)?.values() ?? [])];
  }

  /** The parent message and its replies, parent first (conversations.replies). */
  thread(channel: string, ts: string): FakeMessage[] {
    return this.list(channel)
      .filter((m) => m.ts === ts || m.threadTs === ts)
      .sort((a, b) => Number(a.ts) - Number(b.ts));
  }

  /** Top-level messages of a channel (and thread parents), newest first (conversations.history). */
  topLevel(channel: string): FakeMessage[] {
    return this.list(channel)
      .filter((m) => m.threadTs === undefined || m.threadTs === m.ts)
      .sort((a, b) => Number(b.ts) - Number(a.ts));
  }
}
