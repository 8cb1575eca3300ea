import type { ApiCall } from './web-api.js';

// The one check the Slack e2e suites run over every write the bot made: nothing it sent may be
// something Slack turns into a ping. Slack reads `<!channel>`, `<!here>`, `<!everyone>`,
// `<!subteam^…>`, `<@U…>` and `<#C…>` as control sequences in text and mrkdwn blocks, and
// `@channel` / `@here` / `@everyone` (any case) are broadcast words. The bridge never pings on
// purpose, so a message write (every chat.* call) may hold none of them, whichever field carries
// the text (text, markdown_text, chunks, blocks). Written apart from the renderer's own
// `hasControlSequence`, so that a test does not agree with the code by construction.
// (assistant.threads.setTitle is left out: it shows the user's own words as a plain-text title.)

const CONTROL = /<[!@#]/;
const BROADCAST = /@(?:channel|here|everyone)\b/i;
/** Block Kit rich-text elements that ping by themselves. */
const PINGING_ELEMENT = /\\?"type\\?":\s*\\?"(?:user|usergroup|broadcast)\\?"/;

/** What in a call could ping someone ('' when nothing). */
export function pingIn(call: ApiCall): string {
  const { channel: _c, ts: _t, thread_ts: _tt, user: _u, recipient_user_id: _r, ...rest } = call.args;
  const sent = JSON.stringify(rest);
  for (const re of [CONTROL, BROADCAST, PINGING_ELEMENT]) {
    const m = re.exec(sent);
    if (m) return sent.slice(Math.max(0, m.index - 30), m.index + 40);
  }
  return '';
}

/** The bot's message writes among the calls: chat.postMessage, update, the stream methods, postEphemeral. */
export function slackWrites(calls: readonly ApiCall[]): ApiCall[] {
  return calls.filter((c) => c.method.startsWith('chat.'));
}

/** One line per write that could ping someone; empty when none could. */
export function slackPingProblems(calls: readonly ApiCall[]): string[] {
  return slackWrites(calls).flatMap((c) => {
    const found = pingIn(c);
    return found === '' ? [] : [`${c.method} (${c.result}): …${found}…`];
  });
}

/** Throws, naming the writes, when any write of the bot could ping: the suites' shared teardown check. */
export function assertNoSlackPings(calls: readonly ApiCall[]): void {
  const problems = slackPingProblems(calls);
  if (problems.length > 0) throw new Error(`bot writes that could ping someone on Slack:\n${problems.join('\n')}`);
}
