import type { webApi } from '@slack/bolt';
import type { Clock, Place } from '../../core/ports.js';
import type { Logger } from '../../logger.js';
import type { AgentSessionTurn } from './agent-sessions.js';
import type { SlackLimits } from './rate-limits.js';

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
