import type { RawEnv } from './env-schema.js';

// The shapes of Slack's tokens, checked before any network call: a bot token starts with xoxb-,
// an app-level token (Socket Mode) with xapp-. A token of a known wrong kind, two tokens swapped,
// or an app token with no bot token is a configuration error (one line each, exit 2); a token of
// no known shape is only warned about (a proxy or a test double may issue its own).

const KINDS: [RegExp, string][] = [
  [/^xoxb-/, 'a bot token (xoxb-)'],
  [/^xapp-/, 'an app-level token (xapp-)'],
  [/^xoxp-/, 'a user token (xoxp-)'],
  [/^xox[aer]-/, 'a refresh or workspace token'],
  [/^xoxc-/, 'a browser session token (xoxc-)'],
  [/^xoxd-/, 'a browser cookie (xoxd-)'],
];

/** What kind of Slack token `v` looks like, never any of its secret part. */
function kindOf(v: string): string | undefined {
  return KINDS.find(([re]) => re.test(v))?.[1];
}

const BOT_WHERE = 'the Bot User OAuth Token, xoxb-…, from OAuth & Permissions';
const APP_WHERE = 'an app-level token, xapp-…, with connections:write, from Basic Information > App-Level Tokens';

export function slackTokenProblems(raw: RawEnv): { problems: string[]; warnings: string[] } {
  const problems: string[] = [];
  const warnings: string[] = [];
  const bot = raw.SLACK_BOT_TOKEN;
  const app = raw.SLACK_APP_TOKEN;
  const oauth = raw.SLACK_CLIENT_ID !== undefined;
  if (bot !== undefined && app !== undefined && bot.startsWith('xapp-') && app.startsWith('xoxb-')) {
    problems.push(
      'SLACK_BOT_TOKEN and SLACK_APP_TOKEN are swapped: the bot token (xoxb-…) goes in SLACK_BOT_TOKEN, the app-level token (xapp-…) in SLACK_APP_TOKEN',
    );
  } else {
    if (bot !== undefined && !bot.startsWith('xoxb-')) {
      const kind = kindOf(bot);
      const text = `SLACK_BOT_TOKEN holds ${kind ?? 'no known kind of Slack token'}: it takes ${BOT_WHERE}`;
      if (kind !== undefined)
        problems.push(bot.startsWith('xapp-') ? `${text} (the xapp- token goes in SLACK_APP_TOKEN)` : text);
      else warnings.push(text);
    }
    if (app !== undefined && !app.startsWith('xapp-')) {
      const kind = kindOf(app);
      const text = `SLACK_APP_TOKEN holds ${kind ?? 'no known kind of Slack token'}: it takes ${APP_WHERE}`;
      if (kind !== undefined)
        problems.push(app.startsWith('xoxb-') ? `${text} (the xoxb- token goes in SLACK_BOT_TOKEN)` : text);
      else warnings.push(text);
    }
  }
  if (app !== undefined && bot === undefined && !oauth) {
    problems.push(
      `SLACK_APP_TOKEN is set but SLACK_BOT_TOKEN is not: Socket Mode needs both (set SLACK_BOT_TOKEN to ${BOT_WHERE}), or unset SLACK_APP_TOKEN`,
    );
  }
  return { problems, warnings };
}
