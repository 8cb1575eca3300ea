import type { RelaySettings } from '../../src/core/relay.js';

/**
 * Relay settings for tests: the emulator's bot, no routes or allowlists, limits out of the way.
 * A test overrides what it is about.
 */
export const testRelaySettings = (over: Partial<RelaySettings> = {}): RelaySettings => ({
  defaultBotId: 'demo-bot',
  routes: [],
  streaming: true,
  sessionIdleSeconds: 86_400,
  userMessagesPerMinute: 100_000,
  maxConcurrentReplies: 64,
  streamEditIntervalMs: 100,
  allow: { slack: { workspaces: [], channels: [] }, discord: { workspaces: [], channels: [] } },
  ...over,
});
