import type { Logger } from './logger.js';
import { scrubSecrets } from './logger.js';

// The life of a `start` process, as a supervisor (Docker, Kubernetes, systemd) sees it:
// - SIGTERM/SIGINT are listened for before anything starts, so a signal during start-up (a slow
//   slash-command registration, a database migration) drains and exits 0 instead of killing the
//   process by the signal;
// - a part that cannot start, or a fatal error later, ends the process non-zero within
//   FATAL_EXIT_MS, after one log line that says what failed and what to check;
// - nothing lingers once the process has decided to end: a handle left open (a held request, a
//   pool's socket) cannot keep a half-stopped process alive.

/** A fatal error ends the process within this (CONTRACT §4: "within 10 s"). */
export const FATAL_EXIT_MS = 10_000;
/** Tearing down after a fatal error gets this much; the rest of FATAL_EXIT_MS is margin. */
export const FATAL_TEARDOWN_MS = 5_000;
/** Once `run` has returned, an open handle may keep the process this long at most. */
export const LINGER_MS = 1_000;

/** What failed, and what an operator should check. */
export interface Fatal {
  /** e.g. "the discord connector cannot start". */
  what: string;
  /** The error, scrubbed. */
  reason: string;
  /** e.g. "check DISCORD_BOT_TOKEN". */
  check: string;
}

export interface ProcessWatch {
  /** The first SIGTERM or SIGINT. */
  readonly signalled: Promise<NodeJS.Signals>;
  /** The first fatal error reported. */
  readonly fatal: Promise<Fatal>;
  reportFatal(f: Fatal): void;
}

export function errText(err: unknown): string {
  return scrubSecrets(err instanceof Error ? err.message : String(err));
}

/** Network failures by code, worded as doctor words them (doctor/http.ts). */
const NETWORK_CODES: Record<string, string> = {
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
};

/**
 * An error's text with the network cause SDKs wrap away: Slack's client says only "A request
 * error occurred: fetch failed", and the DNS failure naming the host sits two levels down
 * (`original`, then `cause`). Adds "(host name not found: slack.com, ENOTFOUND)".
 */
export function errTextWithCause(err: unknown): string {
  const text = errText(err);
  let cur: unknown = err;
  for (let depth = 0; depth < 6 && cur !== null && typeof cur === 'object'; depth++) {
    const e = cur as { code?: unknown; hostname?: unknown; host?: unknown; original?: unknown; cause?: unknown };
    const what = typeof e.code === 'string' ? NETWORK_CODES[e.code] : undefined;
    if (what !== undefined && typeof e.code === 'string') {
      const host = typeof e.hostname === 'string' ? e.hostname : typeof e.host === 'string' ? e.host : undefined;
      return `${text} (${what}${host !== undefined ? `: ${host}` : ''}, ${e.code})`;
    }
    cur = e.original ?? e.cause;
  }
  return text;
}

/** The one log line of a fatal error. */
export function logFatal(log: Logger, f: Fatal): void {
  log.fatal({ err: f.reason, check: f.check }, `${f.what}: ${f.reason}; ${f.check}; exiting`);
}

let watching: ProcessWatch | undefined;

/** Listens for signals and crashes from now on (once per process). */
export function watchProcess(log: Logger): ProcessWatch {
  if (watching !== undefined) return watching;
  let onSignal!: (s: NodeJS.Signals) => void;
  let onFatal!: (f: Fatal) => void;
  const signalled = new Promise<NodeJS.Signals>((resolve) => (onSignal = resolve));
  const fatal = new Promise<Fatal>((resolve) => (onFatal = resolve));
  let firstSignal: NodeJS.Signals | undefined;
  const handle = (signal: NodeJS.Signals) => {
    if (firstSignal === undefined) {
      firstSignal = signal;
      // A person at a terminal pressed Ctrl-C: say that the wait is the drain, and how to skip it.
      if (signal === 'SIGINT')
        log.warn({ signal }, 'stopping: finishing the replies in flight; press Ctrl-C again to exit now');
      onSignal(signal);
      return;
    }
    // Ctrl-C twice: the operator wants out now. A repeated SIGTERM changes nothing.
    if (signal === 'SIGINT') {
      log.warn({ signal }, 'second signal: exiting without finishing the drain');
      process.exit(130);
    }
    log.info({ signal }, 'already shutting down');
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
  process.on('uncaughtException', (err) => {
    // The process state is unknown: no orderly teardown, just the line and the exit.
    log.fatal({ err: errText(err), stack: err.stack }, 'uncaught exception; exiting');
    process.exitCode = 1;
    setImmediate(() => process.exit(1));
  });
  process.on('unhandledRejection', (reason) => {
    log.error({ err: errText(reason) }, 'unhandled promise rejection');
  });
  watching = { signalled, fatal, reportFatal: (f) => onFatal(f) };
  return watching;
}

/**
 * `run` has returned `code`: the process ends now with it, even when a handle is still open. The
 * timer is unref'd, so a process whose loop is already empty ends at once, as usual.
 */
export function endWithin(code: number, ms = LINGER_MS): void {
  process.exitCode = code;
  setTimeout(() => process.exit(code), ms).unref();
}

/** What to check when a platform cannot start, from its error. */
export function startHint(platform: string, reason: string): string {
  const auth =
    /\b401\b|\b4004\b|unauthori[sz]ed|authentication ?failed|invalid[ _]?(?:auth|token)|not_authed|token_revoked|account_inactive/i;
  // A name that does not resolve is the network's fault on either platform, never the token's:
  // say what doctor says (ENOTFOUND) before guessing at tokens or intents.
  if (/\b(ENOTFOUND|EAI_AGAIN)\b/.test(reason)) {
    const api = platform === 'slack' ? 'SLACK_API_URL' : platform === 'discord' ? 'DISCORD_API_URL' : 'its URL';
    return `the host name did not resolve: check DNS and the network from this machine (and ${api} if set)`;
  }
  if (platform === 'discord') {
    return auth.test(reason)
      ? 'check DISCORD_BOT_TOKEN (the bot token from the Developer Portal, Bot tab)'
      : 'check DISCORD_BOT_TOKEN, that Discord (or DISCORD_API_URL) can be reached, and the bot’s intents';
  }
  if (platform === 'slack') {
    return auth.test(reason)
      ? 'check SLACK_BOT_TOKEN (xoxb-…) and, in Socket Mode, SLACK_APP_TOKEN (xapp-…)'
      : 'check SLACK_BOT_TOKEN / SLACK_APP_TOKEN and that Slack (or SLACK_API_URL) can be reached';
  }
  return 'check its configuration';
}

/** A part that cannot start: which one, why, what to check. */
export class StartFailure extends Error {
  constructor(readonly fatal: Fatal) {
    super(fatal.reason);
  }
}

export function asFatal(err: unknown): Fatal {
  if (err instanceof StartFailure) return err.fatal;
  return { what: 'the bridge cannot start', reason: errText(err), check: 'check the configuration it names' };
}

/** `p`, or a rejection after `ms`: no close or stop may hold the process forever. */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
