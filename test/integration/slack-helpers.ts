import { createServer, type IncomingMessage as HttpReq, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SlackConfig } from '../../src/config/config.js';
import type { HandleResult, IncomingMessage, MessageHandler, Place } from '../../src/core/ports.js';
import {
  createSlackConnector,
  type SlackConnector,
  type SlackConnectorOptions,
} from '../../src/connectors/slack/connector.js';
import { silentLogger } from '../../src/logger.js';
import { type FakeSlack, type FakeSlackOptions, startFakeSlack } from '../fakes/slack/index.js';
import { assertNoSlackPings } from '../fakes/slack/mention-check.js';

// Shared by the Slack integration tests: config for the fake, a tiny HTTP server with the
// `mount` of src/server, and a stand-in relay that streams a reply through the sink.

export function slackConfig(fake: FakeSlack, over: Partial<SlackConfig> = {}): SlackConfig {
  return {
    botToken: fake.botToken,
    oauth: undefined,
    appToken: fake.appToken,
    signingSecret: fake.signingSecret,
    apiUrl: fake.apiUrl,
    streaming: 'edit',
    allowedTeams: [],
    allowedChannels: [],
    ...over,
  };
}

export interface MiniServer {
  url: string;
  mount(prefix: string, l: (req: HttpReq, res: ServerResponse) => void | Promise<void>): void;
  close(): Promise<void>;
}

export async function startMiniServer(): Promise<MiniServer> {
  const mounts: { prefix: string; l: (req: HttpReq, res: ServerResponse) => void | Promise<void> }[] = [];
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    const m = mounts.find((x) => path === x.prefix || path.startsWith(`${x.prefix}/`));
    if (m) void m.l(req, res);
    else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    mount: (prefix, l) => mounts.push({ prefix, l }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A stand-in relay: answers `You said: <text>` in pieces, post then edits, like the pump. */
export class EchoHandler implements MessageHandler {
  readonly received: IncomingMessage[] = [];
  readonly resets: Place[] = [];
  private readonly seen = new Set<string>();
  private waiters: { n: number; resolve: () => void }[] = [];
  done = 0;

  constructor(private readonly reply: (text: string) => string = (t) => `You said: ${t}`) {}

  async handle(msg: IncomingMessage): Promise<HandleResult> {
    if (this.seen.has(msg.eventId)) return { status: 'duplicate' };
    this.seen.add(msg.eventId);
    this.received.push(msg);
    const full = this.reply(msg.text);
    const pieces = Math.max(1, Math.ceil(full.length / 8));
    const { sink } = msg;
    await sink.showWorking();
    let id: string | undefined;
    for (let i = 1; i <= pieces; i += 1) {
      const text = full.slice(0, Math.ceil((full.length * i) / pieces));
      const final = i === pieces;
      if (id === undefined) {
        await sink.clearWorking();
        id = (await sink.post(text, { final, part: 0 })).messageId;
      } else await sink.edit(id, text, { final, part: 0 });
    }
    this.done += 1;
    for (const w of this.waiters.filter((x) => this.done >= x.n)) w.resolve();
    this.waiters = this.waiters.filter((x) => this.done < x.n);
    return { status: 'answered' };
  }

  async reset(place: Place): Promise<void> {
    this.resets.push(place);
  }

  /** Resolves when `n` replies are complete. */
  answered(n: number): Promise<void> {
    if (this.done >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }
}

export function connectorFor(fake: FakeSlack, over: Partial<SlackConnectorOptions> = {}): SlackConnector {
  return createSlackConnector({ config: slackConfig(fake), logger: silentLogger, ...over });
}

/** A connector in HTTP mode (Events API at `eventsUrl` on a MiniServer) against the fake, answered by `relay`. */
export interface HttpConnector {
  fake: FakeSlack;
  server: MiniServer;
  conn: SlackConnector;
  relay: EchoHandler;
  eventsUrl: string;
  /** Stops all of it, then checks that no write of the bot's pinged anyone. */
  close(): Promise<void>;
}

export async function startHttpConnector(fakeOptions?: FakeSlackOptions): Promise<HttpConnector> {
  const fake = await startFakeSlack(fakeOptions);
  const server = await startMiniServer();
  const conn = connectorFor(fake, { config: slackConfig(fake, { appToken: undefined }), http: server });
  const relay = new EchoHandler();
  await conn.start(relay);
  return {
    fake,
    server,
    conn,
    relay,
    eventsUrl: `${server.url}/slack/events`,
    async close() {
      await conn.shutdown();
      await server.close();
      await fake.close();
      assertNoSlackPings(fake.calls);
    },
  };
}
