import { afterEach, expect, it } from 'vitest';
import { LOGIN_PAGE } from '../fakes/slack/index.js';
import { type SlackStack, startSlackStack } from './slack-stack.js';

// Files on Slack messages, end to end: the real Bolt connector downloads them from the fake
// Slack's url_private with the bot token, the relay composes the upstream message, the emulator
// records what it got.

let s: SlackStack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const PY = 'def add(a, b):\n    return a + b\n';
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);

it('an image, a .py and a too-large file: the text goes in the message, the image in metadata, a notice names the skipped file', async () => {
  s = await startSlackStack({ attachmentMaxBytes: 1000 });
  const { fake } = s;
  const post = fake.userPost({
    channel: 'D1',
    text: 'what do you make of these?',
    files: [
      { name: 'photo.png', mimetype: 'image/png', content: PNG, size: 120_000 },
      { name: 'calc.py', mimetype: 'text/x-python', content: PY },
      { name: 'big.log', mimetype: 'text/plain', content: 'x'.repeat(5000) },
    ],
  });
  await fake.sendEvent(post.message);
  await s.settled(1);
  expect(s.results[0]?.status).toBe('answered');

  const [req, ...more] = s.chatRequests();
  expect(more).toHaveLength(0);
  expect(req?.message).toBe(
    'what do you make of these?\n\n' +
      `File: calc.py\n\`\`\`py\n${PY}\`\`\`\n\n` +
      '[attached: photo.png (image/png, 120 kB)]\n' +
      '[attached: big.log (text/plain, 5 kB); not read: too large]',
  );
  // Slack's url_private needs the token: the upstream gets no URL for it.
  expect((req?.metadata as { attachments?: unknown }).attachments).toEqual([
    { name: 'photo.png', type: 'image/png', size: 120_000 },
  ]);
  // Only the text file was fetched (the image is described, the large one refused by its size),
  // with the token in the header and not in the URL.
  expect(fake.fileDownloads.map((d) => [d.path.split('/').pop(), d.authorized])).toEqual([['calc.py', true]]);
  expect(fake.fileDownloads[0]?.authorization).toBe(`Bearer ${fake.botToken}`);
  expect(fake.fileDownloads[0]?.path).not.toContain(fake.botToken);

  const shown = fake.agent.replies('D1').map((m) => m.text);
  expect(shown).toHaveLength(2);
  expect(shown[0]).toBe('One file was not passed to the assistant: big.log (too large).');
  expect(shown[1]).toContain('You said: what do you make of these?');
  expect(JSON.stringify(s.emu.requests)).not.toContain(fake.botToken);
});

it('a download answered by the login page (token refused) is a failed file, never its text', async () => {
  s = await startSlackStack();
  const { fake } = s;
  fake.refuseFileToken(true);
  const post = fake.userPost({
    channel: 'D2',
    text: '',
    files: [{ name: 'notes.txt', content: 'secret plans' }],
  });
  await fake.sendEvent(post.message);
  await s.settled(1);
  // A message of files only is still answered.
  expect(s.results[0]?.status).toBe('answered');
  const [req] = s.chatRequests();
  expect(req?.message).toBe('[attached: notes.txt (text/plain, 12 B); not read: download failed]');
  expect(JSON.stringify(s.emu.requests)).not.toContain('Sign in');
  expect(JSON.stringify(s.emu.requests)).not.toContain(LOGIN_PAGE);
  expect(JSON.stringify(s.emu.requests)).not.toContain(fake.botToken);
  expect(fake.fileDownloads).toHaveLength(1);
  expect(fake.fileDownloads[0]?.authorized).toBe(false);
  expect(fake.agent.replies('D2')[0]?.text).toBe(
    'One file was not passed to the assistant: notes.txt (download failed).',
  );
});

it('a file bigger than it says is cut off at ATTACHMENT_MAX_BYTES and counted too large', async () => {
  s = await startSlackStack({ attachmentMaxBytes: 1000 });
  const { fake } = s;
  const post = fake.userPost({
    channel: 'D3',
    text: 'read this',
    files: [{ name: 'liar.txt', content: 'y'.repeat(50_000), size: 900 }],
  });
  await fake.sendEvent(post.message);
  await s.settled(1);
  const [req] = s.chatRequests();
  expect(req?.message).toBe('read this\n\n[attached: liar.txt (text/plain, 900 B); not read: too large]');
  expect(fake.agent.replies('D3')[0]?.text).toBe('One file was not passed to the assistant: liar.txt (too large).');
});
