import { isObject, objectAt, str, title } from './event-fields.js';
import { type EventReader, MAX_STEPS, type ReplyNews } from './reply-news.js';

// OpenAI Chat Completions chunks with more than text in them: `tool_calls` deltas are steps (done
// when text follows, a tool's answer streams, or the choice finishes for another reason than
// tools), annotations and `citations` sources. Which chunks are read here: agent-events.ts isChatChunk.

export function chatCompletionsReader(news: ReplyNews): EventReader {
  /** The id of each tool call index (only the first delta of a call has it). */
  const calls = new Map<number, string>();
  return (_type, obj) => {
    const choice = Array.isArray(obj.choices) && isObject(obj.choices[0]) ? obj.choices[0] : undefined;
    const delta = objectAt(choice, 'delta') ?? {};
    if (delta.role === 'tool') {
      // A tool's answer, streamed by a service that runs its tools: that call is done; never text.
      news.stepEnded(str(delta.tool_call_id), 'done');
      return;
    }
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) toolCall(news, calls, call);
    if (Array.isArray(delta.annotations))
      for (const a of delta.annotations) {
        const c = objectAt(a, 'url_citation') ?? (isObject(a) ? a : undefined);
        news.source(c?.url, c?.title);
      }
    // Text after tool calls: the tools have answered.
    const text = str(delta.content) ?? str(delta.refusal);
    if (text !== undefined && text !== '') news.settle('done');
    news.text(text);
    if (Array.isArray(obj.citations)) for (const url of obj.citations) news.source(url, undefined);
    const finish = str(choice?.finish_reason);
    if (finish !== undefined && finish !== 'tool_calls') news.settle('done');
  };
}

/** One `tool_calls` delta: a step once its name is known, under the id its first delta gave. */
function toolCall(news: ReplyNews, calls: Map<number, string>, call: unknown): void {
  if (!isObject(call)) return;
  const index = typeof call.index === 'number' ? call.index : 0;
  const given = str(call.id);
  const room = calls.has(index) || calls.size < MAX_STEPS;
  if (given !== undefined && given !== '' && room) calls.set(index, given);
  const id = calls.get(index) ?? `call-${index}`;
  const name = title(objectAt(call, 'function')?.name);
  if (!news.known(id) && name !== undefined) news.step(id, name, 'running');
}
