import { Assistant } from '@slack/bolt';
import { type Logger, scrubSecrets } from '../../logger.js';
import { eventTeams, type SlackMessageEvent } from './events.js';
import type { IntakeArgs } from './intake.js';
import { GREETING, SUGGESTED_PROMPTS, type Viewing } from './agent-home.js';

// Slack's assistant threads (the AI app side panel): a greeting and suggested prompts when a
// thread starts; each user message goes through the same intake as DMs, marked as assistant
// so the working indicator is the thread status and the reply streams natively.

export { GREETING, SUGGESTED_PROMPTS } from './agent-home.js';

const TITLE_MAX = 80;
const TITLED_MAX = 10_000;

export interface AssistantDeps {
  logger: Logger;
  intake(args: IntakeArgs): void;
  /** What each user views: the assistant thread's context (the channel beside it) goes there. */
  viewing?: Viewing;
}

/** The fields of assistant_thread_started / _context_changed read here. */
interface AssistantThreadPayload {
  assistant_thread?: { user_id?: string; context?: { channel_id?: string; team_id?: string } };
}

export function createAssistant(deps: AssistantDeps): Assistant {
  // Threads titled by this process: the title comes from a thread's first message.
  const titled = new Set<string>();
  const quietly = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (err) {
      deps.logger.warn({ err: scrubSecrets(String(err)), what }, 'assistant call failed');
    }
  };
  // Kept in memory like app_context_changed's (agent-home.ts), instead of Bolt's default store,
  // which writes the context into the bot's first message of the thread with more API calls.
  const noteContext = (payload: unknown, team: string | undefined) => {
    const t = (payload as AssistantThreadPayload).assistant_thread;
    const channel = t?.context?.channel_id;
    if (deps.viewing === undefined || t?.user_id === undefined || channel === undefined) return;
    const workspace = t.context?.team_id !== undefined ? { workspaceId: t.context.team_id } : {};
    deps.viewing.note(team ?? '', t.user_id, [{ kind: 'channel', id: channel, ...workspace }]);
  };
  return new Assistant({
    threadContextChanged: ({ payload, context }) => {
      noteContext(payload, context.teamId);
      return Promise.resolve();
    },
    threadStarted: async ({ say, setSuggestedPrompts, payload, context }) => {
      noteContext(payload, context.teamId);
      await quietly('greeting', () => say(GREETING));
      await quietly('suggested prompts', () => setSuggestedPrompts({ prompts: SUGGESTED_PROMPTS }));
    },
    userMessage: async ({ message, client, context, body, setTitle }) => {
      const ev = message as unknown as SlackMessageEvent;
      const key = `${ev.channel}:${ev.thread_ts}`;
      deps.intake({
        event: ev,
        client,
        teams: eventTeams(body, ev, context),
        bot: { userId: context.botUserId ?? '', botId: context.botId },
        assistant: {
          onFirstMessage: async (text) => {
            if (titled.has(key) || text === '') return;
            if (titled.size >= TITLED_MAX) titled.clear();
            titled.add(key);
            await quietly('setTitle', () => setTitle(text.slice(0, TITLE_MAX)));
          },
        },
      });
    },
  });
}
