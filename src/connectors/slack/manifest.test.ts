import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SUGGESTED_PROMPTS } from './assistant.js';
import { ASSISTANT_VIEW_EVENTS, BOT_EVENTS, BOT_SCOPES } from './scopes.js';

// manifest.json (repository root) is what operators paste into Slack; it must ask for what the
// code uses, and OAuth installs request the same scopes.
describe('manifest.json', () => {
  const manifest = JSON.parse(readFileSync(new URL('../../../manifest.json', import.meta.url), 'utf8')) as {
    features: {
      agent_view?: { agent_description?: string; suggested_prompts?: { title: string; message: string }[] };
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

  // Slack's Agent messaging experience: new apps can no longer choose assistant_view, and an app
  // switches from one to the other (https://docs.slack.dev/ai/migrating-to-agent-messaging/):
  // the manifest declares agent_view alone, with app_home_opened (tab "messages") in place of
  // assistant_thread_started and app_context_changed. Apps still on assistant_view keep their own
  // manifest; the bridge handles both (docs/slack-setup.md).
  it('declares agent_view alone (description within 300 characters, at most 4 prompts)', () => {
    const agent = manifest.features.agent_view;
    expect(agent?.agent_description?.length ?? 0).toBeGreaterThan(0);
    expect(agent?.agent_description?.length ?? 0).toBeLessThanOrEqual(300);
    expect(agent?.suggested_prompts).toEqual(SUGGESTED_PROMPTS);
    expect(SUGGESTED_PROMPTS.length).toBeLessThanOrEqual(4);
    expect(manifest.features.assistant_view).toBeUndefined();
  });

  it("subscribes to the agent experience's events, not the assistant view's", () => {
    const events = manifest.settings.event_subscriptions.bot_events;
    expect(events).toEqual(
      expect.arrayContaining(['app_home_opened', 'app_context_changed', 'agent_session_stopped', 'message.im']),
    );
    for (const e of ASSISTANT_VIEW_EVENTS) expect(events).not.toContain(e);
  });
});
