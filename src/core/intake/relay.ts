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
import type { Relay, RelayDeps } from './relay-types.js';
import { replyTo } from '../reply/reply-to.js';
import { RateLimitScheduler } from '../budget/scheduler.js';
import { isStoreUnavailable } from '../store-errors.js';
import { HoldFullError, StoreHold } from './store-hold.js';
import { CONTEXT_OFF, ThreadContext } from '../reply/thread-context.js';
import { MESSAGES } from '../user-messages.js';

export type { RecoveryReport } from '../reply/recovery.js';

// Incoming message → admission (admission.ts) → its turn in its place (place-order.ts) → an
// upstream slot, fair by user (FairSlots, place-order.ts) → the reply (reply/reply-to.ts), registered live
// for Stop (live-replies.ts). The relay composes those parts; the place's spot is taken
// synchronously in handle(), before the first await, so replies in one place keep the order in
// which the connector called handle(). With several replicas, PlaceLocks extends that order
// across processes. The process's shutdown is the drain (drain.ts); `stop` is a user's Stop.

export type { AllowList } from './admission.js';
export type * from './relay-types.js';

/** The parts createRelay composes, as the steps after admission use them. */
interface Parts {
  deps: RelayDeps;
  order: PlaceOrder;
  admission: Admission;
  stops: UserStops;
  resetPlace(place: Place): Promise<void>;
  conversations: Conversations;
  threadContext: ThreadContext;
  scheduler: RateLimitScheduler;
  slots: FairSlots;
  live: LiveReplies;
  /** Messages kept while the store cannot be used (store-hold.ts). */
  hold: StoreHold;
  shutdown: AbortSignal;
  /** Replies with an upstream slot now; `changed` reports it. */
  running: { count: number; changed(): void };
  /** The number waiting (for a place or a slot) changed. */
  reportQueue(): void;
  notice(msg: IncomingMessage, text: string): Promise<void>;
  unexpected(msg: IncomingMessage, err: unknown): Promise<HandleResult>;
}

export function createRelay(deps: RelayDeps): Relay {
  const { settings, clock, metrics, inflight, logger } = deps;
  const scheduler = deps.scheduler ?? new RateLimitScheduler({ clock });
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
  const slots = new FairSlots(settings.maxConcurrentReplies);
  const reportQueue = () => metrics.queueDepth(order.waiting + slots.waiting);
  const order: PlaceOrder = new PlaceOrder({
    maxWaitingPerPlace: settings.maxQueuePerPlace ?? 10,
    shared: deps.sharedQueue,
    onWaiting: reportQueue,
    onGiveBackError: (err) =>
      logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not give a place back'),
  });
  const shutdown = new AbortController();
  // Every reply in flight listens to it (up to MAX_CONCURRENT_REPLIES): not a leak.
  setMaxListeners(0, shutdown.signal);
  const pending = new Set<Promise<HandleResult>>();
  const running = { count: 0, changed: () => metrics.inFlight(running.count) };
  /** Replies being written, by reply key and by place (one per place: the place's order). */
  const live = new LiveReplies();
  deps.remoteStops?.onStop((replyKey, userId) => live.stop(replyKey, userId));
  const stops = userStops(live, deps.remoteStops);
  const pruning = pruneHourly({ ...deps, retentionDays: settings.conversationRetentionDays });

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
  /**
   * A store failure or a bug before anything was shown: the user still gets a word. A message the
   * store's outage held (store-hold.ts) and that cannot wait any longer: the hold is full (busy,
   * privately), the shutdown came first (restarting), or the outage outlasted the hold (storage).
   */
  async function unexpected(msg: IncomingMessage, err: unknown): Promise<HandleResult> {
    const platform = msg.place.platform;
    if (err instanceof HoldFullError) {
      await refusals.tell(msg, MESSAGES.overloaded);
      return { status: 'queue_full' };
    }
    if (shutdown.signal.aborted && err === shutdown.signal.reason) {
      await msg.sink.clearWorking().catch(() => {});
      metrics.deliveryRefused(platform, 'restarting');
      await notice(msg, MESSAGES.restarting);
      return { status: 'interrupted' };
    }
    const storage = isStoreUnavailable(err);
    const reason = err instanceof Error ? err.message : String(err);
    if (storage) logger.error({ err: reason }, 'the store is unavailable; message answered with a notice');
    else logger.error({ err: reason }, 'reply failed unexpectedly');
    metrics.replyFailed(platform, storage ? 'storage' : 'internal');
    if (storage) await msg.sink.clearWorking().catch(() => {});
    await notice(msg, storage ? MESSAGES.storageDown : MESSAGES.error);
    return { status: 'failed' };
  }

  const admission = new Admission({
    allow: settings.allow,
    userMessagesPerMinute: settings.userMessagesPerMinute,
    maxMessageChars: settings.maxMessageChars,
    maxQueued: settings.maxQueuedReplies ?? 256,
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
  const parts: Parts = {
    deps,
    order,
    admission,
    stops,
    resetPlace,
    conversations,
    threadContext,
    scheduler,
    slots,
    live,
    hold,
    shutdown: shutdown.signal,
    running,
    reportQueue,
    notice,
    unexpected,
  };

  return {
    rateLimits: scheduler,

    arrive: (place: Place, eventId: string, at: number): Arrival => order.arrive(place, eventId, at),

    handle(msg: IncomingMessage): Promise<HandleResult> {
      const p = admission.admit(msg).then((a) => ('status' in a ? a : respond(parts, a)));
      pending.add(p);
      order.handed(msg.arrival);
      // A message refused before its spot was taken gives up the place it took on arrival.
      msg.arrival?.leave();
      void p.finally(() => pending.delete(p)).catch(() => {});
      return p;
    },

    stop: (replyKey: string, userId: string): Promise<StopResult> => stops.reply(replyKey, userId),
    stopPlace: (place: Place, userId: string): Promise<StopResult> => stops.place(place, userId),
    vote: (replyKey: string, userId: string, v: Vote) =>
      recordVote({ feedback: deps.feedback, live, metrics, logger, clock }, replyKey, userId, v),

    async reset(place: Place): Promise<void> {
      // In the place's order, so a reset never overtakes a reply being written there.
      const turn = order.enterLocal(placeKey(place));
      if (turn === undefined) {
        await resetPlace(place);
        return;
      }
      const release = await turn;
      try {
        await resetPlace(place);
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

/** Run `work` once the message is first in its place (spot taken in handle()), here and across replicas. */
function inTurn(p: Parts, a: Admitted, work: () => Promise<HandleResult>): Promise<HandleResult> {
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
    outage: (err, retry) => p.hold.after(err, msg, 'place line', retry, shutdown),
    lastWrites: () => scheduler.placeWrites([...sink.buckets('post'), ...sink.buckets('edit')]),
  });
}

/** A message admitted (seen for the first time, by any replica): answer it, or say why not. */
async function respond(p: Parts, a: Admitted): Promise<HandleResult> {
  const { msg, text, files } = a;
  if (a.kind === 'reset') {
    return inTurn(p, a, async () => {
      await p.resetPlace(msg.place);
      await p.notice(msg, MESSAGES.reset);
      return { status: 'reset' };
    });
  }
  if (a.kind === 'stop') {
    // `stop` from the asker while their reply streams here (or, with several replicas, at
    // another one) stops it; from anyone else, or with nothing streaming, it is a message.
    const reply = p.live.inPlace(placeKey(msg.place));
    if (reply === undefined ? p.deps.remoteStops !== undefined : reply.askerId === msg.userId) {
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
    files.length === 0
      ? undefined
      : attachmentBlock(files, { userText: text, maxChars: p.deps.settings.maxMessageChars });
  return inTurn(p, a, async () => {
    // Files that did not make it are named first, in the place's spot, so the notice comes
    // before the reply; the rest of the message still goes upstream.
    if (withFiles !== undefined && withFiles.skipped.length > 0) {
      await p.notice(msg, skippedNotice(withFiles.skipped));
    }
    return answer(p, msg, withFiles?.messageText ?? text);
  });
}

/** A message first in its place: an upstream slot (fair by user), then its reply, live for Stop. */
async function answer(p: Parts, msg: IncomingMessage, text: string): Promise<HandleResult> {
  const { deps, slots, running } = p;
  const { settings, metrics } = deps;
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
  deps.remoteStops?.started(placeKey(msg.place), replyKey, msg.userId);
  try {
    if (p.shutdown.aborted) {
      releaseSlot();
      await p.notice(msg, MESSAGES.restarting);
      return { status: 'interrupted' };
    }
    const reply = () =>
      replyTo(
        {
          chat: deps.chat,
          conversations: p.conversations,
          inflight: deps.inflight,
          metrics,
          logger: deps.logger,
          clock: deps.clock,
          // The reply's writes wait in turn with other users' (fair by user), not behind them all.
          scheduler: forParty(p.scheduler, partyOf(msg)),
          streaming: settings.streaming,
          editIntervalMs: settings.streamEditIntervalMs,
          onUpstreamEnd: releaseSlot,
          replyKey,
          ...(deps.replicaId !== undefined ? { owner: deps.replicaId } : {}),
          stop: entry.stop.signal,
          feedback: { store: deps.feedback, show: settings.feedback === true },
          agent: { steps: settings.showSteps !== false, sources: settings.showSources !== false },
          context: p.threadContext,
          ...(settings.maxMessageChars !== undefined ? { maxMessageChars: settings.maxMessageChars } : {}),
          ...(settings.replyMaxSeconds !== undefined ? { replyMaxMs: settings.replyMaxSeconds * 1000 } : {}),
          ...(settings.replyMaxChars !== undefined ? { replyMaxChars: settings.replyMaxChars } : {}),
          ...(deps.hooks !== undefined ? { hooks: deps.hooks } : {}),
        },
        msg,
        text,
        deps.botFor(msg.place),
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
