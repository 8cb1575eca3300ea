import { isObject, type Json, objectAt, str, title, TOOL_TITLES } from './event-fields.js';
import type { EventReader, ReplyNews } from './reply-news.js';

// Anthropic Messages streams: text blocks and deltas are text, tool use blocks steps (done by
// their results, or by the next message after one that stopped for tools), citations and search
// results sources; `message_stop` ends the reply unless it stopped for tools or paused.

export const ANTHROPIC_TYPES = new Set([
  'message_start',
  'message_delta',
  'message_stop',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
]);

export function anthropicReader(news: ReplyNews): EventReader {
  /** Why the last message stopped (`tool_use`: another message follows). */
  let stopReason: string | undefined;
  return (type, obj) => {
    switch (type) {
      case 'message_start':
        // A new message after one that stopped for tools: those tools have answered.
        if (stopReason === 'tool_use') news.settle('done');
        stopReason = undefined;
        return;
      case 'message_delta':
        stopReason = str(objectAt(obj, 'delta')?.stop_reason) ?? stopReason;
        return;
      case 'message_stop':
        if (stopReason !== 'tool_use' && stopReason !== 'pause_turn') news.end();
        return;
      case 'content_block_start':
        return readBlock(news, objectAt(obj, 'content_block'));
      case 'content_block_delta': {
        const delta = objectAt(obj, 'delta');
        if (delta?.type === 'text_delta') news.text(delta.text);
        else if (delta?.type === 'citations_delta') {
          const c = objectAt(delta, 'citation');
          news.source(c?.url ?? c?.source, c?.title);
        }
        return;
      }
      default:
      // content_block_stop: nothing to show
    }
  };
}

function readBlock(news: ReplyNews, block: Json | undefined): void {
  const type = str(block?.type);
  if (!block || type === undefined) return;
  if (type === 'text') return news.text(block.text);
  if (type === 'tool_use' || type === 'server_tool_use' || type === 'mcp_tool_use') {
    const id = str(block.id);
    const name = str(block.name);
    const t = type === 'server_tool_use' && name !== undefined ? (TOOL_TITLES[name] ?? title(name)) : title(name);
    if (id !== undefined) news.step(id, t, 'running');
    return;
  }
  if (type.endsWith('_tool_result')) {
    const content = block.content;
    const failed = block.is_error === true || (isObject(content) && str(content.type)?.endsWith('_error') === true);
    news.stepEnded(str(block.tool_use_id), failed ? 'failed' : 'done');
    if (Array.isArray(content)) for (const r of content) if (isObject(r)) news.source(r.url, r.title);
  }
  // thinking, redacted thinking: never shown
}
