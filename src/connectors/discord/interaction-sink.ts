import { MessageFlags, type REST, Routes } from 'discord.js';
import type {
  BucketRef,
  Place,
  PostResult,
  RefusalChannel,
  ReplySink,
  ReplyTarget,
  WriteOptions,
  WriteResult,
} from '../../core/ports.js';
import { type Logger, silentLogger } from '../../logger.js';
import { toPlatformError } from './errors.js';
import { findLostFollowUp, isUncertain, withoutRetries } from './uncertain-follow-ups.js';
import { type BucketBudget, GLOBAL_REPLY_BUCKET, interactionBucket } from './rate-limits.js';
import { DISCORD_MAX_CHARS, DISCORD_TABLES, NO_MENTIONS, editBody } from './reply-sink.js';
import { replyComponents } from './controls.js';
import { createPlainFallback, type PlainFallback } from './plain-fallback.js';

// The reply to a deferred slash command: the first message is the interaction's original response
// (edited through the webhook), later parts are follow-ups. Interaction webhooks take no bot token.

export interface InteractionTargetData extends Record<string, string | number | boolean> {
  kind: 'interaction';
  applicationId: string;
  interactionId: string;
  /**
   * Needed to edit the reply after a restart; it expires 15 minutes after the command, so what the
   * database keeps is useless soon after.
   */
  token: string;
}

export function isInteractionTarget(data: ReplyTarget['data']): data is InteractionTargetData {
  return data?.kind === 'interaction' && typeof data.token === 'string' && typeof data.applicationId === 'string';
}

export class InteractionReplySink implements ReplySink {
  readonly maxChars = DISCORD_MAX_CHARS;
  /** A message that carried a Stop button needs its final write, even with the text unchanged. */
  readonly needsFinalWrite = true;
  readonly monospaceTables = DISCORD_TABLES;
  readonly target: ReplyTarget & { data: InteractionTargetData };
  private readonly bucket: BucketRef;
  private originalUsed = false;
  /** A form Discord refused: the reply's words go on as plain content (plain-fallback.ts). */
  private readonly plain: PlainFallback;
  /** A plain final write's extra parts already posted as follow-ups, by the message they follow. */
  private readonly overflowPosted = new Map<string, string[]>();
  /** Messages this reply made (the original and follow-ups): a lost follow-up is one of none of them. */
  private readonly known = new Set<string>();
  /** The part whose follow-up create lost its answer: the next attempt first looks for it. */
  private uncertainPart: number | undefined;

  /** True once the deferred "thinking" response was settled: replaced by the reply, or removed for a refusal. */
  get answered(): boolean {
    return this.originalUsed;
  }

  constructor(
    private readonly rest: REST,
    place: Place,
    data: InteractionTargetData,
    budget?: BucketBudget,
    logger: Logger = silentLogger,
  ) {
    this.target = { place, data };
    this.plain = createPlainFallback(logger);
    this.bucket = interactionBucket(data.interactionId, budget);
  }

  buckets(_op: 'post' | 'edit'): BucketRef[] {
    return [this.bucket, GLOBAL_REPLY_BUCKET];
  }

  /**
   * A refusal is an ephemeral follow-up: only the user who asked sees it. The public "thinking"
   * response goes first (a first follow-up would otherwise replace it, public as it is).
   */
  get refusal(): RefusalChannel {
    const { applicationId, token } = this.target.data;
    return {
      private: true,
      buckets: [this.bucket, GLOBAL_REPLY_BUCKET],
      send: async (text) => {
        try {
          if (!this.originalUsed) {
            await deleteOriginal(this.rest, this.target.data);
            this.originalUsed = true;
          }
          await this.rest.post(Routes.webhook(applicationId, token), {
            body: { content: text, allowed_mentions: NO_MENTIONS, flags: MessageFlags.Ephemeral },
            auth: false,
          });
          return {};
        } catch (err) {
          throw toPlatformError(err, this.bucket.key);
        }
      },
    };
  }

  // The deferred response already shows "… is thinking"; nothing more to show.
  async showWorking(): Promise<void> {}
  async clearWorking(): Promise<void> {}

  async post(text: string, opts: WriteOptions): Promise<PostResult> {
    const { applicationId, token } = this.target.data;
    const components = replyComponents(opts);
    const body = { content: text, allowed_mentions: NO_MENTIONS, ...(components !== undefined ? { components } : {}) };
    try {
      if (this.originalUsed && this.uncertainPart === opts.part) {
        const found = await findLostFollowUp(
          this.rest,
          this.target.place.threadId ?? this.target.place.channelId,
          applicationId,
          this.target.data.interactionId,
          this.known,
        );
        // Found: written to this post's content by an edit (safe to repeat), in a form Discord takes.
        if (found !== undefined) return { ...(await this.edit(found, text, opts)), ...this.made(found) };
      }
      const { value: res, overflow } = await this.plain.send(body, false, async (b) => {
        if (!this.originalUsed) {
          const original = (await this.rest.patch(Routes.webhookMessage(applicationId, token, '@original'), {
            body: b,
            auth: false,
          })) as { id: string };
          this.originalUsed = true;
          return original;
        }
        // Follow-ups take no nonce: discord.js must not repeat one itself (a lost one is looked for).
        return (await withoutRetries(this.rest).post(Routes.webhook(applicationId, token), {
          body: b,
          auth: false,
        })) as { id: string };
      });
      if (opts.final) await this.postOverflow(res.id, overflow);
      return { ...this.made(res.id), ...this.plain.take() };
    } catch (err) {
      const e = toPlatformError(err, this.bucket.key);
      if (this.originalUsed && isUncertain(e)) this.uncertainPart = opts.part;
      throw e;
    }
  }

  private made(id: string): PostResult {
    this.known.add(id);
    this.uncertainPart = undefined;
    return { messageId: id };
  }

  async edit(messageId: string, text: string, opts: WriteOptions): Promise<WriteResult> {
    try {
      const body = editBody(text, opts);
      const { overflow } = await this.plain.send(body, true, (b) =>
        this.rest.patch(Routes.webhookMessage(this.target.data.applicationId, this.target.data.token, messageId), {
          body: b,
          auth: false,
        }),
      );
      if (opts.final) await this.postOverflow(messageId, overflow);
      return this.plain.take();
    } catch (err) {
      throw toPlatformError(err, this.bucket.key);
    }
  }

  /** A plain final write's parts beyond the first, as follow-ups; on a retry, edited rather than posted twice. */
  private async postOverflow(anchor: string, parts: readonly string[]): Promise<void> {
    if (parts.length === 0) return;
    const done = this.overflowPosted.get(anchor) ?? [];
    this.overflowPosted.set(anchor, done);
    for (const [i, content] of parts.entries()) {
      const id = done[i];
      if (id !== undefined) await editInteractionMessage(this.rest, this.target.data, id, content);
      else {
        const { applicationId, token } = this.target.data;
        const res = (await this.rest.post(Routes.webhook(applicationId, token), {
          body: { content, allowed_mentions: NO_MENTIONS },
          auth: false,
        })) as { id: string };
        done.push(res.id);
      }
    }
  }
}

/** Remove the deferred response when the handler decided to say nothing. Best effort. */
export async function deleteOriginal(rest: REST, data: InteractionTargetData): Promise<void> {
  await rest.delete(Routes.webhookMessage(data.applicationId, data.token, '@original'), { auth: false });
}

export async function editInteractionMessage(
  rest: REST,
  data: InteractionTargetData,
  messageId: string,
  text: string,
  /** The message's buttons (undefined: leave them as they are). */
  components?: unknown[],
): Promise<void> {
  await rest.patch(Routes.webhookMessage(data.applicationId, data.token, messageId), {
    body: { content: text, allowed_mentions: NO_MENTIONS, ...(components !== undefined ? { components } : {}) },
    auth: false,
  });
}
