import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { LogLines } from '../support/log-lines.js';
import { type SlackStack, startSlackStack } from './slack-stack.js';

// "The token stays home": a signed event may name any URL as a file's url_private. The bot token
// goes only to Slack's file host over https (in tests, the origin of SLACK_API_URL: the fake
// Slack); a file anywhere else (another port, another host name, plain http) is not fetched at
// all, is named in the notice, and is logged once. The foreign host is a loopback server that
// records every request and the Authorization header it carried.

let s: SlackStack | undefined;
let foreign: Server | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
  foreign?.closeAllConnections();
  await new Promise<void>((r) => (foreign ? foreign.close(() => r()) : r()));
  foreign = undefined;
});

async function recordingHost(): Promise<{ url: string; seen: { path: string; authorization?: string }[] }> {
  const seen: { path: string; authorization?: string }[] = [];
  foreign = createServer((req, res) => {
    seen.push({
      path: req.url ?? '',
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
    });
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('attacker text that must not reach the upstream');
  });
  await new Promise<void>((r) => foreign?.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`, seen };
}

it('files on another port, another host name or plain http get no token and no request; the real file is read', async () => {
  const logs = new LogLines('info');
  s = await startSlackStack({ logger: logs.logger });
  const { fake } = s;
  const evil = await recordingHost();
  const post = fake.userPost({
    channel: 'D7',
    text: 'read these',
    files: [
      { name: 'real.txt', content: 'the real file' },
      { name: 'port.txt', content: 'x' },
      { name: 'host.txt', content: 'y' },
      { name: 'plain.txt', content: 'z' },
    ],
  });
  const files = post.message.files as Record<string, unknown>[];
  const fakeOrigin = new URL(fake.apiUrl).origin;
  const retarget = (f: Record<string, unknown> | undefined, url: string) => {
    if (f === undefined) throw new Error('no file');
    f.url_private = url;
    f.url_private_download = url;
  };
  // Another port on the same loopback address: a different origin.
  retarget(files[1], `${evil.url}/files-pri/T0FAKE-F2/port.txt`);
  // The fake's port under another host name.
  retarget(files[2], `${fakeOrigin.replace('127.0.0.1', 'localhost')}/files-pri/T0FAKE-F3/host.txt`);
  // Slack's file host, but plain http.
  retarget(files[3], 'http://files.slack.com/files-pri/T0FAKE-F4/plain.txt');

  await fake.sendEvent(post.message);
  await s.settled(1);
  expect(s.results[0]?.status).toBe('answered');

  // Who received the token: only the fake Slack, for the one file it hosts.
  expect(evil.seen).toEqual([]);
  expect(fake.fileDownloads.map((d) => [d.path.split('/').pop(), d.authorization])).toEqual([
    ['real.txt', `Bearer ${fake.botToken}`],
  ]);

  // What the upstream got: the real file's text, the others named as not read.
  const [req] = s.chatRequests();
  expect(req?.message).toContain('the real file');
  expect(req?.message).not.toContain('attacker text');
  for (const name of ['port.txt', 'host.txt', 'plain.txt']) {
    expect(req?.message).toContain(`[attached: ${name} (text/plain, 1 B); not read: not on the platform file host]`);
  }

  // What the user sees: the usual notice names the three files.
  expect(fake.agent.replies('D7')[0]?.text).toBe(
    '3 files were not passed to the assistant: port.txt (not on the platform file host), ' +
      'host.txt (not on the platform file host), plain.txt (not on the platform file host).',
  );

  // Logged once per file, with the origin only.
  const lines = logs.find("attachment not on the platform's file host: not fetched, no token sent");
  expect(lines.map((l) => [l.file, l.origin])).toEqual([
    ['port.txt', evil.url],
    ['host.txt', fakeOrigin.replace('127.0.0.1', 'localhost')],
    ['plain.txt', 'http://files.slack.com'],
  ]);
  expect(JSON.stringify(logs.lines)).not.toContain(fake.botToken);
});
