// BOT_ROUTES: `slack:T1=bot1,slack:T1/C2=bot2,discord:G1=bot3,discord:G1/C4=bot4`.
// A route names a platform, a workspace (Slack team / Discord guild) and optionally a channel.
// Parsed here once; the core's botRouter (core/place.ts) indexes the routes at start and answers
// each message's "which bot" without calling into the config.

export interface BotRoute {
  platform: 'slack' | 'discord';
  workspaceId: string;
  channelId?: string;
  botId: string;
}

export class RouteParseError extends Error {}

export function parseBotRoutes(value: string | undefined): BotRoute[] {
  if (value === undefined || value.trim() === '') return [];
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map((entry) => {
      const m = /^(slack|discord):([^/=\s]+)(?:\/([^/=\s]+))?=([^=\s]+)$/i.exec(entry);
      if (!m) {
        throw new RouteParseError(
          `entry "${entry}" is not of the form platform:WORKSPACE[/CHANNEL]=BOT_ID (platform slack or discord)`,
        );
      }
      const [, platform, workspaceId, channelId, botId] = m as unknown as [
        string,
        string,
        string,
        string | undefined,
        string,
      ];
      const route: BotRoute = { platform: platform.toLowerCase() as 'slack' | 'discord', workspaceId, botId };
      if (channelId !== undefined) route.channelId = channelId;
      return route;
    });
}
