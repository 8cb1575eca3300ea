import type { webApi } from '@slack/bolt';
import {
  PlatformRateLimitedError,
  type PostResult,
  type ReplySink,
  type WriteOptions,
  type WriteResult,
} from '../../core/ports.js';
import { scrubSecrets } from '../../logger.js';
import { createWorkingIndicator, type SinkDeps, type SlackDestination, teamOf } from './destination.js';
import {
  appendBucket,
  postBucket,
  slackErrorCode,
  startBucket,
  endStreamBucket,
  translateSlackError,
  updateBucket,
  channelUpdateBucket,
} from './rate-limits.js';
import { createFormLadder, type Form, replyTarget } from './reply-sink-edit.js';
import { withAgentSession } from './agent-sessions.js';
import { feedbackBlock } from './controls.js';
import { renderMarkdownText, stablePrefixEnd } from './render.js';
import { findStarted, formRefusalCode, isUncertain, plainTexts, postOverflow, readShown } from './failed-writes.js';
import { historyBucket } from './rate-limits.js';
import { createFileUploads, uploadsBytes } from './file-uploads.js';
import { imageBlocks, showsImage, stepWords, TaskTimeline } from './agent-view.js';
import { hasTable, streamChunks, streamView } from './stream-tables.js';

// Native streaming: chat.startStream, then chat.appendStream with only what is new, then
// chat.stopStream. The pump gives the full text of the current message each time; this sink
// remembers what each message already shows and appends the rest.
//
// When a stream method fails (channel_type_not_supported, message_not_in_streaming_state, ...)
// the reply continues by edits: the stream is stopped and the message replaced with its full
// text via chat.update, so nothing is lost or shown twice. Both use `markdown_text` (12,000
// characters), so the pump's message size stays valid after a fallback.

export const NATIVE_MAX_CHARS = 11_000;
/** Slack stops accepting appends after about 5 minutes; the pump rolls over before. */
export const NATIVE_MAX_MESSAGE_AGE_MS = 270_000;

interface StreamState {
  /** The rendered text the message shows so far. */
  shown: string;
  streaming: boolean;
  /** This message fell back to chat.update. */
  edited: boolean;
  /** A stopStream's answer was lost: a repeat answered "not streaming" means it took effect. */
  endUncertain?: boolean;
  /** An appendStream's answer was lost: the text the message shows if it took effect. */
  appendUncertain?: string;
}

export function createNativeSink(dest: SlackDestination, deps: SinkDeps): ReplySink {
  const channel = dest.place.channelId;
  const teamId = teamOf(dest.place);
  const post = postBucket(deps.limits, teamId, channel);
  const append = appendBucket(deps.limits, teamId);
  const update = updateBucket(deps.limits, teamId);
  const channelUpdate = channelUpdateBucket(deps.limits, teamId, channel);
  // chat.stopStream is Tier 2 with a bucket of its own: its 429s teach that bucket, not appends'.
  const stop = endStreamBucket(deps.limits, teamId);
  // chat.startStream is Tier 2 per workspace, and posts in the channel: it pays both.
  const start = startBucket(deps.limits, teamId);
  const working = createWorkingIndicator(dest, deps);
  const messages = new Map<string, StreamState>();
  /** After chat.startStream failed, every later message of this reply is posted and edited. */
  let streamsFailed = false;
  /** The message the pump writes to now (the last posted): its edits' bucket follows its mode. */
  let current: StreamState | undefined;
  const threadTs: string = requireThread(dest);
  const history = historyBucket(deps.limits, teamId);
  /** The part whose start (or post) lost its answer: its next attempt first looks for the message. */
  let uncertainPart: number | undefined;
  /** A part whose stream started but whose final write failed: its retry finishes that message. */
  let startedPart: { part: number; ts: string } | undefined;
  /** The newest message of this reply: a lost later start can only be after it. */
  let lastTs: string | undefined;

  const markPosted = () => deps.onPosted?.(channel, threadTs);
  // Markdown Slack refused for its form goes again as plain `text` (reply-sink-edit.ts createFormLadder).
  const ladder = createFormLadder(deps.logger);
  const overflowPosted = new Map<string, string[]>();
  const uploads = createFileUploads(dest.client, { channel, threadTs }, deps.logger);
  /** Each stream's task timeline (an agent's steps), by message. */
  const timelines = new Map<string, TaskTimeline>();
  const timelineOf = (ts: string): TaskTimeline => {
    let t = timelines.get(ts);
    if (t === undefined) timelines.set(ts, (t = new TaskTimeline()));
    return t;
  };
  /** A message of steps alone outside a stream (posted or edited) shows the step in words. */
  const orStep = (text: string, opts: WriteOptions): string =>
    /\S/.test(text) ? text : stepWords(opts.steps, false) || text;

  /** A write's forms: `markdown_text`, then plain mrkdwn `text` parts (the rest posted on a final write). */
  function markdownForms(text: string, final: boolean, update: boolean): Form[] {
    return [
      { level: 1, build: () => ({ args: { markdown_text: renderMarkdownText(text) } }) },
      {
        level: 2,
        build: () => {
          const [first = '…', ...rest] = plainTexts(text);
          return {
            args: { text: first, ...(update ? { blocks: [] } : {}) },
            ...(final && rest.length > 0 ? { overflow: rest } : {}),
          };
        },
      },
    ];
  }

  async function postMarkdown(text: string, part: number, final: boolean): Promise<PostResult> {
    try {
      const { value: res, form } = await ladder.send(markdownForms(text, final, false), (f) =>
        dest.client.chat.postMessage({
          channel: channel,
          thread_ts: threadTs,
          ...f.args,
          unfurl_links: false,
          unfurl_media: false,
        } as webApi.ChatPostMessageArguments),
      );
      const ts = res.ts ?? '';
      current = { shown: renderMarkdownText(text), streaming: false, edited: true };
      messages.set(ts, current);
      lastTs = ts;
      markPosted();
      if (form.overflow) await postOverflow(dest.client, { channel, threadTs }, ts, form.overflow, overflowPosted);
      return { messageId: ts, ...ladder.take() };
    } catch (err) {
      const e = translateSlackError(err, post.key);
      if (isUncertain(e)) uncertainPart = part;
      throw e;
    }
  }

  /**
   * After a start or post whose answer was lost: the message it made, if any, finished by edits
   * (its stream stopped, its text replaced): a second stream is never started beside it.
   */
  async function adoptLost(text: string, opts: WriteOptions): Promise<PostResult | undefined> {
    let found: { ts: string; text: string | undefined } | undefined;
    try {
      found = await findStarted(dest, lastTs ?? dest.userMessageTs, new Set(messages.keys()));
    } catch (err) {
      throw translateSlackError(err, history.key);
    }
    if (found === undefined) return undefined;
    deps.logger.info('Slack stream start whose answer was lost found; continuing in it');
    const { ts } = found;
    // A stream that shows the start of this text goes on streaming (its stop carries the buttons);
    // anything else is finished by edits.
    const streaming = !streamsFailed && found.text !== undefined && renderMarkdownText(text).startsWith(found.text);
    const state: StreamState = streaming
      ? { shown: found.text ?? '', streaming: true, edited: false }
      : { shown: '', streaming: !streamsFailed, edited: true };
    messages.set(ts, state);
    current = state;
    lastTs = ts;
    markPosted();
    // Found: if the write below fails, the post's retry finishes this message (never looks again).
    uncertainPart = undefined;
    startedPart = { part: opts.part, ts };
    const written = streaming
      ? await edit(ts, text, opts)
      : await replaceByEdit(ts, state, orStep(text, opts), opts.final);
    startedPart = undefined;
    return { messageId: ts, ...written };
  }

  async function replaceByEdit(ts: string, state: StreamState, text: string, final: boolean): Promise<WriteResult> {
    if (state.streaming) {
      try {
        // The reply goes on by this edit: Slack's Stop stays (its end sets the session `active`).
        await dest.client.chat.stopStream({
          channel: channel,
          ts,
          ...(deps.session ? { session_status: 'processing' } : {}),
        });
      } catch (err) {
        // Already stopped by Slack (timeout) is the usual reason; the update below decides.
        deps.logger.debug({ err: scrubSecrets(String(err)) }, 'chat.stopStream before fallback failed');
      }
      state.streaming = false;
    }
    state.edited = true;
    const rendered = renderMarkdownText(text);
    try {
      const { form } = await ladder.send(markdownForms(text, final, true), (f) =>
        dest.client.chat.update({ channel: channel, ts, ...f.args } as webApi.ChatUpdateArguments),
      );
      if (form.overflow) await postOverflow(dest.client, { channel, threadTs }, ts, form.overflow, overflowPosted);
    } catch (err) {
      throw translateSlackError(err, update.key);
    }
    state.shown = rendered;
    return ladder.take();
  }

  /** A stream call failed: rate limits are the scheduler's business, anything else means edits. */
  function streamFailure(err: unknown, bucket: string): Error | undefined {
    const translated = translateSlackError(err, bucket);
    if (translated instanceof PlatformRateLimitedError) return translated;
    // Refused for its form (Markdown too long, blocks): counted; the words go on by edits.
    const refused = formRefusalCode(err);
    if (refused !== undefined) ladder.note(refused);
    deps.logger.info({ err: translated.message }, 'Slack native stream failed; continuing with edits');
    return undefined;
  }

  async function edit(messageId: string, text: string, opts: WriteOptions): Promise<WriteResult> {
    const state = messages.get(messageId);
    if (!state) {
      // Not made by this sink (a restart): an edit is all that is possible.
      return replaceByEdit(messageId, { shown: '', streaming: false, edited: true }, orStep(text, opts), opts.final);
    }
    if (state.streaming && deps.session?.streamStopped?.(channel, messageId) === true) {
      // Slack stopped this stream (agent_session_stopped named it): an append would fail with
      // message_not_in_streaming_state, so the message is finished by an edit right away.
      state.streaming = false;
      return replaceByEdit(messageId, state, orStep(text, opts), opts.final);
    }
    if (state.edited) return replaceByEdit(messageId, state, orStep(text, opts), opts.final);
    const committed = opts.final ? text : text.slice(0, stablePrefixEnd(text));
    // Its table as a marker (stream-tables.ts): sent as a table block, in place.
    const view = streamView(committed, opts.final);
    const rendered = view.shown;
    if (!rendered.startsWith(state.shown)) {
      // The text changed in what was already shown: only a full replacement is right.
      if (!opts.final && state.shown.startsWith(rendered)) return {}; // nothing new is stable yet
      return replaceByEdit(messageId, state, orStep(text, opts), opts.final);
    }
    if (state.appendUncertain !== undefined) {
      // An append whose answer was lost: what the message shows says whether it took effect.
      const was = state.appendUncertain;
      let now: string | undefined;
      try {
        now = await readShown(dest, messageId);
      } catch (err) {
        throw translateSlackError(err, history.key);
      }
      delete state.appendUncertain;
      if (now === was) state.shown = was;
      else if (now !== state.shown) return replaceByEdit(messageId, state, orStep(text, opts), opts.final);
      if (!rendered.startsWith(state.shown)) return replaceByEdit(messageId, state, orStep(text, opts), opts.final);
    }
    const suffix = rendered.slice(state.shown.length);
    // Steps that changed join the append as task_update chunks (with no new text: alone).
    const timeline = timelineOf(messageId);
    const tasks = state.streaming ? timeline.changes(opts.steps) : [];
    try {
      if (tasks.length > 0 || hasTable(suffix)) {
        const chunks = [...streamChunks(suffix, view.tables), ...tasks];
        await dest.client.chat.appendStream({ channel: channel, ts: messageId, chunks });
        timeline.shown(tasks);
        state.shown = rendered;
      } else if (suffix !== '') {
        await dest.client.chat.appendStream({ channel: channel, ts: messageId, markdown_text: suffix });
        state.shown = rendered;
      }
    } catch (err) {
      if (isUncertain(translateSlackError(err, append.key))) {
        // The chunk may show already: the next write reads the message before appending again.
        state.appendUncertain = rendered;
        throw translateSlackError(err, append.key);
      }
      const rethrow = streamFailure(err, append.key);
      if (rethrow) throw rethrow;
      // Refused (not in streaming state, ...): the edit replaces the whole text.
      return replaceByEdit(messageId, state, orStep(text, opts), opts.final);
    }
    if (opts.final && state.streaming) {
      // Slack's streams accept a `blocks` chunk on start, append and stop; this sink streams text
      // only and gives the finished reply's feedback buttons with stopStream. The Stop while it
      // streams is the agent session's (`stop` written in the thread works everywhere): a part
      // that is not the reply's last stops its stream with the session still `processing`, so
      // Slack's Stop stays up until the last part ends (sessionStatus).
      const withFeedback = opts.last === true && opts.feedback === true && opts.replyKey !== undefined;
      // The timeline's open steps end complete; the last write's images show above the buttons.
      const closing = timeline.closing();
      const images = imageBlocks(opts.files);
      const endArgs = {
        channel: channel,
        ts: messageId,
        ...(closing.length > 0 ? { chunks: closing } : {}),
        ...sessionStatus(opts),
      };
      const blocks = [
        ...images,
        ...(withFeedback && opts.replyKey !== undefined ? [feedbackBlock(opts.replyKey)] : []),
      ];
      try {
        try {
          await dest.client.chat.stopStream({ ...endArgs, ...(blocks.length > 0 ? { blocks } : {}) });
          timeline.shown(closing);
        } catch (err) {
          // Feedback buttons or images Slack refused: the stream still ends, without them.
          const refused = blocks.length > 0 ? formRefusalCode(err) : undefined;
          if (refused === undefined) throw err;
          ladder.note(refused);
          await dest.client.chat.stopStream(endArgs);
        }
        state.streaming = false;
      } catch (err) {
        if (state.endUncertain === true && slackErrorCode(err) === 'message_not_in_streaming_state') {
          // The stop whose answer was lost took effect, with its buttons: nothing is left to do.
          state.streaming = false;
          return ladder.take();
        }
        if (isUncertain(translateSlackError(err, stop.key))) {
          // It may have stopped: its repeat tells (an edit instead would lose the feedback buttons).
          state.endUncertain = true;
          throw translateSlackError(err, stop.key);
        }
        const rethrow = streamFailure(err, stop.key);
        if (rethrow) throw rethrow;
        return replaceByEdit(messageId, state, orStep(text, opts), opts.final);
      }
    }
    return ladder.take();
  }

  /**
   * chat.stopStream's `session_status` (Slack's reference: the session's status after the stop,
   * `active` when absent): `processing` while later parts of the reply are still to come, so
   * Slack's Stop is not taken down between two messages of one reply. Only with a session held:
   * a stream without one sets none.
   */
  function sessionStatus(opts: WriteOptions): { session_status?: 'active' | 'processing' } {
    if (deps.session === undefined) return {};
    return { session_status: opts.last === true ? 'active' : 'processing' };
  }

  return withAgentSession(deps.session, {
    maxChars: NATIVE_MAX_CHARS,
    maxMessageAgeMs: NATIVE_MAX_MESSAGE_AGE_MS,
    // stopStream ends the stream, and words held back while streaming are sent with it.
    needsFinalWrite: true,
    target: replyTarget(dest, 'native'),
    // chat.postMessage and chat.startStream share the channel's post bucket; a stream's start
    // also pays its Tier 2 bucket. Edits go by chat.appendStream until the current message fell
    // back to chat.update (a stream call failed, or its shown text had to be replaced): from
    // then on they count against update.
    buckets(op) {
      if (op === 'post') {
        const posting = streamsFailed ? [post] : [post, start];
        // After a lost start the next one may read the thread and finish the message by an update.
        return uncertainPart !== undefined ? [...posting, history, update] : posting;
      }
      if (current?.appendUncertain !== undefined) return [append, history];
      return streamsFailed || current?.edited === true ? [update, channelUpdate] : [append];
    },
    showWorking: () => working.show(),
    clearWorking: () => working.clear(),
    // An agent's steps: the stream's task timeline, and the assistant status before it starts.
    showsSteps: true,
    showStep: (step) => working.step(step),
    showsFile: (f) => showsImage(f) || uploadsBytes(f),

    async post(markdown, opts): Promise<PostResult> {
      // Files sent as bytes go up first; one Slack refused is named under the text.
      const text = markdown + (await uploads.before(opts));
      if (startedPart?.part === opts.part) {
        // The stream started; its final write failed: finish that message, start no other.
        const { ts } = startedPart;
        const written = await edit(ts, text, opts);
        startedPart = undefined;
        return { messageId: ts, ...written };
      }
      if (uncertainPart === opts.part) {
        const adopted = await adoptLost(text, opts);
        uncertainPart = undefined;
        if (adopted !== undefined) return adopted;
      }
      if (streamsFailed) return postMarkdown(orStep(text, opts), opts.part, opts.final);
      const view = streamView(text, opts.final);
      const rendered = view.shown;
      // An agent's steps start the stream's timeline (with no text yet: the timeline alone).
      const timeline = new TaskTimeline();
      const tasks = timeline.changes(opts.steps);
      const content =
        tasks.length > 0 || hasTable(rendered)
          ? {
              chunks: [...streamChunks(rendered, view.tables), ...tasks],
              ...(tasks.length > 0 ? { task_display_mode: 'timeline' } : {}),
            }
          : { markdown_text: rendered };
      let ts: string;
      try {
        const res = await dest.client.chat.startStream({
          channel: channel,
          thread_ts: threadTs,
          ...content,
          recipient_user_id: dest.userId,
          recipient_team_id: dest.userTeamId ?? teamId,
        });
        ts = res.ts ?? '';
        timeline.shown(tasks);
        timelines.set(ts, timeline);
      } catch (err) {
        const translated = translateSlackError(err, start.key);
        if (isUncertain(translated)) {
          // It may have started: the next attempt looks for it before starting another.
          uncertainPart = opts.part;
          throw translated;
        }
        const rethrow = streamFailure(err, start.key);
        if (rethrow) throw rethrow;
        streamsFailed = true;
        return postMarkdown(orStep(text, opts), opts.part, opts.final);
      }
      markPosted();
      const state: StreamState = { shown: rendered, streaming: true, edited: false };
      messages.set(ts, state);
      current = state;
      lastTs = ts;
      if (!opts.final) return { messageId: ts, ...ladder.take() };
      startedPart = { part: opts.part, ts };
      const ended = await edit(ts, text, opts);
      startedPart = undefined;
      return { messageId: ts, ...ended };
    },

    edit: async (messageId, text, opts) => edit(messageId, text + (await uploads.before(opts)), opts),
  });
}

function requireThread(dest: SlackDestination): string {
  if (!dest.place.threadId) throw new Error('native Slack streams need a thread');
  return dest.place.threadId;
}
