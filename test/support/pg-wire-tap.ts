import { createServer, type Server, type Socket, connect } from 'node:net';
import type { AddressInfo } from 'node:net';

// A loopback TCP proxy in front of PostgreSQL that reads what the client sends (the frontend
// half of the wire protocol) and notes the text of every statement, so a test can count the
// round trips an operation costs and see what each statement says. Everything is forwarded
// unchanged in both directions; no TLS (the test client does not ask for it).

export interface PgWireTap {
  /** The server URL with the tap's address instead. */
  url: string;
  /** Statement texts in the order the client sent them (extended-protocol Parse or simple Query). */
  statements: string[];
  close(): Promise<void>;
}

/** Frontend messages: the first one of a connection has no type byte (startup); then type + int32 length. */
function reader(onStatement: (sql: string) => void): (chunk: Buffer) => void {
  let buf = Buffer.alloc(0);
  let started = false;
  return (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      if (!started) {
        if (buf.length < 4) return;
        const len = buf.readInt32BE(0);
        if (buf.length < len) return;
        buf = buf.subarray(len);
        started = true;
        continue;
      }
      if (buf.length < 5) return;
      const type = String.fromCharCode(buf[0] ?? 0);
      const len = buf.readInt32BE(1);
      if (buf.length < 1 + len) return;
      const body = buf.subarray(5, 1 + len);
      if (type === 'Q') onStatement(body.toString('utf8', 0, body.indexOf(0)));
      if (type === 'P') {
        const nameEnd = body.indexOf(0);
        onStatement(body.toString('utf8', nameEnd + 1, body.indexOf(0, nameEnd + 1)));
      }
      buf = buf.subarray(1 + len);
    }
  };
}

export async function startPgWireTap(serverUrl: string): Promise<PgWireTap> {
  const target = new URL(serverUrl);
  const statements: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    const read = reader((sql) => statements.push(sql));
    client.on('data', (c: Buffer) => {
      read(c);
      upstream.write(c);
    });
    upstream.on('data', (c: Buffer) => client.write(c));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(serverUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    statements,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
