import { isObject, type Json, objectAt, stateOf, str, title, TOOL_TITLES } from './event-fields.js';
import type { EventReader, ReplyNews } from './reply-news.js';

// OpenAI Responses streams (`response.*` events): output text and refusals are text, tool calls
// steps, URL citations sources, generated images files; the end is the response's completion,
// unless a function call waits for its answer (an agent loop goes on with another response).

/** Responses output items the service itself runs: done when their item is. */
const HOSTED_ITEMS = new Set([
  'web_search_call',
  'file_search_call',
  'code_interpreter_call',
  'image_generation_call',
  'mcp_call',
]);

/** The events of a Responses stream that name their response: its id is in each. */
const RESPONSE_ID_TYPES = new Set([
  'response.created',
  'response.in_progress',
  'response.completed',
  'response.incomplete',
]);

/** The id of the response a Responses event names (created, in progress, completed); else undefined. */
export function responseIdOf(obj: Json): string | undefined {
  if (!RESPONSE_ID_TYPES.has(str(obj.type) ?? '')) return undefined;
  const id = str(objectAt(obj, 'response')?.id);
  return id === '' ? undefined : id;
}

export function responsesReader(news: ReplyNews): EventReader {
  return (type, obj) => {
    switch (type) {
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        return news.text(obj.delta);
      case 'response.output_item.added':
      case 'response.output_item.done':
        return readItem(news, objectAt(obj, 'item'), type.endsWith('.done'));
      case 'response.output_text.annotation.added': {
        const a = objectAt(obj, 'annotation');
        if (a?.type === 'url_citation') news.source(a.url, a.title);
        return;
      }
      case 'response.completed':
      case 'response.incomplete':
      case 'response.done': {
        // A function call the service did not answer: an agent loop goes on with another response.
        const output = objectAt(obj, 'response')?.output;
        const items = Array.isArray(output) ? output.filter(isObject) : [];
        const waiting = items.some(
          (i) => i.type === 'function_call' && news.known(String(i.call_id))?.state === 'running',
        );
        if (!waiting) news.end();
        return;
      }
      case 'response.failed': {
        const err = objectAt(objectAt(obj, 'response'), 'error');
        return news.error(str(err?.message) ?? 'the response failed', str(err?.code));
      }
      default:
      // reasoning, argument deltas, the hosted tools' progress, bookkeeping: nothing to show
    }
  };
}

function readItem(news: ReplyNews, item: Json | undefined, done: boolean): void {
  const type = str(item?.type);
  if (!item || type === undefined || type === 'message' || type === 'reasoning') return;
  const id = str(item.call_id) ?? str(item.id);
  if (type.endsWith('_call_output')) {
    // The answer to a call the service made itself (an agent loop): that call is done.
    if (done || item.status === undefined) news.stepEnded(id, stateOf(item.status) === 'failed' ? 'failed' : 'done');
    return;
  }
  if (!type.endsWith('_call') || id === undefined) return;
  const name =
    type === 'function_call' || type === 'mcp_call' || type === 'custom_tool_call' ? title(item.name) : undefined;
  const t = name ?? TOOL_TITLES[type] ?? title(type.replace(/_call$/, '').replace(/_/g, ' '));
  const failed = stateOf(item.status) === 'failed';
  // A function call's item is done when its arguments are: the tool runs after that.
  const state = failed ? 'failed' : done && HOSTED_ITEMS.has(type) ? 'done' : 'running';
  news.step(id, t, state);
  if (done && type === 'image_generation_call' && typeof item.result === 'string')
    news.file({ data: item.result, mime: `image/${str(item.output_format) ?? 'png'}` });
}
