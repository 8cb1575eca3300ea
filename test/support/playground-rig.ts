import { type IncomingMessage, request } from 'node:http';

// The playground's side of a path measurement: one browser driving the bridge's own web chat
// over HTTP exactly as its page does (src/connectors/playground/page-script.ts): it loads `/` (its
// id cookie and the page token), opens a conversation (its event stream, then its history), and
// sends with the page's headers (Host, Origin, JSON, X-Playground-Token, the cookie). A reply is
// read from the event stream, write by write, as the page shows it.

interface Answer {
  status: number;
  body: string;
  cookies: string[];
}

interface View {
  id: string;
  text: string;
  state: string;
}

export interface PlaygroundHandle {
  conversation: string;
}

export interface PlaygroundRig {
  /** Loads the page: the browser's id cookie and its page token. */
  load(port: number): Promise<void>;
  /** Opens conversation `i` as the page does: its event stream, then its history. */
  open(i: number): Promise<void>;
  /** Types a message in conversation `i`. */
  send(i: number, tag: string, text: string): Promise<PlaygroundHandle>;
  /** The conversation's reply, as the page shows it, ended and equal to `expected`. */
  exact(h: PlaygroundHandle, expected: string): boolean;
  close(): Promise<void>;
}

export function playgroundRig(): PlaygroundRig {
  let port = 0;
  let host = '';
  let cookie = '';
  let token = '';
  const streams = new Map<string, IncomingMessage>();
  const replies = new Map<string, Map<string, View>>();
  const conversationOf = (i: number) => `bench-${i}`;

  const call = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    new Promise<Answer>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method, path, headers: { host, ...headers } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: text, cookies: [res.headers['set-cookie'] ?? []].flat() }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });

  /** What the page's `api()` sends: JSON, the page token, the cookie; a write adds its Origin. */
  const api = async (path: string, body?: unknown): Promise<unknown> => {
    const headers: Record<string, string> = { accept: 'application/json', cookie, 'x-playground-token': token };
    if (body !== undefined) Object.assign(headers, { 'content-type': 'application/json', origin: `http://${host}` });
    const a = await call(body === undefined ? 'GET' : 'POST', `/playground/${path}`, headers, JSON.stringify(body));
    if (a.status < 200 || a.status >= 300) throw new Error(`playground ${path}: ${a.status} ${a.body}`);
    return JSON.parse(a.body) as unknown;
  };

  return {
    async load(p) {
      port = p;
      host = `127.0.0.1:${p}`;
      const page = await call('GET', '/', { accept: 'text/html' });
      const uid = page.cookies.map((c) => /^playground_uid=([^;]+)/.exec(c)?.[1]).find((v) => v !== undefined);
      const t = /<meta name="playground-token" content="([^"]+)">/.exec(page.body)?.[1];
      if (page.status !== 200 || uid === undefined || t === undefined)
        throw new Error(`playground page: ${page.status}`);
      cookie = `playground_uid=${uid}`;
      token = t;
    },

    async open(i) {
      const conversation = conversationOf(i);
      const views = new Map<string, View>();
      replies.set(conversation, views);
      // The page's EventSource: cookies, the token in the query (it can send no header).
      const query = `conversation=${encodeURIComponent(conversation)}&page_token=${encodeURIComponent(token)}`;
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = request({
          host: '127.0.0.1',
          port,
          path: `/playground/events?${query}`,
          headers: { host, cookie, accept: 'text/event-stream' },
        });
        req.on('response', resolve);
        req.on('error', reject);
        req.end();
      });
      if (res.statusCode !== 200) throw new Error(`playground events: ${res.statusCode}`);
      streams.set(conversation, res);
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        buf += c;
        for (let cut = buf.indexOf('\n\n'); cut >= 0; cut = buf.indexOf('\n\n')) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const data = /^event: reply\ndata: (.*)$/m.exec(block)?.[1];
          if (data === undefined) continue;
          const v = JSON.parse(data) as View;
          views.set(v.id, v);
        }
      });
      res.on('error', () => {});
      await api(`api/history?conversation=${encodeURIComponent(conversation)}`);
    },

    async send(i, tag, text) {
      const conversation = conversationOf(i);
      await api('api/send', { conversation, text: `bench-${tag} ${text}` });
      return { conversation };
    },

    exact(h, expected) {
      const views = [...(replies.get(h.conversation)?.values() ?? [])];
      return (
        views.length > 0 && views.every((v) => v.state === 'final') && views.map((v) => v.text).join('') === expected
      );
    },

    async close() {
      for (const res of streams.values()) res.destroy();
      streams.clear();
    },
  };
}
