// BOT_ROUTES: `slack:T1=bot1,slack:T1/C2=bot2,discord:G1=bot3,discord:G1/C4=bot4`.
// A route names a platform, a workspace (Slack team / Discord guild) and optionally a channel.

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

/** Most specific match wins: workspace+channel, then workspace, else undefined (the default bot). */
export function resolveBotRoute(
  routes: readonly BotRoute[],
  platform: string,
  workspaceId: string | undefined,
  channelId: string | undefined,
): string | undefined {
  let workspaceMatch: string | undefined;
  for (const r of routes) {
    if (r.platform !== platform || r.workspaceId !== workspaceId) continue;
    if (r.channelId !== undefined) {
      if (r.channelId === channelId) return r.botId;
    } else if (workspaceMatch === undefined) {
      workspaceMatch = r.botId;
    }
  }
  return workspaceMatch;
}

/**
 * The relay's bot router: the bot for a place (any place with platform, workspace and channel),
 * from the routes, else the default bot. Places of other platforms (the test connector) get the default.
 */
export function botRouter(
  routes: readonly BotRoute[],
  defaultBotId: string,
): (place: { platform: string; workspaceId?: string; channelId: string }) => string {
  return (place) => resolveBotRoute(routes, place.platform, place.workspaceId, place.channelId) ?? defaultBotId;
}
