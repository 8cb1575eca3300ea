import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InstallationStore } from '@slack/bolt';
// @slack/oauth is Bolt's own dependency; Bolt exports its types but not InstallProvider, and
// this one provider must serve both receivers on the bridge's server.
import { InstallProvider } from '@slack/oauth';
import type { BoltLogger } from './bolt-logger.js';
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
  /** Where Slack sends the browser to approve; tests point it at a fake. */
  authorizationUrl?: string;
}

export interface SlackOAuth {
  installer: InstallProvider;
  /** Serves GET /slack/install and GET /slack/oauth_redirect. */
  listener(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

export function createOAuth(opts: OAuthOptions): SlackOAuth {
  const installer = new InstallProvider({
    clientId: opts.clientId,
    clientSecret: opts.clientSecret,
    stateSecret: opts.stateSecret,
    installationStore: opts.installationStore,
    logger: opts.logger,
    clientOptions: { slackApiUrl: opts.apiUrl },
    // No intermediate "Add to Slack" page: /slack/install goes straight to Slack.
    directInstall: true,
    ...(opts.authorizationUrl ? { authorizationUrl: opts.authorizationUrl } : {}),
  });
  const scopes = [...BOT_SCOPES];
  return {
    installer,
    async listener(req, res) {
      const path = (req.url ?? '').split('?')[0];
      try {
        if (req.method === 'GET' && path === INSTALL_PATH) {
          await installer.handleInstallPath(req, res, {}, { scopes });
          return;
        }
        if (req.method === 'GET' && path === REDIRECT_PATH) {
          await installer.handleCallback(req, res);
          return;
        }
      } catch (err) {
        opts.logger.error(`Slack OAuth request failed: ${(err as Error).message}`);
        if (!res.headersSent) {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end('Slack installation failed');
        }
        return;
      }
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    },
  };
}
