import type { webApi } from '@slack/bolt';
import { type AgentStep, type Clock, type Place, type RefusalChannel, systemClock } from '../../core/ports.js';
import { type Logger, scrubSecrets } from '../../logger.js';
import type { AgentSessionTurn } from './agent-sessions.js';
import { ephemeralBucket, type SlackLimits, translateSlackError } from './rate-limits.js';

// Where one reply goes, and what shows there besides the reply's own messages: the sign that
// work started (a reaction or the assistant status) and a refusal only the asker sees. Both
// sinks (reply-sink-edit.ts, reply-sink-native.ts) write to a destination; intake.ts makes it.

/** Where one reply goes, and with which client (the workspace's token). */
export interface SlackDestination {
  client: webApi.WebClient;
  /**
   * The conversation's place: workspaceId is the team, channelId the channel, threadId the
   * thread the reply goes in (undefined for a top-level DM reply).
   */
  place: Place;
  enterpriseId?: string;
  /** The user who asked: native streams outside DMs are addressed to them. */
  userId: string;
  /**
   * The asking user's own team (`user_team`, else `team`, of their message): in a Slack Connect
   * channel it differs from the installing team, and native streams are addressed to it.
   */
  userTeamId?: string;
  /** The user's message, for the working reaction. */
  userMessageTs: string;
  /** An assistant thread: the working indicator is the assistant status. */
  assistant: boolean;
  /** The bot's own ids: a native stream start whose answer was lost is found among its messages. */
  bot?: { userId: string; botId?: string | undefined };
}

/** The Slack team of a place (Slack places always name one). */
export function teamOf(place: Place): string {
  return place.workspaceId ?? '';
}

export interface SinkDeps {
  limits: SlackLimits;
  logger: Logger;
  /** Called after the bot posted into a thread, so later messages there reach the bot. */
  onPosted?: (channel: string, threadTs: string) => void;
  /** A DM thread's agent session: a native stream holds it `processing` (Slack's Stop) while it runs. */
  session?: AgentSessionTurn;
  /** Timers of the working indicator (the assistant status refresh); the system clock if absent. */
  clock?: Clock;
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
  /** The assistant status names the running step ("Searching the web…"), or goes back to thinking. */
  step(step: AgentStep | undefined): Promise<void>;
}

export function createWorkingIndicator(dest: SlackDestination, deps: SinkDeps): WorkingIndicator {
  const { channelId: channel, threadId: threadTs } = dest.place;
  let shown = false;
  /** The status was refused: the reaction shows instead. */
  let reacted = false;
  const clock = deps.clock ?? systemClock;
  let refresh: { clear(): void } | undefined;
  /** What the status says while it shows: thinking, or the running step. */
  let current = STATUS;
  const setStatus = (status: string): Promise<boolean> => {
    const thread_ts = threadTs ?? '';
    // A step's status shows as itself; Slack's rotating loading messages would hide it.
    const loading = status === STATUS ? LOADING_MESSAGES : [status];
    return quietly('setStatus', () =>
      dest.client.assistant.threads.setStatus({
        channel_id: channel,
        thread_ts,
        status,
        ...(status === '' ? {} : { loading_messages: loading }),
      }),
    );
  };
  const scheduleRefresh = () => {
    refresh = clock.setTimeout(() => {
      if (!shown) return;
      void setStatus(current).then(() => {
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
    async step(step) {
      // Only the status can name a step (a reaction cannot); and only while it shows.
      const next = step !== undefined ? `${step.title}…` : STATUS;
      if (!shown || reacted || !dest.assistant || !threadTs || next === current) return;
      current = next;
      await setStatus(next);
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
