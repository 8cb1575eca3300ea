import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openBridgeStore } from '../../src/bridge-store.js';
import { buildConfig, ConfigError, parseRawEnv } from '../../src/config/config.js';
import { createLogger } from '../../src/logger.js';
import { type Bridge, buildBridge } from '../../src/main.js';

// The operator's surface (issue 39): TRUST_PROXY while listening on every interface is warned
// about at start; METRICS_PORT moves /metrics to its own listener and off PORT. Through the real
// bridge (buildBridge) on loopback; the every-interface case is only built, never listening.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

// Never called: no platform and no playground, nothing asks the upstream.
const UPSTREAM = { CHAT_API_URL: 'http://127.0.0.1:9', CHAT_API_KEY: 'operator-surface-key', CHAT_BOT_ID: 'demo-bot' };

async function bridgeWith(env: Record<string, string>): Promise<{ bridge: Bridge; lines: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'operator-surface-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const raw = parseRawEnv({
    ...UPSTREAM,
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_PATH: join(dir, 'bridge.db'),
    ...env,
  });
  const config = buildConfig(raw, { requirePlatform: false });
  const lines: string[] = [];
  const root = createLogger({ level: 'info', destination: { write: (l: string) => lines.push(l) } });
  const store = await openBridgeStore(config, root);
  if (store === undefined) throw new Error('no store');
  const bridge = await buildBridge(config, store, root);
  cleanups.push(() => bridge.shutdown());
  return { bridge, lines };
}

const warnings = (lines: string[]) =>
  lines
    .map((l) => JSON.parse(l) as { level: number; msg: string })
    .filter((l) => l.level === 40 && /TRUST_PROXY/.test(l.msg));

describe('TRUST_PROXY while HOST is every interface', () => {
  it.each(['0.0.0.0', '::'])('HOST=%s with TRUST_PROXY=1: a warning at start that says what to do', async (host) => {
    const { lines } = await bridgeWith({ HOST: host, TRUST_PROXY: '1' });
    const [w] = warnings(lines);
    expect(w?.msg).toMatch(/X-Forwarded-For/);
    expect(w?.msg).toMatch(/Set HOST/);
  });

  it('no warning on loopback, without TRUST_PROXY, or with a list of proxy addresses', async () => {
    for (const env of [
      { HOST: '127.0.0.1', TRUST_PROXY: '1' },
      { HOST: '0.0.0.0' },
      { HOST: '0.0.0.0', TRUST_PROXY: '10.0.0.5' },
    ]) {
      const { lines } = await bridgeWith(env);
      expect(warnings(lines), JSON.stringify(env)).toEqual([]);
    }
  });
});

describe('METRICS_PORT', () => {
  it('/metrics is served on METRICS_HOST:METRICS_PORT only, not on PORT', async () => {
    const { bridge } = await bridgeWith({ METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' });
    await bridge.start();
    const port = bridge.port;
    const metricsPort = bridge.metricsPort;
    expect(metricsPort).toBeDefined();
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toMatch(/bridge_replies_started_total|bridge_/);
  });

  it('unset, /metrics stays on PORT; METRICS_HOST alone is a configuration error', async () => {
    const { bridge } = await bridgeWith({});
    await bridge.start();
    expect(bridge.metricsPort).toBeUndefined();
    expect((await fetch(`http://127.0.0.1:${bridge.port}/metrics`)).status).toBe(200);
    expect(() =>
      buildConfig(parseRawEnv({ ...UPSTREAM, METRICS_HOST: '127.0.0.1' }), { requirePlatform: false }),
    ).toThrow(ConfigError);
    expect(
      buildConfig(parseRawEnv({ ...UPSTREAM, METRICS_PORT: '9100' }), { requirePlatform: false }).service.metrics,
    ).toEqual({
      host: '127.0.0.1',
      port: 9100,
    });
  });
});
