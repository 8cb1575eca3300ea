// The upstream chat-service emulator: startEmulator() runs it in-process (see docs/emulator.md).
import { setMaxListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { AdminOps } from './context.js';
import type { EmulatorContext } from './context.js';
import { FaultQueue } from './faults.js';
import { type EmulatorAccess, resolveRuntime, validateRuntime } from './options.js';
import { createEmulatorServer } from './server.js';
import { EmulatorConversations } from './state.js';
import type { Emulator, EmulatorOptions, Fault, RecordedRequest, RuntimeOptions } from './types.js';

export type {
  ChatEndpoint,
  ConversationSnapshot,
  Emulator,
  EmulatorForm,
  EmulatorOptions,
  Fault,
  RecordedRequest,
  RuntimeOptions,
  StoredMessage,
  EmulatorStreamFormat,
  StreamIds,
} from './types.js';
export { DEFAULTS as EMULATOR_DEFAULTS } from './options.js';
export { longMarkdown, parseDirectives, replyText } from './replies.js';

export type { EmulatorAccess } from './options.js';

/** `admin`: serve `/_emulator/*` over HTTP too (the methods below always work in-process). */
export async function startEmulator(options: EmulatorOptions & EmulatorAccess = {}): Promise<Emulator> {
  const opts = resolveRuntime(options);
  const now = options.now ?? (() => Date.now());
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  const store = new EmulatorConversations(now, () => opts.sessionIdleSeconds);
  const faults = new FaultQueue();
  const requests: RecordedRequest[] = [];
  const closing = new AbortController();
  // Every open stream listens to it: not a leak.
  setMaxListeners(0, closing.signal);

  const admin: AdminOps = {
    injectFault: (fault: Fault) => faults.add(fault),
    clearFaults: () => faults.clear(),
    setOptions(partial: Partial<RuntimeOptions>) {
      validateRuntime(partial);
      for (const [k, v] of Object.entries(partial)) {
        if (v !== undefined) (opts as unknown as Record<string, unknown>)[k] = Array.isArray(v) ? [...v] : v;
      }
    },
    expire: (id: string) => store.expire(id),
    reset() {
      faults.clear();
      store.clear();
      requests.length = 0;
    },
  };
  const live = { streams: 0 };
  const ctx: EmulatorContext = { opts, now, store, faults, requests, closing: closing.signal, admin, live };
  const server = createEmulatorServer(ctx, { admin: options.admin === true }, host);

  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const urlHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;

  let closed: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${addr.port}`,
    host: addr.address,
    port: addr.port,
    requests,
    options: opts,
    injectFault: admin.injectFault,
    clearFaults: admin.clearFaults,
    setOptions: admin.setOptions,
    expire: admin.expire,
    reset: admin.reset,
    conversation: (id: string) => store.snapshot(id),
    get openStreams() {
      return live.streams;
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        closing.abort();
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
