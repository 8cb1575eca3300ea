import { scrubSecrets } from '../../logger.js';
import type { SinkDeps, SlackDestination } from './destination.js';

// The sign that work started before any text exists: the assistant status in assistant threads
// (Slack clears it when the bot posts), a reaction on the user's message elsewhere.

const REACTION = 'eyes';
const STATUS = 'is thinking…';

export interface WorkingIndicator {
  show(): Promise<void>;
  clear(): Promise<void>;
}

export function createWorkingIndicator(dest: SlackDestination, deps: SinkDeps): WorkingIndicator {
  const { channelId: channel, threadId: threadTs } = dest.place;
  let shown = false;
  const quietly = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (err) {
      deps.logger.debug({ err: scrubSecrets(String(err)), what }, 'working indicator failed');
    }
  };
  return {
    async show() {
      if (shown) return;
      shown = true;
      if (dest.assistant && threadTs) {
        const thread_ts = threadTs;
        await quietly('setStatus', () =>
          dest.client.assistant.threads.setStatus({ channel_id: channel, thread_ts, status: STATUS }),
        );
      } else {
        await quietly('reactions.add', () =>
          dest.client.reactions.add({ channel, timestamp: dest.userMessageTs, name: REACTION }),
        );
      }
    },
    async clear() {
      if (!shown) return;
      shown = false;
      if (dest.assistant && threadTs) {
        const thread_ts = threadTs;
        await quietly('setStatus', () =>
          dest.client.assistant.threads.setStatus({ channel_id: channel, thread_ts, status: '' }),
        );
      } else {
        await quietly('reactions.remove', () =>
          dest.client.reactions.remove({ channel, timestamp: dest.userMessageTs, name: REACTION }),
        );
      }
    },
  };
}
