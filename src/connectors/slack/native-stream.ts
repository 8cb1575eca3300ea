import type { types } from '@slack/bolt';
import { type BucketRef, PlatformRateLimitedError, type WriteOptions } from '../../core/ports.js';
import { imageBlocks, TaskTimeline } from './agent-view.js';
import { feedbackBlock } from './controls.js';
import { type SinkDeps, type SlackDestination, teamOf } from './destination.js';
import { formRefusalCode } from './plain-fallback.js';
import { createFormLadder, type FormLadder } from './form-ladder.js';
import {
  appendBucket,
  channelUpdateBucket,
  historyBucket,
  postBucket,
  startBucket,
  endStreamBucket,
  translateSlackError,
  updateBucket,
} from './rate-limits.js';
import { hasTable, streamChunks, type StreamView } from './stream-tables.js';

// One message of a native reply as a Slack stream: chat.startStream, chat.appendStream with only
// what is new, chat.stopStream. Each call carries the text as `markdown_text`, or as chunks when
// the text holds a table (its `blocks` chunk, stream-tables.ts) or an agent's steps changed (its
// `task_update` chunks, agent-view.ts TaskTimeline). The reply's sink (reply-sink-native.ts)
// decides which call a write makes; a call that fails is its business (native-fallback.ts).

type KnownBlock = types.KnownBlock;

/** What the sink knows of one message of a native reply. */
export interface NativeMessage {
  /** The rendered text the message shows so far (a table as its marker, stream-tables.ts). */
  shown: string;
  streaming: boolean;
  /** This message fell back to chat.update. */
  edited: boolean;
  /** The stream's task timeline (an agent's steps). */
  timeline: TaskTimeline;
  /** A stopStream's answer was lost: a repeat answered "not streaming" means it took effect. */
  endUncertain?: boolean;
  /** An appendStream's answer was lost: the text the message shows if it took effect. */
  appendUncertain?: string;
}

/** The buckets a native reply's calls count against. */
export interface NativeBuckets {
  /** The channel's posts: chat.postMessage and chat.startStream. */
  post: BucketRef;
  /** chat.startStream is Tier 2 per workspace, and posts in the channel: it pays both. */
  start: BucketRef;
  append: BucketRef;
  /** chat.stopStream is Tier 2 with a bucket of its own: its 429s teach that bucket, not appends'. */
  stop: BucketRef;
  update: BucketRef;
  /** Edits count in the channel's share of the workspace's updates too. */
  channelUpdate: BucketRef;
  /** The reads that look for a message whose write lost its answer. */
  history: BucketRef;
}

/** What every call of one native reply needs: where it goes, its buckets, its form ladder. */
export interface NativeContext {
  dest: SlackDestination;
  deps: SinkDeps;
  channel: string;
  threadTs: string;
  teamId: string;
  buckets: NativeBuckets;
  /** Markdown Slack refused for its rich form goes again as plain `text` (the plain fallback, form-ladder.ts). */
  ladder: FormLadder;
  /** A plain final write's extra parts already posted, by message (failed-writes.ts postOverflow). */
  overflowPosted: Map<string, string[]>;
}

export function nativeContext(dest: SlackDestination, deps: SinkDeps): NativeContext {
  const channel = dest.place.channelId;
  const teamId = teamOf(dest.place);
  return {
    dest,
    deps,
    channel,
    threadTs: requireThread(dest),
    teamId,
    buckets: {
      post: postBucket(deps.limits, teamId, channel),
      start: startBucket(deps.limits, teamId),
      append: appendBucket(deps.limits, teamId),
      stop: endStreamBucket(deps.limits, teamId),
      update: updateBucket(deps.limits, teamId),
      channelUpdate: channelUpdateBucket(deps.limits, teamId, channel),
      history: historyBucket(deps.limits, teamId),
    },
    ladder: createFormLadder(deps.logger),
    overflowPosted: new Map(),
  };
}

function requireThread(dest: SlackDestination): string {
  if (!dest.place.threadId) throw new Error('native Slack streams need a thread');
  return dest.place.threadId;
}

/**
 * Starts a message's stream showing `view`: an agent's steps start its timeline (with no text yet:
 * the timeline alone), a table goes as its block. Gives the new message and its timeline.
 */
export async function startStream(
  ctx: NativeContext,
  view: StreamView,
  steps: WriteOptions['steps'],
): Promise<{ ts: string; timeline: TaskTimeline }> {
  const timeline = new TaskTimeline();
  const tasks = timeline.changes(steps);
  const content =
    tasks.length > 0 || hasTable(view.shown)
      ? {
          chunks: [...streamChunks(view.shown, view.tables), ...tasks],
          ...(tasks.length > 0 ? { task_display_mode: 'timeline' } : {}),
        }
      : { markdown_text: view.shown };
  const res = await ctx.dest.client.chat.startStream({
    channel: ctx.channel,
    thread_ts: ctx.threadTs,
    ...content,
    recipient_user_id: ctx.dest.userId,
    recipient_team_id: ctx.dest.userTeamId ?? ctx.teamId,
  });
  timeline.shown(tasks);
  return { ts: res.ts ?? '', timeline };
}

/**
 * Appends what `view` shows beyond what message `ts` shows; the steps that changed join it as
 * task_update chunks (with no new text: alone). Once Slack took it, the message shows `view`.
 */
export async function appendToStream(
  ctx: NativeContext,
  ts: string,
  msg: NativeMessage,
  view: StreamView,
  steps: WriteOptions['steps'],
): Promise<void> {
  const suffix = view.shown.slice(msg.shown.length);
  const tasks = msg.streaming ? msg.timeline.changes(steps) : [];
  if (tasks.length > 0 || hasTable(suffix)) {
    const chunks = [...streamChunks(suffix, view.tables), ...tasks];
    await ctx.dest.client.chat.appendStream({ channel: ctx.channel, ts, chunks });
    msg.timeline.shown(tasks);
    msg.shown = view.shown;
  } else if (suffix !== '') {
    await ctx.dest.client.chat.appendStream({ channel: ctx.channel, ts, markdown_text: suffix });
    msg.shown = view.shown;
  }
}

/**
 * Stops message `ts`'s stream: its timeline's open steps end complete, and the last write's
 * images and the reply's feedback buttons show under it. Slack's streams accept a `blocks` chunk
 * on start, append and stop; this sink gives the finished reply's buttons with the stop. Should
 * Slack refuse those blocks for their form, the stream still ends, without them.
 */
export async function stopStream(
  ctx: NativeContext,
  ts: string,
  timeline: TaskTimeline,
  opts: WriteOptions,
): Promise<void> {
  const closing = timeline.closing();
  const endArgs = {
    channel: ctx.channel,
    ts,
    ...(closing.length > 0 ? { chunks: closing } : {}),
    ...sessionStatus(ctx.deps, opts),
  };
  const blocks = endBlocks(opts);
  try {
    await ctx.dest.client.chat.stopStream({ ...endArgs, ...(blocks.length > 0 ? { blocks } : {}) });
    timeline.shown(closing);
  } catch (err) {
    const refused = blocks.length > 0 ? formRefusalCode(err) : undefined;
    if (refused === undefined) throw err;
    ctx.ladder.note(refused);
    await ctx.dest.client.chat.stopStream(endArgs);
  }
}

/** What shows under a stopped stream: the last write's images, then the reply's feedback buttons. */
function endBlocks(opts: WriteOptions): KnownBlock[] {
  const withFeedback = opts.last === true && opts.feedback === true && opts.replyKey !== undefined;
  return [
    ...imageBlocks(opts.files),
    ...(withFeedback && opts.replyKey !== undefined ? [feedbackBlock(opts.replyKey)] : []),
  ];
}

/**
 * chat.stopStream's `session_status` (Slack's reference: the session's status after the stop,
 * `active` when absent). The Stop while a reply streams is its agent session's (`stop` written in
 * the thread works everywhere): a part that is not the reply's last stops its stream with the
 * session still `processing`, so Slack's Stop is not taken down between two messages of one
 * reply. Only with a session held: a stream without one sets none.
 */
export function sessionStatus(deps: SinkDeps, opts: WriteOptions): { session_status?: 'active' | 'processing' } {
  if (deps.session === undefined) return {};
  return { session_status: opts.last === true ? 'active' : 'processing' };
}

/**
 * A stream call failed other than by a lost answer: its 429 is thrown, the scheduler's business;
 * anything else is noted (a refusal for its form counted) and the message goes on by edits.
 */
export function fallBackFromStream(ctx: NativeContext, err: unknown, bucket: BucketRef): void {
  const translated = translateSlackError(err, bucket.key);
  if (translated instanceof PlatformRateLimitedError) throw translated;
  const refused = formRefusalCode(err);
  if (refused !== undefined) ctx.ladder.note(refused);
  ctx.deps.logger.info({ err: translated.message }, 'Slack native stream failed; continuing with edits');
}
