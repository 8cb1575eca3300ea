import { ChatError } from './chat-port.js';

// Everything the bridge itself says to users, in one place: short, friendly, and free of stack
// traces, ids and secrets (details go to the log).

export const MESSAGES = {
  busy: 'The assistant is busy right now, please try again shortly.',
  error: 'Sorry, something went wrong while getting a reply. Please try again in a moment.',
  unavailable: 'The assistant is unavailable right now.',
  unknownBot:
    'This place is routed to an assistant bot that does not exist. Please ask an administrator to check the bot routing.',
  slowDown: 'You are sending messages too quickly. Please wait a minute and try again.',
  queueFull: 'Several messages are already waiting for a reply here. Please wait for them before sending more.',
  reset: 'Started a new conversation; earlier messages are no longer part of the context.',
  emptyReply: 'The assistant sent an empty reply.',
  interruptedBeforeText: 'The reply was interrupted before any text arrived. Please try again.',
  /** First line of a reply on a fresh conversation that replaced an old one. */
  renewed: '_(Earlier context was not kept; this is a new conversation.)_\n\n',
  /** As `renewed`, when the place's recent messages were sent along as context (CONTEXT_MODE). */
  renewedWithContext: '_(This is a new conversation; the recent messages here were carried over as context.)_\n\n',
  /** Appended to a reply that was cut off. */
  interrupted: '\n\n_(reply interrupted)_',
  /** Appended when the upstream reported an error mid-stream. */
  streamError: '\n\n_(the assistant reported an error; the reply may be incomplete)_',
  /** Ends a reply that ran past CHAT_REPLY_MAX_SECONDS. */
  replyDeadline(seconds: number): string {
    return `\n\n_(reply stopped: it took longer than ${seconds} seconds)_`;
  },
  /** Ends a reply longer than CHAT_REPLY_MAX_CHARS. */
  replyTooLong(chars?: number): string {
    return chars === undefined
      ? '\n\n_(reply cut: it was too long)_'
      : `\n\n_(reply cut: it was longer than ${chars} characters)_`;
  },
  /** Ends a reply its asker stopped (Stop control, or `stop` written in the place). */
  stopped: '\n\n_(stopped)_',
  /** Ephemeral: someone else used a reply's Stop control. */
  stopNotOwner: 'Only the person who asked can stop this reply.',
  /** Ephemeral: a thumbs up/down was recorded. */
  feedbackThanks: 'Thanks for your feedback!',
  /** Ephemeral: a vote on a reply the bridge no longer knows. */
  feedbackUnknown: 'This reply can no longer be rated.',
  /** More messages wait for a slot than MAX_QUEUED_REPLIES: nothing was taken. */
  overloaded: 'The assistant is handling too many messages right now. Please send yours again in a minute.',
  /** The bridge is shutting down before it could answer. */
  restarting: 'The assistant is restarting and could not answer this message. Please send it again in a minute.',
  /** The database cannot be written: nothing was taken. */
  storageDown:
    'The assistant cannot answer right now because its storage is unavailable. Please try again later, and tell an administrator if this persists.',
  tooLong(max?: number): string {
    return max === undefined
      ? 'Your message is too long for the assistant. Please shorten it and try again.'
      : `Your message is too long for the assistant (the limit is ${max} characters). Please shorten it and try again.`;
  },
  badRequest(status?: number): string {
    return `The assistant could not handle this message (error ${status ?? 'unknown'}).`;
  },
};

/** Room a reply keeps free in every message so that a note fits after a crash. */
export const NOTE_RESERVE = Math.max(
  MESSAGES.interrupted.length,
  MESSAGES.stopped.length,
  MESSAGES.streamError.length,
  MESSAGES.replyDeadline(99_999).length,
  MESSAGES.replyTooLong(9_999_999).length,
);

/** How an error of the reply's source ends it (the pump's describeError). */
export interface ErrorOutcome {
  outcome: 'interrupted' | 'failed';
  /** Appended after the text when the reply has some. */
  note?: string;
  /** Shown instead when the reply has no text yet. */
  replacement?: string;
}

/** How an upstream error is shown: a message in place of the reply, or a note after its text. */
export function describeChatError(err: unknown): ErrorOutcome {
  const failed = (replacement: string): ErrorOutcome => ({
    outcome: 'failed',
    replacement,
    note: MESSAGES.streamError,
  });
  if (!(err instanceof ChatError)) return failed(MESSAGES.error);
  switch (err.kind) {
    case 'interrupted':
      return { outcome: 'interrupted', note: MESSAGES.interrupted, replacement: MESSAGES.interruptedBeforeText };
    case 'rate_limited':
      return failed(MESSAGES.busy);
    case 'unauthorized':
      return failed(MESSAGES.unavailable);
    case 'too_long':
      return failed(MESSAGES.tooLong());
    case 'unknown_bot':
      return failed(MESSAGES.unknownBot);
    case 'bad_request':
      return failed(MESSAGES.badRequest(err.details.status));
    case 'stream_error':
    case 'server':
    case 'network':
    case 'timeout':
    case 'conversation_gone':
      return failed(MESSAGES.error);
  }
}
