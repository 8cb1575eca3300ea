import { expect, it } from 'vitest';
import { ANN, replyEnded, stackPerTest } from './discord/stack.js';

// Forwarded Discord messages (message_snapshots): real discord.js receives a MESSAGE_CREATE whose
// own content is empty and whose snapshot holds the forwarded text and files; the bridge reads
// the snapshot, marks it as forwarded, and answers.

const start = stackPerTest();

it('a forward in a DM is answered from its snapshot: marked in the text and metadata, files included', async () => {
  const s = await start();
  const { fake } = s;
  const dm = s.dm({
    content: '',
    forwarded: {
      content: 'Can someone check the deploy?\nIt failed twice.',
      attachments: [{ name: 'deploy.log', contentType: 'text/plain', content: 'error: exit 1\n' }],
    },
  });
  const reply = await fake.waitUntil(() =>
    fake.botMessages(dm).find((m) => m.content.startsWith('You said:') && replyEnded(m)),
  );
  expect(reply.content).toContain('[forwarded message]');
  const [req, ...more] = s.chatRequests();
  expect(more).toHaveLength(0);
  expect(req?.message).toContain('[forwarded message]\n> Can someone check the deploy?\n> It failed twice.');
  expect(req?.message).toContain('File: deploy.log');
  expect(req?.message).toContain('error: exit 1');
  expect((req?.metadata as { forwarded?: boolean }).forwarded).toBe(true);
});

it('a forward in a channel is answered when the forwarding message mentions the bot, else ignored', async () => {
  const s = await start();
  const { fake, channelId } = s;
  fake.dispatchMessage({ channelId, authorId: ANN, content: '', forwarded: { content: 'not for the bot' } });
  // The forwarding message mentions the bot and has no text of its own.
  const { threadId } = s.ask('', { content: '', forwarded: { content: 'what does this mean?' } });
  const reply = await fake.waitUntil(() =>
    fake.botMessages(threadId).find((m) => m.content.startsWith('You said:') && replyEnded(m)),
  );
  expect(reply.content).toContain('what does this mean?');
  const reqs = s.chatRequests();
  expect(reqs.map((r) => r.message)).toEqual(['[forwarded message]\n> what does this mean?']);
});

it('a forward whose snapshot holds only an embed or components is read, not dropped', async () => {
  const s = await start();
  const { fake } = s;
  const dm = s.dm({
    content: '',
    forwarded: {
      content: '',
      embeds: [
        {
          type: 'rich',
          author: { name: 'Status bot' },
          title: 'Deploy failed',
          description: 'The api service did not start.',
          fields: [{ name: 'Region', value: 'eu-west', inline: true }],
          footer: { text: 'build 42' },
        },
      ],
    },
  });
  await fake.waitUntil(() => fake.botMessages(dm).find((m) => m.content.startsWith('You said:')));
  fake.dispatchMessage({
    channelId: dm,
    authorId: ANN,
    content: '',
    forwarded: {
      content: '',
      components: [
        {
          type: 1,
          components: [
            { type: 2, style: 1, label: 'Approve', custom_id: 'a' },
            { type: 2, style: 4, label: 'Reject', custom_id: 'r' },
          ],
        },
        {
          type: 1,
          components: [
            {
              type: 3,
              custom_id: 'env',
              placeholder: 'Pick an environment',
              options: [
                { label: 'staging', value: 's' },
                { label: 'production', value: 'p' },
              ],
            },
          ],
        },
      ],
    },
  });
  await fake.waitUntil(() =>
    fake.botMessages(dm).filter((m) => m.content.startsWith('You said:')).length === 2 ? true : undefined,
  );
  expect(s.chatRequests().map((r) => r.message)).toEqual([
    [
      '[forwarded message]',
      '> Status bot',
      '> Deploy failed',
      '> The api service did not start.',
      '> Region: eu-west',
      '> build 42',
    ].join('\n'),
    ['[forwarded message]', '> Approve', '> Reject', '> Pick an environment', '> staging', '> production'].join('\n'),
  ]);
});
