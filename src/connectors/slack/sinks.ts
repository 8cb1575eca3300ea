import type { SlackStreaming } from '../../config/config.js';
import type { RefusalChannel, ReplySink } from '../../core/ports.js';
import { type SinkDeps, type SlackDestination, teamOf } from './destination.js';
import { ephemeralBucket, translateSlackError } from './rate-limits.js';
import { createEditSink } from './reply-sink-edit.js';
import { createNativeSink } from './reply-sink-native.js';

/**
 * `auto`: native streams in DMs and assistant threads, edits in shared channels. Native
 * streams are thread replies in Slack, so a top-level DM reply is always made by edits.
 */
export function chooseSink(
  mode: SlackStreaming,
  dest: SlackDestination,
  where: { isDm: boolean },
  deps: SinkDeps,
): ReplySink {
  const native =
    dest.place.threadId !== undefined && (mode === 'native' || (mode === 'auto' && (where.isDm || dest.assistant)));
  const sink = native ? createNativeSink(dest, deps) : createEditSink(dest, deps);
  return { ...sink, refusal: ephemeralRefusal(dest) };
}

/**
 * A refusal (per-user limit, busy) is an ephemeral message: only the asker sees it, it is no
 * message of the channel and spends none of its post budget. It shows where the user wrote: in
 * the thread they wrote in, or in the channel for a mention at the top (whose reply thread the
 * refusal does not open).
 */
export function ephemeralRefusal(dest: SlackDestination): RefusalChannel {
  const bucket = ephemeralBucket(teamOf(dest.place));
  const threadTs = dest.place.threadId !== dest.userMessageTs ? dest.place.threadId : undefined;
  return {
    private: true,
    buckets: [bucket],
    async send(text) {
      try {
        await dest.client.chat.postEphemeral({
          channel: dest.place.channelId,
          user: dest.userId,
          text,
          ...(threadTs !== undefined ? { thread_ts: threadTs } : {}),
        });
        return {};
      } catch (err) {
        throw translateSlackError(err, bucket.key);
      }
    },
  };
}
