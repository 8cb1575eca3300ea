import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { attachmentBlock, skippedNotice } from '../reply/attachments.js';
import { Conversations } from '../reply/conversations.js';
import { forParty } from '../budget/write-scheduler.js';
import { recordVote } from '../reply/feedback-votes.js';
import { Admission, type Admitted } from './admission.js';
import { drainRelay } from './drain.js';
import { LiveReplies, type UserStops, userStops } from './live-replies.js';
import { postNotice } from './notices.js';
import { FairSlots, partyOf, PlaceOrder } from './place-order.js';
import { pruneHourly } from './pruning.js';
import {
  type Arrival,
  type Connector,
  type HandleResult,
  type IncomingMessage,
  type InFlightRecord,
  type Place,
  placeKey,
  type StopResult,
  type Vote,
} from '../ports.js';
import { type RecoveryReport, recoverInterrupted } from '../reply/recovery.js';
import { Refusals } from './refusals.js';
import type { BotRouter, Relay, RelayDeps, RelaySettings, RemoteStops } from './relay-types.js';
import { type ReplyDeps, replyTo } from '../reply/reply-to.js';
import { RateLimitScheduler } from '../budget/scheduler.js';
import { isStoreUnavailable } from '../store-errors.js';
import { StoreHold } from './store-hold.js';
import { tellUnexpected } from './unexpected.js';
import { CONTEXT_OFF, ThreadContext } from '../reply/thread-context.js';
import { MESSAGES } from '../user-messages.js';

export type { RecoveryReport } from '../reply/recovery.js';

// Incoming message → admission (admission.ts) → first in its place's queue (place-order.ts) → an
// upstream slot, fair by user (FairSlots, place-order.ts) → the reply (reply/reply-to.ts), registered live
// for Stop (live-replies.ts). The relay composes those parts; the message's ticket is taken
// synchronously in handle(), before the first await, so replies in one place keep the order in
// which the connector called handle(). With several replicas, SharedQueue extends that order
// across processes. The process's shutdown is the drain (drain.ts); `stop` is a user's Stop.

export type { AllowList } from './admission.js';
export type * from './relay-types.js';

/**
 * What every reply is given (reply-to.ts's ReplyDeps) besides what is its own: its key, its Stop,
 * its scheduler (fair by user) and the end of its upstream slot.
 */
type ReplyBase = Omit<ReplyDeps, 'scheduler' | 'onUpstreamEnd' | 'replyKey' | 'stop'>;

/** The conversations of the places and their earlier messages, which a reset forgets together. */
interface PlaceMemory {
  conversations: Conversations;
  threadContext: ThreadContext;
  resetPlace(place: Place): Promise<void>;
}

/** The queues a message waits in: its place's (PlaceOrder), then the upstream slots' (FairSlots). */
interface Queues {
  order: PlaceOrder;
  slots: FairSlots;
  /** The number waiting (for a place or a slot) changed. */
  reportQueue(): void;
}

/** What every step after admission may need: the scheduler, the shutdown, the word to the user. */
interface StepParts {
  scheduler: RateLimitScheduler;
  /** Messages kept while the store cannot be used (store-hold.ts). */
  hold: StoreHold;
  shutdown: AbortSignal;
  notice(msg: IncomingMessage, text: string): Promise<void>;
  unexpected(msg: IncomingMessage, err: unknown): Promise<HandleResult>;
}

/** What waiting to be first in the place's queue needs (whenFirstInPlace). */
interface OrderParts extends StepParts {
  order: PlaceOrder;
  admission: Admission;
}

/** What answering a message first in its place needs (answer): a slot, its Stop, its reply. */
interface AnswerParts extends StepParts {
  slots: FairSlots;
  /** The number waiting (for a place or a slot) changed. */
  reportQueue(): void;
  /** Replies with an upstream slot now; `changed` reports it. */
  running: { count: number; changed(): void };
  live: LiveReplies;
  /** Several replicas: a Stop for a reply another replica writes goes there. */
  remoteStops: RemoteStops | undefined;
  botFor: BotRouter;
  reply: ReplyBase;
}

/** The parts createRelay composes: what respond() hands on, and the typed Stop and reset it runs. */
interface Parts extends Queues, OrderParts, AnswerParts {
  stops: UserStops;
  resetPlace(place: Place): Promise<void>;
  maxMessageChars: number | undefined;
}

export function createRelay(deps: RelayDeps): Relay {
  const { settings, clock, metrics, logger } = deps;
  const scheduler = deps.scheduler ?? new RateLimitScheduler({ clock });
  const memory = placeMemory(deps, scheduler);
  const queues = waitingQueues(deps);
  const shutdown = new AbortController();
  // Every reply in flight listens to it (up to MAX_CONCURRENT_REPLIES): not a leak.
  setMaxListeners(0, shutdown.signal);
  /** Replies being written, by reply key and by place (one per place: the place's order). */
  const live = new LiveReplies();
  deps.remoteStops?.onStop((replyKey, userId) => live.stop(replyKey, userId));
  const notice = (msg: IncomingMessage, text: string) => postNotice(msg.sink, text, scheduler, logger);
  // Refusals (per-user limit, busy, restarting): privately where the platform can, else rarely.
  const refusals = new Refusals({ scheduler, clock, logger });
  const hold = new StoreHold({
    max: settings.maxHeldEvents ?? settings.maxQueuedReplies ?? 256,
    clock,
    logger,
    metrics,
    health: deps.storeHealth,
    ...(settings.holdMaxSeconds !== undefined ? { maxHoldMs: settings.holdMaxSeconds * 1000 } : {}),
  });
  const failure = { refusals, shutdown: shutdown.signal, metrics, logger, notice };
  const unexpected = (msg: IncomingMessage, err: unknown) => tellUnexpected(failure, msg, err);
  const { order, slots } = queues;
  const admission = new Admission({
    ...admissionSettings(deps),
    events: deps.events,
    metrics,
    clock,
    logger,
    order,
    slots,
    refusals,
    notice,
    unexpected,
    hold,
    shutdown: shutdown.signal,
  });
  const running = { count: 0, changed: () => metrics.inFlight(running.count) };
  const parts: Parts = {
    ...queues,
    admission,
    stops: userStops(live, deps.remoteStops),
    resetPlace: memory.resetPlace,
    scheduler,
    live,
    remoteStops: deps.remoteStops,
    hold,
    shutdown: shutdown.signal,
    running,
    notice,
    unexpected,
    maxMessageChars: settings.maxMessageChars,
    botFor: deps.botFor,
    reply: replyBase(deps, memory),
  };
  return relayOf(deps, parts, shutdown);
}

/** What the place memory is made from. */
type MemoryDeps = Pick<RelayDeps, 'conversations' | 'chat' | 'clock' | 'metrics' | 'logger'> & {
  settings: Pick<RelaySettings, 'sessionIdleSeconds' | 'context'>;
};

/** The conversations and the thread context of the places. */
function placeMemory(deps: MemoryDeps, scheduler: RateLimitScheduler): PlaceMemory {
  const { settings, clock, metrics, logger } = deps;
  const conversations = new Conversations({
    store: deps.conversations,
    chat: deps.chat,
    clock,
    sessionIdleSeconds: settings.sessionIdleSeconds,
    logger,
  });
  const threadContext = new ThreadContext({ scheduler, clock, settings: settings.context ?? CONTEXT_OFF, metrics });
  const resetPlace = async (place: Place) => {
    await conversations.reset(place);
    threadContext.changed(place);
  };
  return { conversations, threadContext, resetPlace };
}

/** What the queues a message waits in are made from. */
type QueueDeps = Pick<RelayDeps, 'sharedQueue' | 'metrics' | 'logger'> & {
  settings: Pick<RelaySettings, 'maxConcurrentReplies' | 'maxQueuePerPlace'>;
};

function waitingQueues(deps: QueueDeps): Queues {
  const { settings, metrics, logger } = deps;
  const slots = new FairSlots(settings.maxConcurrentReplies);
  const reportQueue = () => metrics.queueDepth(order.waiting + slots.waiting);
  const order: PlaceOrder = new PlaceOrder({
    maxWaitingPerPlace: settings.maxQueuePerPlace ?? 10,
    shared: deps.sharedQueue,
    onWaiting: reportQueue,
    onGiveBackError: (err) =>
      logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not give a place back'),
  });
  return { order, slots, reportQueue };
}

/** Admission's limits from the settings. */
function admissionSettings({
  settings,
}: {
  settings: Pick<RelaySettings, 'allow' | 'userMessagesPerMinute' | 'maxMessageChars' | 'maxQueuedReplies'>;
}) {
  return {
    allow: settings.allow,
    userMessagesPerMinute: settings.userMessagesPerMinute,
    maxMessageChars: settings.maxMessageChars,
    maxQueued: settings.maxQueuedReplies ?? 256,
  };
}

/** What every reply's base is made from. */
type ReplyBaseDeps = Pick<
  RelayDeps,
  'chat' | 'inflight' | 'feedback' | 'metrics' | 'logger' | 'clock' | 'replicaId' | 'hooks'
> & {
  settings: Pick<
    RelaySettings,
    | 'streaming'
    | 'streamEditIntervalMs'
    | 'feedback'
    | 'showSteps'
    | 'showSources'
    | 'maxMessageChars'
    | 'replyMaxSeconds'
    | 'replyMaxChars'
  >;
};

function replyBase(deps: ReplyBaseDeps, memory: PlaceMemory): ReplyBase {
  const { settings } = deps;
  return {
    chat: deps.chat,
    conversations: memory.conversations,
    inflight: deps.inflight,
    metrics: deps.metrics,
    logger: deps.logger,
    clock: deps.clock,
    streaming: settings.streaming,
    editIntervalMs: settings.streamEditIntervalMs,
    ...(deps.replicaId !== undefined ? { owner: deps.replicaId } : {}),
    feedback: { store: deps.feedback, show: settings.feedback === true },
    agent: { steps: settings.showSteps !== false, sources: settings.showSources !== false },
    context: memory.threadContext,
    ...(settings.maxMessageChars !== undefined ? { maxMessageChars: settings.maxMessageChars } : {}),
    ...(settings.replyMaxSeconds !== undefined ? { replyMaxMs: settings.replyMaxSeconds * 1000 } : {}),
    ...(settings.replyMaxChars !== undefined ? { replyMaxChars: settings.replyMaxChars } : {}),
    ...(deps.hooks !== undefined ? { hooks: deps.hooks } : {}),
  };
}

/** What the relay's own methods use besides its parts: votes, recovery, pruning and the drain. */
type RelayOfDeps = Pick<
  RelayDeps,
  | 'events'
  | 'inflight'
  | 'feedback'
  | 'conversations'
  | 'housekeeping'
  | 'metrics'
  | 'logger'
  | 'clock'
  | 'drainGraceMs'
> & { settings: Pick<RelaySettings, 'conversationRetentionDays'> };

/** The relay as connectors and main.ts use it, over its parts. */
function relayOf(deps: RelayOfDeps, p: Parts, shutdown: AbortController): Relay {
  const { settings, metrics, logger, clock, inflight } = deps;
  const { order, slots, live, stops, running } = p;
  const pending = new Set<Promise<HandleResult>>();
  // Pruning is given the stores it forgets from, not the relay's whole bag.
  const pruning = pruneHourly({
    events: deps.events,
    inflight,
    feedback: deps.feedback,
    conversations: deps.conversations,
    housekeeping: deps.housekeeping,
    retentionDays: settings.conversationRetentionDays,
    clock,
    logger,
  });
  return {
    rateLimits: p.scheduler,

    arrive: (place: Place, eventId: string, at: number): Arrival => order.arrive(place, eventId, at),

    handle(msg: IncomingMessage): Promise<HandleResult> {
      const handled = p.admission.admit(msg).then((a) => ('status' in a ? a : respond(p, a)));
      pending.add(handled);
      order.handed(msg.arrival);
      // A message refused before its ticket was taken leaves the queue it joined on arrival.
      msg.arrival?.leave();
      void handled.finally(() => pending.delete(handled)).catch(() => {});
      return handled;
    },

    stop: (replyKey: string, userId: string): Promise<StopResult> => stops.reply(replyKey, userId),
    stopPlace: (place: Place, userId: string): Promise<StopResult> => stops.place(place, userId),
    vote: (replyKey: string, userId: string, v: Vote) =>
      recordVote({ feedback: deps.feedback, live, metrics, logger, clock }, replyKey, userId, v),

    async reset(place: Place): Promise<void> {
      // In the place's order, so a reset never overtakes a reply being written there.
      const ticket = order.enterLocal(placeKey(place));
      if (ticket === undefined) {
        await p.resetPlace(place);
        return;
      }
      const release = await ticket;
      try {
        await p.resetPlace(place);
      } finally {
        release();
      }
    },

    recoverInterrupted(connectors: Connector[], records?: readonly InFlightRecord[]): Promise<RecoveryReport> {
      return recoverInterrupted({ inflight, metrics, logger, clock }, connectors, records);
    },

    async drain(timeoutMs: number): Promise<void> {
      pruning.cancel();
      await drainRelay({ order, pending, shutdown, clock, logger, graceMs: deps.drainGraceMs ?? 2000 }, timeoutMs);
    },

    stats() {
      return { inFlight: running.count, queued: order.waiting + slots.waiting };
    },
  };
}

/** Run `work` once the message is first in its place's queue (ticket taken in handle()), locally and across replicas. */
function whenFirstInPlace(p: OrderParts, a: Admitted, work: () => Promise<HandleResult>): Promise<HandleResult> {
  const { msg, ticket } = a;
  const { scheduler, shutdown } = p;
  if (ticket.local === undefined) return p.admission.refuse(a, MESSAGES.queueFull, 'queue_full');
  const sink = msg.sink;
  return p.order.whenFirst({ ...ticket, local: ticket.local }, shutdown, {
    async work(handedOver) {
      // The place's own buckets (a channel's posts) go with the place, not with the replica.
      if (handedOver !== undefined) scheduler.handOver(handedOver);
      if (shutdown.aborted) {
        // It came first only after shutdown began: say so rather than drop it unseen.
        await p.notice(msg, MESSAGES.restarting);
        return { status: 'interrupted' };
      }
      return work();
    },
    failed: (err) => p.unexpected(msg, err),
    // The place's queue is in the store: while it cannot be used the message is held, and joins again once it is back.
    outage: (err, retry) => p.hold.after(err, msg, 'place queue', retry, shutdown),
    lastWrites: () => scheduler.placeWrites([...sink.buckets('post'), ...sink.buckets('edit')]),
  });
}

/** A message admitted (its first delivery, at any replica): answer it, or say why not. */
async function respond(p: Parts, a: Admitted): Promise<HandleResult> {
  const { msg, text, files } = a;
  if (a.kind === 'reset') {
    return whenFirstInPlace(p, a, async () => {
      await p.resetPlace(msg.place);
      await p.notice(msg, MESSAGES.reset);
      return { status: 'reset' };
    });
  }
  if (a.kind === 'stop') {
    // `stop` from the asker while their reply streams here (or, with several replicas, at
    // another one) stops it; from anyone else, or with nothing streaming, it is a message.
    const reply = p.live.inPlace(placeKey(msg.place));
    if (reply === undefined ? p.remoteStops !== undefined : reply.askerId === msg.userId) {
      const result = await p.stops.place(msg.place, msg.userId).catch(() => 'not_found' as const);
      if (result === 'stopped') {
        p.order.leave(a.ticket);
        return { status: 'stopped' };
      }
    }
  }
  const refused = p.admission.limits(a);
  if (refused !== undefined) return refused;
  const withFiles =
    files.length === 0 ? undefined : attachmentBlock(files, { userText: text, maxChars: p.maxMessageChars });
  return whenFirstInPlace(p, a, async () => {
    // Files that did not make it are named first, while the message is first in its place, so the notice comes
    // before the reply; the rest of the message still goes upstream.
    if (withFiles !== undefined && withFiles.skipped.length > 0) {
      await p.notice(msg, skippedNotice(withFiles.skipped));
    }
    return answer(p, msg, withFiles?.messageText ?? text);
  });
}

/** A message first in its place: an upstream slot (fair by user), then its reply, live for Stop. */
async function answer(p: AnswerParts, msg: IncomingMessage, text: string): Promise<HandleResult> {
  const { slots, running } = p;
  let release: () => void;
  try {
    release = await slots.acquire(p.shutdown, partyOf(msg));
  } catch {
    // Still waiting for a slot when shutdown gave up on the rest.
    p.reportQueue();
    await p.notice(msg, MESSAGES.restarting);
    return { status: 'interrupted' };
  }
  p.reportQueue();
  running.count++;
  running.changed();
  let slotTaken = true;
  // The slot goes to the next message the moment the upstream request ends; the platform
  // writes still owed (final edits waiting for budget) do not keep an upstream slot.
  const releaseSlot = () => {
    if (!slotTaken) return;
    slotTaken = false;
    running.count--;
    running.changed();
    release();
    p.reportQueue();
  };
  const replyKey = randomUUID();
  const { entry, end: endLive } = p.live.begin(replyKey, msg.userId, placeKey(msg.place));
  p.remoteStops?.started(placeKey(msg.place), replyKey, msg.userId);
  try {
    if (p.shutdown.aborted) {
      releaseSlot();
      await p.notice(msg, MESSAGES.restarting);
      return { status: 'interrupted' };
    }
    const reply = () =>
      replyTo(
        {
          ...p.reply,
          // The reply's writes wait alongside other users' (fair by user), not behind them all.
          scheduler: forParty(p.scheduler, partyOf(msg)),
          onUpstreamEnd: releaseSlot,
          replyKey,
          stop: entry.stop.signal,
        },
        msg,
        text,
        p.botFor(msg.place),
        p.shutdown,
      );
    // The conversation and the reply in flight are read and written before anything is shown:
    // while the store cannot be used the message is held (its place's later messages wait
    // behind it) and its reply starts once the store is back.
    const status = await reply().catch((err: unknown) => {
      if (!isStoreUnavailable(err)) throw err;
      return p.hold.after(err, msg, 'reply', reply, p.shutdown);
    });
    return { status };
  } catch (err) {
    // replyTo handles upstream and platform errors itself; this is a store failure before the
    // first write (or a bug).
    releaseSlot();
    return await p.unexpected(msg, err);
  } finally {
    endLive();
    releaseSlot();
  }
}
