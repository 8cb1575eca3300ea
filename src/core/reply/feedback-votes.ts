import type { Logger } from 'pino';
import type { LiveReplies } from '../intake/live-replies.js';
import type { BridgeMetrics } from '../metrics-port.js';
import type { Clock, FeedbackStore, Vote, VoteResult } from '../ports.js';

// A thumbs up/down on a finished reply: stored (the user's last vote wins), counted, and sent
// upstream with that user's next message in the conversation (pendingVotes in upstream-message.ts).

export interface VoteDeps {
  feedback: FeedbackStore | undefined;
  live: LiveReplies;
  metrics: BridgeMetrics;
  logger: Logger;
  clock: Clock;
}

export async function recordVote(deps: VoteDeps, replyKey: string, userId: string, v: Vote): Promise<VoteResult> {
  const store = deps.feedback;
  if (store === undefined) return 'not_found';
  // The buttons show with the reply's last write, a moment before its record is written.
  const entry = deps.live.get(replyKey);
  if (entry !== undefined) await entry.done;
  const reply = await store.reply(replyKey);
  if (reply === undefined) return 'not_found';
  await store.vote({
    replyKey,
    userId,
    placeKey: reply.placeKey,
    upstreamId: reply.upstreamId,
    messageId: reply.messageId,
    vote: v,
    at: deps.clock.now(),
  });
  deps.metrics.feedbackVote(reply.platform, v);
  deps.logger.info({ platform: reply.platform, vote: v }, 'feedback recorded');
  return 'recorded';
}
