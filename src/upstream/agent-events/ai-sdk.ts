import { str, title } from './event-fields.js';
import type { EventReader, ReplyNews } from './reply-news.js';

// The Vercel AI SDK UI message stream: text deltas are text, tool inputs and outputs steps,
// `source-url` parts sources; `finish` and `abort` end the reply, `error` (with `errorText`) fails it.

/** The UI message stream's part types (and `data-*` parts; its `error` carries `errorText`). */
export const AI_SDK_TYPES = new Set([
  'start',
  'finish',
  'abort',
  'text-start',
  'text-delta',
  'text-end',
  'reasoning',
  'reasoning-start',
  'reasoning-delta',
  'reasoning-end',
  'tool-input-start',
  'tool-input-delta',
  'tool-input-available',
  'tool-input-error',
  'tool-output-available',
  'tool-output-error',
  'tool-output-denied',
  'tool-approval-request',
  'source-url',
  'source-document',
  'file',
  'start-step',
  'finish-step',
  'message-metadata',
]);

export function aiSdkReader(news: ReplyNews): EventReader {
  return (type, obj) => {
    const id = str(obj.toolCallId);
    switch (type) {
      case 'text-delta':
        return news.text(obj.delta ?? obj.textDelta);
      case 'tool-input-start':
        if (id !== undefined) news.step(id, title(obj.title) ?? title(obj.toolName), 'running');
        return;
      case 'tool-input-available':
        if (id !== undefined && !news.known(id)) news.step(id, title(obj.title) ?? title(obj.toolName), 'running');
        return;
      case 'tool-output-available':
        // A preliminary output: the tool is still at work.
        if (obj.preliminary !== true) news.stepEnded(id, 'done');
        return;
      case 'tool-input-error':
      case 'tool-output-error':
      case 'tool-output-denied':
        return news.stepEnded(id, 'failed');
      case 'source-url':
        return news.source(obj.url, obj.title);
      case 'finish':
      case 'abort':
        return news.end();
      case 'error':
        return news.error(str(obj.errorText) ?? 'upstream stream error');
      default:
      // reasoning, tool input deltas, steps of the model, metadata, data parts: nothing to show
    }
  };
}
