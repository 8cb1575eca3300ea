import { expect, it } from 'vitest';
import { stackPerTest } from './discord/stack.js';

// Files on Discord messages, end to end: real discord.js receives MESSAGE_CREATE with
// attachments, the connector downloads them from the fake's CDN, the relay composes the upstream
// message, the emulator records what it got.

const start = stackPerTest();

const PY = 'def add(a, b):\n    return a + b\n';
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

it('an image, a .py and a too-large file: the text goes in the message, the image in metadata, a notice names the skipped file', async () => {
  const s = await start({ attachmentMaxBytes: 1000 });
  const { fake } = s;
  const { threadId } = s.ask('what do you make of these?', {
    attachments: [
      { name: 'photo.png', contentType: 'image/png', content: PNG, size: 120_000 },
      { name: 'calc.py', content: PY },
      { name: 'big.log', contentType: 'text/plain; charset=utf-8', content: 'x'.repeat(5000) },
    ],
  });
  const reply = await fake.waitUntil(() =>
    fake.botMessages(threadId).find((m) => m.content.startsWith('You said: what do you make of these?')),
  );
  const shown = fake.botMessages(threadId).map((m) => m.content);
  expect(shown[0]).toBe('One file was not passed to the assistant: big.log (too large).');
  expect(shown.at(-1)).toBe(reply.content);

  const [req, ...more] = s.chatRequests();
  expect(more).toHaveLength(0);
  expect(req?.message).toBe(
    'what do you make of these?\n\n' +
      `File: calc.py\n\`\`\`py\n${PY}\`\`\`\n\n` +
      '[attached: photo.png (image/png, 120 kB)]\n' +
      '[attached: big.log (text/plain; charset=utf-8, 5 kB); not read: too large]',
  );
  // Discord's CDN URL needs no secret: the upstream may fetch the image itself.
  const attachments = (req?.metadata as { attachments?: { url?: string }[] }).attachments;
  expect(attachments).toEqual([{ name: 'photo.png', type: 'image/png', size: 120_000, url: expect.any(String) }]);
  expect(attachments?.[0]?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/attachments\/.+\/photo\.png\?ex=/);
  // Only the text file was fetched, and never with the bot token.
  expect(fake.cdnDownloads.map((d) => d.path.split('?')[0]?.split('/').pop())).toEqual(['calc.py']);
  expect(fake.cdnDownloads.every((d) => d.authorization === undefined)).toBe(true);
  expect(JSON.stringify(s.emu.requests)).not.toContain(fake.token);
});

it('a message with a file and no text is answered (a DM)', async () => {
  const s = await start();
  const { fake } = s;
  const dm = s.dm({ content: '', attachments: [{ name: 'todo.md', content: '- one\n' }] });
  await fake.waitUntil(() => fake.botMessages(dm).find((m) => m.content.startsWith('You said: File: todo.md')));
  expect(s.chatRequests()[0]?.message).toBe('File: todo.md\n```md\n- one\n```');
});

it('a failed download is named in the notice and the rest of the message still goes upstream', async () => {
  const s = await start();
  const { fake } = s;
  // Declares more bytes than the CDN serves: not the file it claims to be.
  const dm = s.dm({
    content: 'summarise',
    attachments: [{ name: 'notes.txt', contentType: 'text/plain', content: 'short', size: 50 }],
  });
  await fake.waitUntil(() => fake.botMessages(dm).find((m) => m.content.startsWith('You said: summarise')));
  expect(fake.botMessages(dm)[0]?.content).toBe(
    'One file was not passed to the assistant: notes.txt (download failed).',
  );
  expect(s.chatRequests()[0]?.message).toBe(
    'summarise\n\n[attached: notes.txt (text/plain, 50 B); not read: download failed]',
  );
});
