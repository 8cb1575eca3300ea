import { REST, Routes } from 'discord.js';
import { afterEach, expect, it } from 'vitest';
import type { WriteOptions } from '../../src/core/ports.js';
import { InteractionReplySink } from '../../src/connectors/discord/interaction-sink.js';
import { ChannelReplySink } from '../../src/connectors/discord/reply-sink.js';
import { silentLogger } from '../../src/logger.js';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { discordRefusals as R } from '../fakes/discord/refusals.js';
import type { WriteRecord } from '../fakes/discord/state.js';
import { textWrites } from '../fakes/discord/writes.js';

// Every Discord write carries `allowed_mentions: {parse: []}`, the paths no ordinary reply takes
// included: the overflow posts of a refused form's plain fallback (a final write longer than a
// message, sent plainly: its parts beyond the first are posted after it), on a channel reply and
// on an interaction reply, creates and edits, and the notices. The fake Discord records every
// body; each write that carries text is checked, and the test first shows each path was taken.
// (issue 39: removing allowed_mentions from postOverflow left the Discord suites green.)

let fake: FakeDiscord | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const PINGS = '@everyone @here <@123456789012345678> <@&987654321098765432>';
/** A final text of three messages' worth, mentions all along. */
const LONG = Array.from({ length: 90 }, (_, i) => `${PINGS} line ${i}.`).join('\n');

const streaming: WriteOptions = { final: false, part: 0, replyKey: 'reply-1' };
const last: WriteOptions = { final: true, part: 0, replyKey: 'reply-1', last: true, feedback: true };

/** Runs `write`; a refused form throws once (PLAIN_FALLBACK, sent again at once plainly): run it again. */
async function throughRefusal<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!/refused the write's form/.test(String(err))) throw err;
    return write();
  }
}

async function world() {
  // A generous per-channel budget: this test is about bodies, not pacing.
  fake = await startFakeDiscord({ refuse: R.components(), chaos: false, rateLimit: { limit: 100, windowMs: 5000 } });
  const rest = new REST({ api: fake.apiUrl }).setToken(fake.token);
  const guild = fake.addGuild('g');
  const channelId = fake.addChannel(guild, 'general');
  return { fake, rest, channelId };
}

function expectNobodyPinged(writes: readonly WriteRecord[]) {
  for (const w of writes)
    expect(w.allowed_mentions, `${w.method} ${w.path.replace(/itok-\w+/, '…')}`).toEqual({ parse: [] });
}

it('a channel reply: plain overflow posts after a create and after an edit, and a public notice', async () => {
  const { fake, rest, channelId } = await world();
  const place = { platform: 'discord' as const, channelId };

  // Create, final, too long for one message, with buttons refused: plain, its overflow posted.
  const a = new ChannelReplySink({ rest, logger: silentLogger, place });
  await throughRefusal(() => a.post(LONG, last));
  // Edit: a short streaming create (refused, then plain), then the long final edit.
  const b = new ChannelReplySink({ rest, logger: silentLogger, place });
  const first = await throughRefusal(() => b.post('starting', streaming));
  await b.edit(first.messageId, LONG, last);
  await b.refusal.send(`slow down ${PINGS}`);

  const writes = textWrites(fake.record).filter((w) => w.status < 300);
  const creates = writes.filter((w) => w.method === 'POST');
  // Both overflows were posted (each final text took three messages) and the notice went out.
  expect(creates.length).toBeGreaterThanOrEqual(2 + 2 + 2 + 1);
  expect(writes.some((w) => w.method === 'PATCH' && (w.content ?? '').includes('line 0.'))).toBe(true);
  expect(creates.filter((w) => (w.content ?? '').includes('line 89.'))).toHaveLength(2);
  expect(writes.every((w) => (w.content ?? '').length <= 2000)).toBe(true);
  expectNobodyPinged(textWrites(fake.record));
});

it('an interaction reply: plain overflow follow-ups after the original and after an edit, and an ephemeral notice', async () => {
  const { fake, rest, channelId } = await world();
  const place = { platform: 'discord' as const, channelId };
  const sinkFor = async () => {
    // A slash command Discord delivered (no gateway client here: registered as the fake would).
    const id = fake.state.nextId();
    const token = `itok-${id}`;
    fake.state.interactions.set(id, { id, token, channelId, userId: '200000000000000001' });
    await rest.post(Routes.interactionCallback(id, token), { body: { type: 5 }, auth: false });
    return new InteractionReplySink(rest, place, {
      kind: 'interaction',
      applicationId: fake.applicationId,
      interactionId: id,
      token,
    });
  };

  const a = await sinkFor();
  await throughRefusal(() => a.post(LONG, last));
  const b = await sinkFor();
  const first = await throughRefusal(() => b.post('starting', streaming));
  await b.edit(first.messageId, LONG, last);
  const c = await sinkFor();
  await c.refusal.send(`slow down ${PINGS}`);

  const writes = textWrites(fake.record).filter((w) => w.status < 300);
  const followUps = writes.filter((w) => w.method === 'POST' && /^\/webhooks\//.test(w.path));
  // Two overflow follow-ups for each long final, and the ephemeral notice.
  expect(followUps.length).toBeGreaterThanOrEqual(2 + 2 + 1);
  expect(followUps.filter((w) => (w.content ?? '').includes('line 89.'))).toHaveLength(2);
  expectNobodyPinged(textWrites(fake.record));
});
