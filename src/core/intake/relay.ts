import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { attachmentBlock, skippedNotice } from '../reply/attachments.js';
import { isAllowed } from './allowlist.js';
import { Semaphore, settledOrTimeout } from './concurrency.js';
import { Conversations } from '../reply/conversations.js';
import { forParty } from '../budget/write-scheduler.js';
import { recordVote } from '../reply/feedback-votes.js';
import { LiveReplies } from './live-replies.js';
import { dedupOf } from './dedup.js';
import { drainArrivals, settledAllOrTimeout } from './drain-arrivals.js';
import { postNotice } from './notices.js';
import { pruner } from './pruning.js';
import { placeLine } from './place-line.js';
import { PlaceQueue, type Release } from './place-queue.js';
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
import { partyOf, Refusals } from './refusals.js';
import type { PlaceHold, PlaceTicket, Relay, RelayDeps } from './relay-types.js';
import { replyTo } from '../reply/reply-to.js';
import { stopsOf } from './stops.js';
import { RateLimitScheduler } from '../budget/scheduler.js';
import { isStoreUnavailable } from '../store-errors.js';
import { CONTEXT_OFF, ThreadContext } from '../reply/thread-context.js';
import { UserRateLimiter } from './user-limits.js';
import { MESSAGES } from '../user-messages.js';
import { hasVisibleText } from './visible-text.js';

export type { RecoveryReport } from '../reply/recovery.js';

// Incoming message → checks → per-place queue → global concurrency → route → reply (reply/reply-to.ts).
// The place's spot is taken synchronously in handle(), before the first await (the dedup record
// may be a database round trip), so replies in one place keep the order in which the connector
// called handle(). With several replicas, PlaceLocks extends that order across processes.

export type { AllowList } from './allowlist.js';
export type * from './relay-types.js';

const RESET_RE = /^reset$/i;
const STOP_RE = /^stop$/i;

/** A message's spot in its place: see enterPlace. */
interface Spot {
  local: Promise<Release> | undefined;
  line: PlaceTicket | undefined;
}

export function createRelay(deps: RelayDeps): Relay {
  const { settings, clock, metrics, events, inflight } = deps;
  const logger = deps.logger;
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
  const userLimits = new UserRateLimiter(settings.userMessagesPerMinute);
  const places = new PlaceQueue(settings.maxQueuePerPlace ?? 10);
  const slots = new Semaphore(settings.maxConcurrentReplies);
  const maxQueued = settings.maxQueuedReplies ?? 256;
  // One user may hold three quarters of the slots' queue at most: the rest is for everyone else.
  const maxQueuedPerUser = maxQueued - Math.floor(maxQueued / 4);
  const shutdown = new AbortController();
  // Every reply in flight listens to it (up to MAX_CONCURRENT_REPLIES): not a leak.
  setMaxListeners(0, shutdown.signal);
  const pending = new Set<Promise<HandleResult>>();
  let draining = false;
  const early = drainArrivals();
  let running = 0;
  /** Replies being written, by reply key and by place (one per place: the place queue). */
  const live = new LiveReplies();
  deps.remoteStops?.onStop((replyKey, userId) => live.stop(replyKey, userId));
  const stops = stopsOf(live, deps.remoteStops);

  // Refusals (per-user limit, busy, restarting): privately where the platform can, else rarely.
  const refusals = new Refusals({ scheduler, clock, logger });
  const dedup = dedupOf({ events, metrics, clock, notice: (msg, text) => refusals.tell(msg, text) });
  const maybePrune = pruner({ ...deps, retentionDays: settings.conversationRetentionDays });

  const line = placeLine(deps.placeLocks);

  const reportQueue = () => metrics.queueDepth(places.waiting + slots.waiting);
  const notice = (msg: IncomingMessage, text: string) => postNotice(msg.sink, text, scheduler, logger);

  /** Run `work` once the message is first in its place (spot taken in handle()), holding the place across replicas too. */
  function whenFirst(
    msg: IncomingMessage,
    { local, line: ticket }: Spot & { local: Promise<Release> },
    work: () => Promise<HandleResult>,
  ): Promise<HandleResult> {
    return local.then(async (release) => {
      reportQueue();
      let hold: PlaceHold | undefined;
      try {
        if (!shutdown.signal.aborted && ticket !== undefined) {
          hold = await ticket.acquire(shutdown.signal).catch((err: unknown) => {
            if (!shutdown.signal.aborted) throw err;
            return undefined;
          });
          // The place's own buckets (a channel's posts) go with the place, not with the replica.
          if (hold?.handedOver !== undefined) scheduler.handOver(hold.handedOver);
        }
        if (shutdown.signal.aborted) {
          // It came first only after shutdown began: say so rather than drop it unseen.
          await notice(msg, MESSAGES.restarting);
          return { status: 'interrupted' } as HandleResult;
        }
        return await work();
      } catch (err) {
        return await unexpected(msg, err);
      } finally {
        if (hold !== undefined) {
          const sink = msg.sink;
          await hold
            .release(scheduler.placeWrites([...sink.buckets('post'), ...sink.buckets('edit')]))
            .catch((err: unknown) =>
              logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not give a place back'),
            );
        }
        release();
      }
    });
  }

  /**
   * A message's spot in its place, taken in handle(): here (the place's queue; undefined when
   * too many wait there) and, with several replicas, in the place's line across them, joined at
   * once so that a later message at another replica cannot overtake it meanwhile.
   */
  function enterPlace(msg: IncomingMessage): Spot {
    const key = placeKey(msg.place);
    const local = places.enter(key);
    reportQueue();
    // A delivery of its own: a retry of the same event must not take the first one's place.
    return { local, line: line.ticket(key, msg.eventId, msg.receivedAt, msg.arrival) };
  }

  /** A spot taken for a message that will not be answered: pass it on when it comes. */
  function leavePlace(spot: Spot): void {
    spot.line?.leave();
    void spot.local?.then((release) => {
      release();
      reportQueue();
    });
  }

  /** A store failure or a bug before anything was shown: the user still gets a word. */
  async function unexpected(msg: IncomingMessage, err: unknown): Promise<HandleResult> {
    const storage = isStoreUnavailable(err);
    const reason = err instanceof Error ? err.message : String(err);
    if (storage) logger.error({ err: reason }, 'the store is unavailable; message answered with a notice');
    else logger.error({ err: reason }, 'reply failed unexpectedly');
    metrics.replyFailed(msg.place.platform, storage ? 'storage' : 'internal');
    await notice(msg, storage ? MESSAGES.storageDown : MESSAGES.error);
    return { status: 'failed' };
  }

  async function answer(msg: IncomingMessage, text: string): Promise<HandleResult> {
    let release: Release;
    try {
      release = await slots.acquire(shutdown.signal, partyOf(msg));
    } catch {
      // Still waiting for a slot when shutdown gave up on the rest.
      reportQueue();
      await notice(msg, MESSAGES.restarting);
      return { status: 'interrupted' };
    }
    reportQueue();
    running++;
    metrics.inFlight(running);
    let held = true;
    // The slot goes to the next message the moment the upstream request ends; the platform
    // writes still owed (final edits waiting for budget) do not hold an upstream slot.
    const releaseSlot = () => {
      if (!held) return;
      held = false;
      running--;
      metrics.inFlight(running);
      release();
      reportQueue();
    };
    const replyKey = randomUUID();
    const { entry, end: endLive } = live.begin(replyKey, msg.userId, placeKey(msg.place));
    deps.remoteStops?.started(placeKey(msg.place), replyKey, msg.userId);
    try {
      if (shutdown.signal.aborted) {
        releaseSlot();
        await notice(msg, MESSAGES.restarting);
        return { status: 'interrupted' };
      }
      const status = await replyTo(
        {
          chat: deps.chat,
          conversations,
          inflight,
          metrics,
          logger,
          clock,
          // The reply's writes wait in turn with other users' (fair by user), not behind them all.
          scheduler: forParty(scheduler, partyOf(msg)),
          streaming: settings.streaming,
          editIntervalMs: settings.streamEditIntervalMs,
          onUpstreamEnd: releaseSlot,
          replyKey,
          ...(deps.replicaId !== undefined ? { owner: deps.replicaId } : {}),
          stop: entry.stop.signal,
          feedback: { store: deps.feedback, show: settings.feedback === true },
          context: threadContext,
          ...(settings.maxMessageChars !== undefined ? { maxMessageChars: settings.maxMessageChars } : {}),
          ...(settings.replyMaxSeconds !== undefined ? { replyMaxMs: settings.replyMaxSeconds * 1000 } : {}),
          ...(settings.replyMaxChars !== undefined ? { replyMaxChars: settings.replyMaxChars } : {}),
          ...(deps.hooks !== undefined ? { hooks: deps.hooks } : {}),
        },
        msg,
        text,
        deps.botFor(msg.place),
        shutdown.signal,
      );
      return { status };
    } catch (err) {
      // replyTo handles upstream and platform errors itself; this is a store failure before the
      // first write (or a bug).
      releaseSlot();
      return await unexpected(msg, err);
    } finally {
      endLive();
      releaseSlot();
    }
  }

  function dispatch(msg: IncomingMessage): Promise<HandleResult> {
    const r = (status: HandleResult['status']) => Promise.resolve<HandleResult>({ status });
    if (msg.isFromBot) return r('ignored');
    if (!isAllowed(settings.allow, msg)) return r('not_allowed');
    const text = msg.text.trim();
    const files = msg.attachments ?? [];
    // Files are content too: a file sent without a word is still a question.
    if (!hasVisibleText(text) && files.length === 0) return r('ignored');
    // Refusals before markSeen leave the event unseen: a platform retry may still be answered
    // (by another replica, say). A retry of an event already taken gets no notice.
    // An event that arrived before the drain began may have been acked: it is still answered.
    if (draining && !early.admitted(msg.arrival)) return dedup.refuseUnseen(msg, MESSAGES.restarting, 'interrupted');
    const waiting = places.waiting + slots.waiting;
    if (waiting >= maxQueued || slots.waitingFor(partyOf(msg)) >= maxQueuedPerUser) {
      logger.warn({ platform: msg.place.platform, waiting }, 'queue full: busy notice');
      return dedup.refuseUnseen(msg, MESSAGES.overloaded, 'queue_full');
    }
    maybePrune(clock.now());
    // The place's spot now, in handle() order.
    const spot = enterPlace(msg);
    return dedup.seen(msg).then(
      (fresh) => (fresh ? admit(msg, text, files, spot) : (leavePlace(spot), r('duplicate'))),
      (err: unknown) => (leavePlace(spot), unexpected(msg, err)),
    );
  }

  /** Tell the user why the message is not answered (a limit or a full queue: a refusal), pass its spot on. */
  function refuseIn(spot: Spot, msg: IncomingMessage, message: string, status: HandleResult['status']) {
    leavePlace(spot);
    const refusal = status === 'user_rate_limited' || status === 'queue_full';
    return (refusal ? refusals.tell(msg, message) : notice(msg, message)).then((): HandleResult => ({ status }));
  }

  /** A message seen for the first time (by any replica): answer it, or say why not. */
  function admit(
    msg: IncomingMessage,
    text: string,
    files: NonNullable<IncomingMessage['attachments']>,
    spot: Spot,
  ): Promise<HandleResult> {
    const refuse = (message: string, status: HandleResult['status']) => refuseIn(spot, msg, message, status);
    if (RESET_RE.test(text) && (msg.isDm || msg.mentionsBot)) {
      if (spot.local === undefined) return refuse(MESSAGES.queueFull, 'queue_full');
      return whenFirst(msg, { ...spot, local: spot.local }, async () => {
        await resetPlace(msg.place);
        await notice(msg, MESSAGES.reset);
        return { status: 'reset' };
      });
    }
    if (STOP_RE.test(text) && files.length === 0) {
      // `stop` from the asker while their reply streams here (or, with several replicas, at
      // another one) stops it; from anyone else, or with nothing streaming, it is a message.
      const reply = live.inPlace(placeKey(msg.place));
      if (reply === undefined ? deps.remoteStops !== undefined : reply.askerId === msg.userId) {
        return stops
          .place(msg.place, msg.userId)
          .catch(() => 'not_found' as const)
          .then((result) => {
            if (result !== 'stopped') return admitMessage(msg, text, files, spot);
            leavePlace(spot);
            return { status: 'stopped' };
          });
      }
    }
    return admitMessage(msg, text, files, spot);
  }

  /** An ordinary message (not reset, not a stop): its checks, then its reply in the place's spot. */
  function admitMessage(
    msg: IncomingMessage,
    text: string,
    files: NonNullable<IncomingMessage['attachments']>,
    spot: Spot,
  ): Promise<HandleResult> {
    const refuse = (message: string, status: HandleResult['status']) => refuseIn(spot, msg, message, status);
    const platform = msg.place.platform;
    if (!userLimits.tryTake(`${platform}:${msg.userId}`, clock.now()))
      return refuse(MESSAGES.slowDown, 'user_rate_limited');
    if (settings.maxMessageChars !== undefined && text.length > settings.maxMessageChars) {
      return refuse(MESSAGES.tooLong(settings.maxMessageChars), 'failed');
    }
    if (spot.local === undefined) return refuse(MESSAGES.queueFull, 'queue_full');
    const withFiles =
      files.length === 0 ? undefined : attachmentBlock(files, { userText: text, maxChars: settings.maxMessageChars });
    return whenFirst(msg, { ...spot, local: spot.local }, async () => {
      // Files that did not make it are named first, in the place's spot, so the notice comes
      // before the reply; the rest of the message still goes upstream.
      if (withFiles !== undefined && withFiles.skipped.length > 0) {
        await notice(msg, skippedNotice(withFiles.skipped));
      }
      return answer(msg, withFiles?.messageText ?? text);
    });
  }

  return {
    rateLimits: scheduler,

    arrive: (place: Place, eventId: string, at: number): Arrival => early.note(line.arrive(place, eventId, at)),

    handle(msg: IncomingMessage): Promise<HandleResult> {
      const p = dispatch(msg);
      pending.add(p);
      early.handed(msg.arrival);
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
      const spot = places.enter(placeKey(place));
      if (spot === undefined) {
        await resetPlace(place);
        return;
      }
      const release = await spot;
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
      draining = true;
      early.begin();
      // The replies in flight, and the messages acked before the drain that are still on their way.
      await settledAllOrTimeout([pending, early.waiting], timeoutMs, clock);
      if (pending.size === 0) return;
      logger.info({ replies: pending.size }, 'interrupting replies still running at shutdown');
      shutdown.abort(new Error('shutting down'));
      await settledOrTimeout(pending, deps.drainGraceMs ?? 2000, clock);
    },

    stats() {
      return { inFlight: running, queued: places.waiting + slots.waiting };
    },
  };
}
