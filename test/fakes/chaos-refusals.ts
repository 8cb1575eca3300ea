import type { FaultSource } from './chaos.js';
import type { DiscordRefusal } from './discord/refusals.js';
import { attachmentBlocks, type SlackRefusal, topBlocks } from './slack/refusals.js';

// Under a chaos run the fakes also refuse a small share of rich writes for their form, as a
// platform may (a block it does not take, a component Discord refuses): the bridge must send the
// same words again, plainer. Only writes that carry something rich are refused, so the plainest
// form always gets through.

const SLACK_CONTENT = new Set(['chat.postMessage', 'chat.update', 'chat.startStream', 'chat.stopStream']);

/** A chaos run's refusal of Slack writes with blocks or attachments (`invalid_blocks`). */
export function slackChaosRefusal(source: FaultSource | undefined): SlackRefusal | undefined {
  if (source === undefined) return undefined;
  return (method, args) => {
    if (!SLACK_CONTENT.has(method)) return undefined;
    if (topBlocks(args).length === 0 && attachmentBlocks(args).length === 0) return undefined;
    return source.refuseRich('slack', method) ? 'invalid_blocks' : undefined;
  };
}

/** A chaos run's refusal of Discord message writes with components or embeds (50035 on `components`). */
export function discordChaosRefusal(source: FaultSource | undefined): DiscordRefusal | undefined {
  if (source === undefined) return undefined;
  return (method, body) => {
    const rich = (k: string) => Array.isArray(body[k]) && (body[k] as unknown[]).length > 0;
    if (!rich('components') && !rich('embeds')) return undefined;
    return source.refuseRich('discord', method) ? (rich('components') ? 'components' : 'embeds') : undefined;
  };
}

/**
 * For a test about a rich form itself (a table block, Stop and vote buttons): the platform takes
 * every form, while a chaos run still loses answers. Given as the fake's `refuse` option.
 */
export const takeEveryForm = (): undefined => undefined;
