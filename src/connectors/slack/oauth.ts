import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InstallationStore } from '@slack/bolt';
// @slack/oauth is Bolt's own dependency; Bolt exports its types but not InstallProvider, and
// this one provider must serve both receivers on the bridge's server.
import {
  type CodedError,
  ErrorCode,
  InstallProvider,
  type InstallURLOptions,
  InvalidStateError,
  type StateStore,
} from '@slack/oauth';
import { scrubSecrets } from '../../logger.js';
import type { BoltLogger } from './bolt-logger.js';
import { BOT_SCOPES } from './scopes.js';

export const INSTALL_PATH = '/slack/install';
export const REDIRECT_PATH = '/slack/oauth_redirect';

/** How long an install link (its `state`) stays good. */
export const STATE_TTL_MS = 10 * 60 * 1000;
/** Install links open at once, at most; the oldest are forgotten first. */
export const MAX_PENDING_STATES = 10_000;

export interface OAuthOptions {
  clientId: string;
  clientSecret: string;
  stateSecret: string;
  installationStore: InstallationStore;
  apiUrl: string;
  logger: BoltLogger;
  /** Where Slack sends the browser to approve; tests point it at a fake. */
  authorizationUrl?: string;
  /** The clock of state expiry (tests). */
  now?: () => number;
}

export interface SlackOAuth {
  installer: InstallProvider;
  /** Serves GET /slack/install and GET /slack/oauth_redirect. Takes no body. */
  listener: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) & { maxBodyBytes: number };
}

export function createOAuth(opts: OAuthOptions): SlackOAuth {
  const logger = scrubbingLogger(opts.logger, [opts.clientSecret, opts.stateSecret]);
  const installer = new InstallProvider({
    clientId: opts.clientId,
    clientSecret: opts.clientSecret,
    // Single use and kept here, instead of @slack/oauth's signed state that stays good for its
    // whole lifetime however often it is replayed. The state secret is not needed for it.
    stateStore: new SingleUseStateStore(opts.now),
    installationStore: opts.installationStore,
    // The provider hands this logger to its WebClient, whose debug lines hold the
    // oauth.v2.access arguments (client_secret among them): hence the scrubbing wrapper.
    logger,
    clientOptions: { slackApiUrl: opts.apiUrl },
    // No intermediate "Add to Slack" page: /slack/install goes straight to Slack.
    directInstall: true,
    ...(opts.authorizationUrl ? { authorizationUrl: opts.authorizationUrl } : {}),
  });
  const scopes = [...BOT_SCOPES];
  const listener = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== INSTALL_PATH && path !== REDIRECT_PATH) return page(res, 404, 'Not found', 'No such page.');
    if (req.method !== 'GET') {
      res.setHeader('allow', 'GET');
      return page(res, 405, 'Method not allowed', 'This page only answers GET.');
    }
    try {
      if (path === INSTALL_PATH) await installer.handleInstallPath(req, res, {}, { scopes });
      else await installer.handleCallback(req, res, { failure: callbackFailure });
    } catch (err) {
      logger.error(`Slack OAuth request failed: ${(err as Error).message}`);
      if (!res.headersSent) page(res, 500, 'Installation failed', 'Slack installation failed. Please try again.');
    }
  };
  return { installer, listener: Object.assign(listener, { maxBodyBytes: 0 }) };
}

/** What the browser sees when the redirect from Slack cannot complete an install. */
function callbackFailure(error: CodedError, _o: InstallURLOptions, _req: IncomingMessage, res: ServerResponse): void {
  switch (error.code) {
    case ErrorCode.AuthorizationError: // the user pressed Cancel on Slack's page: not a fault
      return page(res, 200, 'Installation cancelled', 'The installation was cancelled. Nothing was installed.');
    case ErrorCode.InvalidStateError:
    case ErrorCode.MissingStateError:
      return page(
        res,
        400,
        'Install link expired',
        `This install link has expired or was already used. Start again at ${INSTALL_PATH}.`,
      );
    case ErrorCode.MissingCodeError:
      return page(
        res,
        400,
        'Installation failed',
        `Slack did not send an approval code. Start again at ${INSTALL_PATH}.`,
      );
    default:
      return page(res, 500, 'Installation failed', 'Slack installation failed. Please try again.');
  }
}

/** A small fixed HTML page; nothing from the request is echoed into it. */
function page(res: ServerResponse, status: number, title: string, text: string): void {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h2>${title}</h2><p>${text}</p></body></html>`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'cache-control': 'no-store',
  });
  res.end(html);
}

/**
 * OAuth `state` values kept in memory: random, good for STATE_TTL_MS, and good once (a replay, or a
 * link that expired, is refused). Bounded: past MAX_PENDING_STATES the oldest are dropped. One
 * process only: with several replicas behind one URL, the install and its redirect must reach the
 * same one (or this moves into the database).
 */
export class SingleUseStateStore implements StateStore {
  private readonly pending = new Map<string, { options: InstallURLOptions; expiresAt: number }>();

  constructor(
    private readonly now?: () => number,
    private readonly maxPending = MAX_PENDING_STATES,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  async generateStateParam(installOptions: InstallURLOptions, now: Date): Promise<string> {
    const t = this.now?.() ?? now.getTime();
    this.sweep(t);
    while (this.pending.size >= this.maxPending) {
      const oldest = this.pending.keys().next().value;
      if (oldest === undefined) break;
      this.pending.delete(oldest);
    }
    const state = randomBytes(24).toString('base64url');
    this.pending.set(state, { options: installOptions, expiresAt: t + STATE_TTL_MS });
    return state;
  }

  async verifyStateParam(now: Date, state: string): Promise<InstallURLOptions> {
    const t = this.now?.() ?? now.getTime();
    const entry = this.pending.get(state);
    // Used up whatever happens next: a second redirect with the same state is a replay.
    this.pending.delete(state);
    if (entry === undefined) throw new InvalidStateError('The state is unknown or was already used.');
    if (t > entry.expiresAt) throw new InvalidStateError('The state has expired.');
    return entry.options;
  }

  /** Drops expired entries from the front (insertion order is expiry order). */
  private sweep(t: number): void {
    for (const [key, entry] of this.pending) {
      if (entry.expiresAt >= t) break;
      this.pending.delete(key);
    }
  }
}

/**
 * A logger that blanks the given secrets out of every line, whatever the level (scrubSecrets also
 * catches `client_secret` fields, which @slack/web-api's debug output does not redact).
 */
export function scrubbingLogger(inner: BoltLogger, secrets: readonly string[]): BoltLogger {
  const values = secrets.filter((s) => s.length >= 4);
  const scrub = (m: unknown): unknown => {
    let text: string;
    if (typeof m === 'string') text = m;
    else if (m instanceof Error) text = m.message;
    else if (typeof m === 'object' && m !== null) text = JSON.stringify(m);
    else return m;
    for (const v of values) text = text.split(v).join('[redacted]');
    // The one-time code of oauth.v2.access is a credential too while it is fresh.
    return scrubSecrets(text).replace(/("code"\s*:\s*")[^"]*"/g, '$1[redacted]"');
  };
  return {
    debug: (...m) => inner.debug(...m.map(scrub)),
    info: (...m) => inner.info(...m.map(scrub)),
    warn: (...m) => inner.warn(...m.map(scrub)),
    error: (...m) => inner.error(...m.map(scrub)),
    setLevel: (l) => inner.setLevel(l),
    getLevel: () => inner.getLevel(),
    setName: (n) => inner.setName(n),
  };
}
