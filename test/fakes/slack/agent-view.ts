import type { FakeMessage, FakePrompts, FakeState } from './state.js';

// Slack's Agent messaging experience in the fake: the events an agent_view app receives (Slack's
// migration guide: app_home_opened with tab "messages" replaces assistant_thread_started;
// app_context_changed says what the user views) and what a user sees of the status and prompts.

export interface FakeAgentView {
  /** `app_home_opened` as Slack sends it when `user` (default U0USER) opens a tab of the app. */
  homeOpened(p: { channel: string; user?: string; tab?: 'messages' | 'home' | 'about' }): Record<string, unknown>;
  /**
   * `app_context_changed`: the user now views `channelId` (none: an empty context). `shape`
   * `sample` is Slack's reference sample (no user or channel: the authorization names the user).
   */
  contextChanged(p: {
    channelId?: string;
    user?: string;
    channel?: string;
    shape?: 'typed' | 'sample';
  }): Record<string, unknown>;
  /** An `app_context` as folded into a DM message event (`userPost`'s `appContext`). */
  appContext(channelId: string): Record<string, unknown>;
  /** The suggested prompts a user sees in a channel: the last set (undefined: none). */
  prompts(channel: string): FakePrompts | undefined;
  /**
   * The bot's messages of a DM wherever they are, in order: at the top or in the thread a
   * top-level message opens (the agent experience answers every DM in a thread).
   */
  replies(channel: string): FakeMessage[];
  /** assistant.threads.setTitle calls of a thread, in order (the last is the title shown). */
  titles(channel: string, threadTs: string): string[];
  /** assistant.threads.setStatus calls of a thread, in order. */
  statuses(channel: string, threadTs: string): { status: string; loading?: string[] }[];
}

export function fakeAgentView(state: FakeState, teamId: string): FakeAgentView {
  const entity = (channelId: string) => ({ type: 'slack#/types/channel_id', value: channelId, team_id: teamId });
  return {
    homeOpened: (p) => ({
      type: 'app_home_opened',
      user: p.user ?? 'U0USER',
      channel: p.channel,
      tab: p.tab ?? 'messages',
      event_ts: state.nextTs(),
    }),
    contextChanged: (p) => {
      const context = p.channelId !== undefined ? { entities: [entity(p.channelId)] } : {};
      if (p.shape === 'sample') return { type: 'app_context_changed', context };
      return {
        type: 'app_context_changed',
        user: p.user ?? 'U0USER',
        channel: p.channel ?? 'D1',
        context,
        event_ts: state.nextTs(),
      };
    },
    appContext: (channelId) => ({ entities: [entity(channelId)] }),
    prompts: (channel) => state.prompts.filter((p) => p.channel === channel).at(-1),
    replies: (channel) => state.list(channel).filter((m) => m.botId !== undefined && m.subtype === undefined),
    titles: (channel, threadTs) => [...(state.threadTitles.get(`${channel}:${threadTs}`) ?? [])],
    statuses: (channel, threadTs) => [...(state.threadStatuses.get(`${channel}:${threadTs}`) ?? [])],
  };
}
