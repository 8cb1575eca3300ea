import { isObject, str, title } from './event-fields.js';
import type { Json } from './event-fields.js';
import type { EventReader, ReplyNews } from './reply-news.js';
import { SEED_NAMES } from './seed.js';

// AG-UI events (SCREAMING_CASE types): text message content is text, tool calls and named steps
// are steps, RUN_FINISHED ends the reply and RUN_ERROR fails it; a CUSTOM event named as a seed
// event is one (AG-UI has no citations or files of its own).

export const AG_UI_TYPE =
  /^(?:(?:TEXT_MESSAGE|TOOL_CALL|STEP|RUN|STATE|MESSAGES|THINKING|REASONING|ACTIVITY|META)_[A-Z_]+|RAW|CUSTOM)$/;

/** `seed`: the reply's seed reader, for the custom events that carry a seed event. */
export function agUiReader(news: ReplyNews, seed: (name: string, value: Json) => void): EventReader {
  return (type, obj) => {
    const id = str(obj.toolCallId);
    switch (type) {
      case 'TEXT_MESSAGE_CONTENT':
      case 'TEXT_MESSAGE_CHUNK':
        return news.text(obj.delta);
      case 'TOOL_CALL_START':
      case 'TOOL_CALL_CHUNK':
        if (id !== undefined && !news.known(id) && title(obj.toolCallName) !== undefined)
          news.step(id, title(obj.toolCallName), 'running');
        return;
      case 'TOOL_CALL_RESULT':
        return news.stepEnded(id, 'done');
      case 'STEP_STARTED':
      case 'STEP_FINISHED': {
        const name = title(obj.stepName);
        if (name !== undefined) news.step(`step:${name}`, name, type === 'STEP_STARTED' ? 'running' : 'done');
        return;
      }
      case 'RUN_FINISHED':
        return news.end();
      case 'RUN_ERROR':
        return news.error(str(obj.message) ?? 'the run failed', str(obj.code));
      case 'CUSTOM': {
        const name = str(obj.name)?.toLowerCase();
        if (name !== undefined && SEED_NAMES.has(name) && isObject(obj.value)) seed(name, obj.value);
        return;
      }
      default:
      // thinking, reasoning, tool arguments, state and message snapshots, raw and custom events
    }
  };
}
