import type { webApi } from '@slack/bolt';
import type { Logger } from '../../logger.js';
import type { SlackLimits } from './rate-limits.js';

/** Where one reply goes, and with which client (the workspace's token). */
export interface SlackDestination {
  client: webApi.WebClient;
  teamId: string;
  enterpriseId?: string;
  channel: string;
  /** Reply in this thread; undefined for a top-level DM reply. */
  threadTs: string | undefined;
  /** The user who asked: native streams outside DMs are addressed to them. */
  userId: string;
  /** The user's message, for the working reaction. */
  userMessageTs: string;
  /** An assistant thread: the working indicator is the assistant status. */
  assistant: boolean;
}

export interface SinkDeps {
  limits: SlackLimits;
  logger: Logger;
  /** Called after the bot posted into a thread, so later messages there reach the bot. */
  onPosted?: (channel: string, threadTs: string) => void;
}
