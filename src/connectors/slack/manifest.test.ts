import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BOT_EVENTS, BOT_SCOPES } from './scopes.js';

// manifest.json (repository root) is what operators paste into Slack; it must ask for what the
// code uses, and OAuth installs request the same scopes.
describe('manifest.json', () => {
  const manifest = JSON.parse(readFileSync(new URL('../../../manifest.json', import.meta.url), 'utf8')) as {
    features: {
      agent_view?: { agent_description?: string };
      assistant_view?: { assistant_description?: string };
    };
    oauth_config: { scopes: { bot: string[] } };
    settings: {
      event_subscriptions: { bot_events: string[]; request_url: string };
      interactivity: { is_enabled: boolean; request_url?: string };
      socket_mode_enabled: boolean;
    };
  };

  it('lists the bot scopes and events the connector needs, Socket Mode on', () => {
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual([...BOT_SCOPES].sort());
    expect([...manifest.settings.event_subscriptions.bot_events].sort()).toEqual([...BOT_EVENTS].sort());
    expect(manifest.settings.socket_mode_enabled).toBe(true);
  });

  it('turns interactivity on (Stop and feedback buttons), on the events URL for HTTP mode', () => {
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    expect(manifest.settings.interactivity.request_url).toBe(manifest.settings.event_subscriptions.request_url);
  });

  // Slack's agent messaging experience (agent sessions) is for apps declaring agent_view; the
  // assistant view stays for workspaces still on the assistant experience (deprecated, not gone).
  it('declares agent_view (description within 300 characters) and keeps assistant_view', () => {
    const agent = manifest.features.agent_view;
    expect(agent?.agent_description?.length ?? 0).toBeGreaterThan(0);
    expect(agent?.agent_description?.length ?? 0).toBeLessThanOrEqual(300);
    expect(manifest.features.assistant_view?.assistant_description).toBeTruthy();
  });
});
