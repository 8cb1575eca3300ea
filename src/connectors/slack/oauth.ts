import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger as BoltLogger, InstallationStore } from '@slack/bolt';
// @slack/oauth is Bolt's own dependency; Bolt exports its types but not InstallProvider, and
// this one provider must serve both receivers on the bridge's server.
import { type CodedError, ErrorCode, InstallProvider, type InstallURLOptions } from '@slack/oauth';
import { scrubSecrets } from '../../logger.js';
import { type ClientOf, forwardedClient } from './forwarded-client.js';
import { type OAuthStates, SingleUseStateStore, STATE_TTL_MS } from './oauth-state.js';
import { BOT_SCOPES } from './scopes.js';

export const INSTALL_PATH = '/slack/install';
export const REDIRECT_PATH = '/slack/oauth_redirect';

export interface OAuthOptions {
  clientId: string;
  clientSecret: string;
  stateSecret: string;
  installationStore: InstallationStore;
  apiUrl: string;
  logger: BoltLogger;
  /**
   * Where install links' states are kept (single use, 10 minutes): the store's `oauthStates` so
   * that any replica may take Slack's redirect. Default: this process's memory.
   */
  states?: OAuthStates;
  /** The clock of state expiry (tests). */
  now?: () => number;
  /** Who asked for an install link (TRUST_PROXY); default the socket's address. */
  clientOf?: ClientOf;
}

export interface SlackOAuth {
  installer: InstallProvider;
  /** Serves GET /slack/install and GET /slack/oauth_redirect. Takes no body. */
  listener: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) & { maxBodyBytes: number };
}

export function createOAuth(opts: OAuthOptions): SlackOAuth {
  const logger = scrubbingLogger(opts.logger, [opts.clientSecret, opts.stateSecret]);
  // Every install link asks for the same scopes, so a state needs to carry no options.
  const installOptions: InstallURLOptions = { scopes: [...BOT_SCOPES] };
  const stateStore = new SingleUseStateStore({
    installOptions,
    ...(opts.states ? { states: opts.states } : {}),
    ...(opts.now ? { now: opts.now } : {}),
  });
  const clientOf = opts.clientOf ?? forwardedClient(undefined);
  const refusals = new ThrottledCount(logger, opts.now ?? Date.now);
  const installer = new InstallProvider({
    clientId: opts.clientId,
    clientSecret: opts.clientSecret,
    // Single use and kept by the bridge (oauth-state.ts), instead of @slack/oauth's signed state
    // that stays good for its whole lifetime however often it is replayed. No secret needed.
    stateStore,
    installationStore: opts.installationStore,
    // The provider hands this logger to its WebClient, whose debug lines hold the
    // oauth.v2.access arguments (client_secret among them): hence the scrubbing wrapper.
    logger,
    clientOptions: { slackApiUrl: opts.apiUrl },
    // No intermediate "Add to Slack" page: /slack/install goes straight to Slack.
    directInstall: true,
  });
  const listener = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== INSTALL_PATH && path !== REDIRECT_PATH) return page(res, 404, 'Not found', 'No such page.');
    if (req.method !== 'GET') {
      res.setHeader('allow', 'GET');
      return page(res, 405, 'Method not allowed', 'This page only answers GET.');
    }
    try {
      if (path === INSTALL_PATH) {
        // A few pending links per client address: a flood from one address gets 429s, and every
        // pending link (its own included) stays good until used or expired.
        const client = clientOf(req);
        const state = await stateStore.issueFor(client);
        if (state === undefined) {
          refusals.note(client);
          res.setHeader('retry-after', String(Math.ceil(STATE_TTL_MS / 1000)));
          return page(
            res,
            429,
            'Too many install links',
            `Too many install links are open from this address. Finish one, or try again in ${STATE_TTL_MS / 60_000} minutes.`,
          );
        }
        await stateStore.withIssued(state, () => installer.handleInstallPath(req, res, {}, installOptions));
      } else await installer.handleCallback(req, res, { failure: callbackFailure });
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

/** Install links refused with 429: one log line a minute at most, with the count and addresses. */
class ThrottledCount {
  private count = 0;
  private readonly clients = new Set<string>();
  private last: number | undefined;

  constructor(
    private readonly logger: BoltLogger,
    private readonly now: () => number,
  ) {}

  note(client: string): void {
    this.count++;
    if (this.clients.size < 10) this.clients.add(client);
    const t = this.now();
    if (this.last !== undefined && t - this.last < 60_000 && t >= this.last) return;
    this.logger.warn(
      `Slack install links refused (too many pending per address): ${this.count} from ${[...this.clients].join(', ')}`,
    );
    this.last = t;
    this.count = 0;
    this.clients.clear();
  }
}
