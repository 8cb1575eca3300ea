import { systemClock } from '../../core/ports.js';
import { scrubSecrets } from '../../logger.js';
import type { SinkDeps, SlackDestination } from './destination.js';

// The sign that work started before any text exists: the assistant status in assistant and agent
// DM threads (Slack clears it when the bot posts), a reaction on the user's message elsewhere,
// and there too when Slack refuses the status (an app without the agent or assistant
// experience). Slack also clears the status after about two minutes without a message, so while
// the work goes on it is set again every STATUS_REFRESH_MS, with Slack's `loading_messages`.

const REACTION = 'eyes';
const STATUS = 'is thinking…';
export const STATUS_REFRESH_MS = 90_000;
export const LOADING_MESSAGES = ['Thinking…', 'Still working on it…', 'Putting the answer together…'];

export interface WorkingIndicator {
  show(): Promise<void>;
  clear(): Promise<void>;
}

export function createWorkingIndicator(dest: SlackDestination, deps: SinkDeps): WorkingIndicator {
  const { channelId: channel, threadId: threadTs } = dest.place;
  let shown = false;
  /** The status was refused: the reaction shows instead. */
  let reacted = false;
  const clock = deps.clock ?? systemClock;
  let refresh: { clear(): void } | undefined;
  const setStatus = (status: string): Promise<boolean> => {
    const thread_ts = threadTs ?? '';
    return quietly('setStatus', () =>
      dest.client.assistant.threads.setStatus({
        channel_id: channel,
        thread_ts,
        status,
        ...(status === '' ? {} : { loading_messages: LOADING_MESSAGES }),
      }),
    );
  };
  const scheduleRefresh = () => {
    refresh = clock.setTimeout(() => {
      if (!shown) return;
      void setStatus(STATUS).then(() => {
        if (shown) scheduleRefresh();
      });
    }, STATUS_REFRESH_MS);
  };
  const quietly = async (what: string, fn: () => Promise<unknown>): Promise<boolean> => {
    try {
      await fn();
      return true;
    } catch (err) {
      deps.logger.debug({ err: scrubSecrets(String(err)), what }, 'working indicator failed');
      return false;
    }
  };
  const react = () =>
    quietly('reactions.add', () =>
      dest.client.reactions.add({ channel, timestamp: dest.userMessageTs, name: REACTION }),
    );
  const unreact = () =>
    quietly('reactions.remove', () =>
      dest.client.reactions.remove({ channel, timestamp: dest.userMessageTs, name: REACTION }),
    );
  return {
    async show() {
      if (shown) return;
      shown = true;
      if (dest.assistant && threadTs) {
        if (await setStatus(STATUS)) {
          if (shown) scheduleRefresh();
          return;
        }
        reacted = true;
      }
      await react();
    },
    async clear() {
      if (!shown) return;
      shown = false;
      refresh?.clear();
      refresh = undefined;
      if (dest.assistant && threadTs && !reacted) await setStatus('');
      else await unreact();
    },
  };
}
