import type { SlackConfig } from '../config/config.js';
import { type Answer, type CheckClient, CheckError, showUrl } from './http.js';
import { type CheckRow, fail, ok, skip } from './types.js';

// Slack: the bot token (auth.test, and its scopes from the `x-oauth-scopes` header), the app
// token for Socket Mode (apps.connections.open: it hands out a websocket URL, which we do not
// open), and the signing secret for HTTP mode.

// The *:history scopes also let the bridge read a place's earlier messages (thread context).
// files:read: without it Slack answers file downloads with a sign-in page and every shared file
// is reported to the user as a failed download.
export const NEEDED_SCOPES = [
  'app_mentions:read',
  'chat:write',
  'im:history',
  'channels:history',
  'groups:history',
  'mpim:history',
  'files:read',
];

const TOKEN_HINTS: Record<string, string> = {
  invalid_auth: 'check the token',
  not_authed: 'the token is empty',
  token_revoked: 'the token was revoked: reinstall the app and copy the new token',
  token_expired: 'the token expired: reinstall the app or turn off token rotation',
  account_inactive: 'the app or its workspace was deactivated',
  not_allowed_token_type: 'wrong kind of token',
};

async function slackCall(http: CheckClient, apiUrl: string, method: string, token: string): Promise<Answer> {
  return http.post(`${apiUrl}${method}`, {
    authorization: `Bearer ${token}`,
    'content-type': 'application/x-www-form-urlencoded',
  });
}

/** `ok: true` in the body, or the `error` string Slack gave (or the HTTP status). */
function slackResult(a: Answer): { ok: true; body: Record<string, unknown> } | { ok: false; error: string } {
  const body = a.json as Record<string, unknown> | undefined;
  if (body?.ok === true) return { ok: true, body };
  if (typeof body?.error === 'string') return { ok: false, error: body.error };
  return { ok: false, error: `HTTP ${a.status}` };
}

function unreachable(check: string, apiUrl: string, err: CheckError): CheckRow {
  return fail(
    check,
    `${showUrl(apiUrl)}: ${err.message}`,
    'check SLACK_API_URL and the network (Slack must be reachable over HTTPS)',
  );
}

export async function checkSlack(slack: SlackConfig | undefined, http: CheckClient): Promise<CheckRow[]> {
  if (!slack) return [skip('slack', 'not configured (set SLACK_BOT_TOKEN, or the SLACK_CLIENT_* OAuth trio)')];
  const rows: CheckRow[] = [];

  if (slack.botToken !== undefined) {
    rows.push(...(await checkBotToken(slack, slack.botToken, http)));
  } else {
    rows.push(skip('slack auth.test', 'OAuth install: each workspace brings its own token via /slack/install'));
  }

  if (slack.appToken !== undefined) {
    rows.push(await checkAppToken(slack, slack.appToken, http));
  } else if (slack.signingSecret !== undefined) {
    rows.push(ok('slack HTTP mode', 'SLACK_SIGNING_SECRET set; Slack must reach POST /slack/events on this server'));
  } else {
    rows.push(
      fail(
        'slack HTTP mode',
        'SLACK_SIGNING_SECRET is not set',
        'set SLACK_SIGNING_SECRET (Basic Information page), or SLACK_APP_TOKEN for Socket Mode',
      ),
    );
  }
  return rows;
}

async function checkBotToken(slack: SlackConfig, token: string, http: CheckClient): Promise<CheckRow[]> {
  let answer: Answer;
  try {
    answer = await slackCall(http, slack.apiUrl, 'auth.test', token);
  } catch (err) {
    if (!(err instanceof CheckError)) throw err;
    return [unreachable('slack auth.test', slack.apiUrl, err), skip('slack scopes', 'auth.test failed')];
  }
  const r = slackResult(answer);
  if (!r.ok) {
    const why = TOKEN_HINTS[r.error] ?? 'check the token';
    const shape = token.startsWith('xoxb-') ? '' : ' (a bot token starts with xoxb-)';
    return [
      fail('slack auth.test', `refused: ${r.error}`, `SLACK_BOT_TOKEN was refused (${r.error}): ${why}${shape}`),
      skip('slack scopes', 'auth.test failed'),
    ];
  }
  const { team, team_id: teamId, user } = r.body;
  const rows = [
    ok('slack auth.test', `bot @${String(user ?? '?')} in ${String(team ?? '?')} (${String(teamId ?? '?')})`),
  ];

  const header = answer.headers['x-oauth-scopes'];
  const granted = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (header === undefined) {
    rows.push(skip('slack scopes', 'Slack did not report the token scopes'));
  } else {
    const missing = NEEDED_SCOPES.filter((s) => !granted.includes(s));
    rows.push(
      missing.length === 0
        ? ok('slack scopes', NEEDED_SCOPES.join(', '))
        : fail(
            'slack scopes',
            `missing: ${missing.join(', ')}`,
            'add the missing Bot Token Scopes under OAuth & Permissions, then reinstall the app',
          ),
    );
  }
  return rows;
}

async function checkAppToken(slack: SlackConfig, token: string, http: CheckClient): Promise<CheckRow> {
  const check = 'slack socket mode';
  let answer: Answer;
  try {
    answer = await slackCall(http, slack.apiUrl, 'apps.connections.open', token);
  } catch (err) {
    if (!(err instanceof CheckError)) throw err;
    return unreachable(check, slack.apiUrl, err);
  }
  const r = slackResult(answer);
  if (r.ok) return ok(check, 'SLACK_APP_TOKEN accepted (apps.connections.open)');
  const shape = token.startsWith('xapp-') ? '' : ' (an app-level token starts with xapp-)';
  return fail(
    check,
    `refused: ${r.error}`,
    `SLACK_APP_TOKEN was refused (${r.error}): use an app-level token with connections:write and enable Socket Mode${shape}`,
  );
}
