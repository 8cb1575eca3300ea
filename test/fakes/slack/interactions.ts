import type { FakeState } from './state.js';

// What Slack sends when a user clicks a control of a bot's message (a block_actions payload).

/** A user clicks a button (or a feedback button) of a message of the bot's. */
export interface Click {
  actionId: string;
  value: string;
  /** Default U0USER. */
  user?: string;
  channel: string;
  /** The message carrying the button. */
  messageTs: string;
  /** The message's thread, if it is in one. */
  threadTs?: string;
  /** `button` (default) or `feedback_buttons`. */
  elementType?: string;
  teamId?: string;
}

/** The block_actions payload of a click, as Slack sends it over Socket Mode or HTTP. */
export function blockActionsPayload(
  click: Click,
  state: FakeState,
  base: string,
  defaultTeam: string,
): Record<string, unknown> {
  const team = click.teamId ?? defaultTeam;
  const message = state.get(click.channel, click.messageTs);
  return {
    type: 'block_actions',
    team: { id: team, domain: 'fake' },
    user: { id: click.user ?? 'U0USER', username: 'user', team_id: team },
    api_app_id: 'A0FAKE',
    token: 'legacy-verification-token',
    trigger_id: `trig.${state.nextTs()}`,
    response_url: `${base}/actions/response`,
    container: {
      type: 'message',
      message_ts: click.messageTs,
      channel_id: click.channel,
      is_ephemeral: false,
      ...(click.threadTs !== undefined ? { thread_ts: click.threadTs } : {}),
    },
    channel: { id: click.channel, name: 'channel' },
    message: {
      type: 'message',
      ts: click.messageTs,
      text: message?.text ?? '',
      ...(click.threadTs !== undefined ? { thread_ts: click.threadTs } : {}),
      ...(message?.blocks !== undefined ? { blocks: message.blocks } : {}),
    },
    actions: [
      {
        type: click.elementType ?? 'button',
        action_id: click.actionId,
        block_id: 'b1',
        value: click.value,
        action_ts: String(Date.now() / 1000),
      },
    ],
    is_enterprise_install: false,
    enterprise: null,
  };
}
