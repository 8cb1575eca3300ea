import type { webApi } from '@slack/bolt';
import type { WriteOptions, WriteResult } from '../../core/ports.js';
import { scrubSecrets } from '../../logger.js';
import { stepWords } from './agent-view.js';
import { plainTexts, postOverflow } from './plain-fallback.js';
import type { NativeContext, NativeMessage } from './native-stream.js';
import { renderMarkdownText } from './render.js';
import type { Form } from './form-ladder.js';
import { translateSlackError } from './rate-limits.js';

// A native reply's fallback to edit mode. When a stream method fails (channel_type_not_supported,
// message_not_in_streaming_state, ...) the message continues by edits: its stream is stopped and
// the message replaced with its full text via chat.update, so nothing is lost or shown twice; once
// chat.startStream failed, the reply's later messages are posted and edited. Both use
// `markdown_text` (12,000 characters), so the pump's message size stays valid after a fallback.

/** A message of steps alone outside a stream (posted or edited) shows the step in words. */
export function orStep(text: string, opts: WriteOptions): string {
  return /\S/.test(text) ? text : stepWords(opts.steps, false) || text;
}

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

/**
 * Posts `text` as a new message of the thread, in the richest form Slack takes. Gives its ts and,
 * for a plain final write, the parts still to post after it (postOverflowParts). Errors untranslated.
 */
export async function postMarkdown(
  ctx: NativeContext,
  text: string,
  final: boolean,
): Promise<{ ts: string; overflow?: string[] | undefined }> {
  const { value: res, form } = await ctx.ladder.send(markdownForms(text, final, false), (f) =>
    ctx.dest.client.chat.postMessage({
      channel: ctx.channel,
      thread_ts: ctx.threadTs,
      ...f.args,
      unfurl_links: false,
      unfurl_media: false,
    } as webApi.ChatPostMessageArguments),
  );
  return { ts: res.ts ?? '', overflow: form.overflow };
}

/** A plain final write's parts beyond the first, posted after message `ts` (once each). */
export async function postOverflowParts(ctx: NativeContext, ts: string, overflow: string[] | undefined): Promise<void> {
  if (!overflow) return;
  await postOverflow(
    ctx.dest.client,
    { channel: ctx.channel, threadTs: ctx.threadTs },
    ts,
    overflow,
    ctx.overflowPosted,
  );
}

/**
 * Replaces message `ts`'s text with `text` by chat.update (its stream stopped first): from then on
 * the message is edited, never appended to.
 */
export async function replaceByEdit(
  ctx: NativeContext,
  ts: string,
  msg: NativeMessage,
  text: string,
  final: boolean,
): Promise<WriteResult> {
  if (msg.streaming) {
    await stopBeforeEdits(ctx, ts);
    msg.streaming = false;
  }
  msg.edited = true;
  const rendered = renderMarkdownText(text);
  try {
    const { form } = await ctx.ladder.send(markdownForms(text, final, true), (f) =>
      ctx.dest.client.chat.update({ channel: ctx.channel, ts, ...f.args } as webApi.ChatUpdateArguments),
    );
    await postOverflowParts(ctx, ts, form.overflow);
  } catch (err) {
    throw translateSlackError(err, ctx.buckets.update.key);
  }
  msg.shown = rendered;
  return ctx.ladder.take();
}

/** Stops a stream the message's edits go on from; a failure is left to the update after it. */
async function stopBeforeEdits(ctx: NativeContext, ts: string): Promise<void> {
  try {
    // The reply goes on by this edit: Slack's Stop stays (its end sets the session `active`).
    await ctx.dest.client.chat.stopStream({
      channel: ctx.channel,
      ts,
      ...(ctx.deps.session ? { session_status: 'processing' } : {}),
    });
  } catch (err) {
    // Already stopped by Slack (timeout) is the usual reason; the update below decides.
    ctx.deps.logger.debug({ err: scrubSecrets(String(err)) }, 'chat.stopStream before fallback failed');
  }
}
