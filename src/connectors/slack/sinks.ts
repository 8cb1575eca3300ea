import type { SlackStreaming } from '../../config/config.js';
import type { ReplySink } from '../../core/ports.js';
import type { SinkDeps, SlackDestination } from './destination.js';
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
  return native ? createNativeSink(dest, deps) : createEditSink(dest, deps);
}
