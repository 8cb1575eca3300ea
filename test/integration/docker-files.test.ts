import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseDotenv } from 'dotenv';
import { describe, expect, it } from 'vitest';
import { buildConfig, parseRawEnv } from '../../src/config/config.js';
import { envSchema } from '../../src/config/env-schema.js';
import { configForStart } from '../../src/config/start-config.js';
import { parseArgs as parseEmulatorArgs } from '../../src/cli/emulator.js';
import { silentLogger } from '../../src/logger.js';
import { createHttpServer } from '../../src/server/http-server.js';
import { createMetrics } from '../../src/server/metrics.js';
import { BRIDGE_ENV, BRIDGE_NODE_FLAGS } from '../../bench/bridge-process.js';

// No Docker engine in the test environment: these check that the Dockerfile, compose file and
// .env.example agree with the code (scripts, paths, variable names, flags), and run the image's
// HEALTHCHECK command against the real HTTP server.

const ROOT = resolve(import.meta.dirname, '../..');
const read = (p: string) => readFileSync(new URL(`../../${p}`, import.meta.url), 'utf8');
const exists = (p: string) => existsSync(new URL(`../../${p}`, import.meta.url));
const dockerfile = read('Dockerfile');
const compose = read('docker-compose.yml');
const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;

describe('Dockerfile', () => {
  it('runs only npm scripts that exist and copies paths that exist', () => {
    const runs = [...dockerfile.matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1]);
    expect(runs).toContain('build');
    for (const s of runs) expect(scripts, `npm run ${s}`).toHaveProperty(s as string);

    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(?:--\S+ )*(.+) \S+$/gm)].flatMap((m) =>
      (m[1] ?? '').split(' '),
    );
    expect(copied).toEqual(expect.arrayContaining(['package.json', 'package-lock.json', 'src', 'migrations', 'bin']));
    for (const p of copied) expect(exists(p), p).toBe(true);
  });

  it('starts the compiled CLI, as a non-root user under tini, with the database on the /data volume', () => {
    expect(dockerfile).toMatch(/^CMD \["node", (?:"--[\w=-]+", )*"dist\/cli\.js", "start"\]$/m);
    // The same entry as the package's command (bin/assistant-bridge.js) and `npm start`.
    expect(read('bin/assistant-bridge.js')).toContain("import('../dist/cli.js')");
    expect(scripts.start).toMatch(/node (?:--[\w=-]+ )*dist\/cli\.js start/);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["tini", "--"\]$/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/DATABASE_PATH=\/data\/bridge\.db/);
    expect(dockerfile).toMatch(/^VOLUME \["\/data"\]$/m);
    expect(dockerfile).toMatch(/^EXPOSE 3000$/m);
  });

  it('runs node with the memory settings the bench measures, wherever the bridge starts', async () => {
    // The image (CMD and ENV), `npm start` and the package's command (its shebang) alike.
    const cmd = /^CMD \[(.*)\]$/m.exec(dockerfile)?.[1] ?? '';
    const shebang = read('bin/assistant-bridge.js').split('\n')[0] ?? '';
    for (const flag of BRIDGE_NODE_FLAGS) {
      expect(cmd).toContain(`"${flag}"`);
      expect(scripts.start).toContain(` ${flag} `);
      expect(shebang).toContain(` ${flag}`);
    }
    for (const [name, value] of Object.entries(BRIDGE_ENV)) {
      expect(dockerfile).toMatch(new RegExp(`^\\s+${name}=${value}\\b`, 'm'));
      expect(scripts.start).toContain(`${name}=${value} node`);
      expect(shebang).toContain(`${name}=${value} node`);
    }
    // The shebang runs as written (GNU env -S, as in the image): the command answers.
    const { stdout } = await promisify(execFile)(join(ROOT, 'bin', 'assistant-bridge.js'), ['help'], {
      timeout: 20_000,
    });
    expect(stdout).toMatch(/^usage: assistant-bridge/);
  });

  it('keeps no better-sqlite3 build leftovers or empty folders, and the addon still loads', () => {
    const step = /^RUN (cd node_modules\/better-sqlite3 \\\n(?:.*\\\n)*.*)$/m.exec(dockerfile)?.[1];
    expect(step).toBeDefined();
    // The same commands on a copy of this checkout's better-sqlite3 (built or prebuilt alike).
    const app = mkdtempSync(join(tmpdir(), 'bridge-lean-'));
    try {
      mkdirSync(join(app, 'node_modules', '@types'), { recursive: true });
      cpSync(join(ROOT, 'node_modules', 'better-sqlite3'), join(app, 'node_modules', 'better-sqlite3'), {
        recursive: true,
      });
      for (const dep of ['bindings', 'file-uri-to-path'])
        cpSync(join(ROOT, 'node_modules', dep), join(app, 'node_modules', dep), { recursive: true });
      const script = (step ?? '').replace(/\\\n/g, ' ').replace('cd /app', `cd ${JSON.stringify(app)}`);
      execFileSync('sh', ['-ec', script], { cwd: app });
      const pkg = join(app, 'node_modules', 'better-sqlite3');
      expect(readdirSync(join(pkg, 'build'))).toEqual(['Release']);
      expect(readdirSync(join(pkg, 'build', 'Release'))).toEqual(['better_sqlite3.node']);
      for (const gone of ['deps', 'src']) expect(existsSync(join(pkg, gone)), gone).toBe(false);
      expect(existsSync(join(app, 'node_modules', '@types'))).toBe(false);
      const loaded = execFileSync(
        process.execPath,
        [
          '-e',
          "const D = require('better-sqlite3'); console.log(new D(':memory:').prepare('select 41 + 1 as n').get().n)",
        ],
        { cwd: app, encoding: 'utf8' },
      );
      expect(loaded.trim()).toBe('42');
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });

  it('has a HEALTHCHECK that passes against a running server and fails without one', async () => {
    const cmd = /^\s+CMD (\[.*\])$/m.exec(dockerfile.slice(dockerfile.indexOf('HEALTHCHECK')))?.[1];
    const argv = JSON.parse(cmd ?? '[]') as string[];
    expect(argv[0]).toBe('node');
    const server = createHttpServer({
      host: '127.0.0.1',
      port: 0,
      logger: silentLogger,
      metrics: createMetrics({ defaultMetrics: false }),
      readiness: () => ({ ready: true, checks: {} }),
    });
    const { port } = await server.listen();
    const check = (p: number) =>
      promisify(execFile)(process.execPath, argv.slice(1), {
        env: { ...process.env, PORT: String(p) },
        timeout: 10_000,
      }).then(
        () => 0,
        (err: { code?: number }) => err.code ?? -1,
      );
    try {
      expect(await check(port)).toBe(0);
    } finally {
      await server.close();
    }
    expect(await check(port)).toBe(1);
  });
});

describe('.env.example', () => {
  const example = parseDotenv(read('.env.example'));

  // Set as `NAME=value`, or shown commented out as `# NAME=value` where setting it would override a
  // default that differs between `npm start` and the image (DATABASE_PATH), or between a first
  // run and a real setup (CHAT_API_URL: unset, the playground runs on the built-in emulator).
  const commented = [...read('.env.example').matchAll(/^# ([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1] as string);

  it('names every variable of the configuration, and only those', () => {
    expect([...Object.keys(example), ...commented].sort()).toEqual(Object.keys(envSchema.shape).sort());
  });

  it('works with `docker run --env-file` as well as with npm start', () => {
    // Docker takes every NAME=value line literally and over the image's ENV: nothing may replace
    // the image's DATABASE_PATH=/data/bridge.db (the only writable place for the non-root user).
    expect(example.DATABASE_PATH).toBeUndefined();
    expect(commented).toEqual(['CHAT_API_URL', 'DATABASE_PATH']);
    expect(envSchema.shape.DATABASE_PATH.parse(undefined)).toBe('./data/bridge.db');
    // No quotes or trailing comments, which docker would keep as part of the value.
    for (const line of read('.env.example').split('\n')) {
      if (line.startsWith('#') || line.trim() === '') continue;
      expect(line, line).toMatch(/^[A-Z][A-Z0-9_]*=[^"'#\s]*$/);
    }
    // The loopback address is explained for containers.
    expect(read('.env.example')).toMatch(/Inside a container 127\.0\.0\.1 is the\s+# container itself/);
  });

  it('leaves the playground working: no CHAT_API_URL, so start runs the built-in emulator', () => {
    const { config, playground } = configForStart(parseRawEnv(example));
    expect(playground).toEqual({ enabled: true, allowRemote: false, emulator: true });
    expect(config.upstream).toMatchObject({ url: '', apiKey: 'dev-key', botId: 'demo-bot' });
    // Uncommented, the URL is the stand-alone emulator's, with the key and bot it knows.
    const set = parseRawEnv({ ...example, CHAT_API_URL: 'http://127.0.0.1:8787' });
    expect(buildConfig(set, { requirePlatform: false }).upstream).toMatchObject({
      url: 'http://127.0.0.1:8787',
      apiKey: 'dev-key',
      botId: 'demo-bot',
    });
    expect(read('.env.example')).toMatch(/^# CHAT_API_URL=http:\/\/127\.0\.0\.1:8787$/m);
  });
});

describe('base images', () => {
  it('are build arguments (pinned by digest where the build runs), defaulting to the Node line package.json allows', () => {
    expect(dockerfile).toMatch(/^ARG NODE_BUILD_IMAGE=node:22-bookworm$/m);
    expect(dockerfile).toMatch(/^ARG NODE_RUN_IMAGE=node:22-bookworm-slim$/m);
    expect(dockerfile).toMatch(/^FROM \$\{NODE_BUILD_IMAGE\} AS build$/m);
    expect(dockerfile).toMatch(/^FROM \$\{NODE_RUN_IMAGE\} AS run$/m);
    expect(dockerfile).toContain('@sha256:<digest>');
    expect(dockerfile).toContain('docker buildx imagetools inspect');
    // No made-up digest anywhere: a pin is the operator's, looked up where the build runs.
    expect(dockerfile).not.toMatch(/@sha256:[0-9a-f]{64}/);
    expect(scripts.start).toBeDefined();
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    expect(engines).toMatch(/>=22 <23/);
    expect(compose).toContain('NODE_RUN_IMAGE: ${NODE_RUN_IMAGE:-node:22-bookworm-slim}');
    expect(read('docs/deployment.md')).toMatch(/NODE_RUN_IMAGE=node:22-bookworm-slim@sha256:/);
  });
});

describe('docker-compose.yml', () => {
  it('runs the emulator with flags it accepts and points the bridge at it', () => {
    const command = /command: (\[.*\])/.exec(compose)?.[1];
    const argv = JSON.parse(command ?? '[]') as string[];
    expect(argv.slice(0, 3)).toEqual(['node', 'dist/cli.js', 'emulator']);
    expect(parseEmulatorArgs(argv.slice(3))).toMatchObject({ ok: true });
    expect(compose).toContain('CHAT_API_URL: ${CHAT_API_URL:-http://emulator:8787}');
  });

  it("lets .env choose the upstream: the emulator is only the default of compose's environment", () => {
    // `environment:` wins over env_file, so a plain value there would hide .env's (issue 41).
    // Compose fills ${NAME:-default} from the shell and the project's .env, as resolved here.
    const bridge = compose.slice(compose.indexOf('\n  bridge:'), compose.indexOf('\n  emulator:'));
    const lines = [...bridge.matchAll(/^ {6}([A-Z_]+): (.+)$/gm)].map((m) => [m[1] ?? '', m[2] ?? ''] as const);
    const resolveWith = (dotenv: Record<string, string>) =>
      Object.fromEntries(
        lines.map(([k, v]) => [k, v.replace(/\$\{([A-Z_]+):-([^}]*)\}/g, (_, n: string, d: string) => dotenv[n] ?? d)]),
      );
    for (const name of ['CHAT_API_URL', 'CHAT_API_KEY', 'CHAT_BOT_ID'])
      expect(lines.find(([k]) => k === name)?.[1], name).toMatch(new RegExp(`^\\$\\{${name}:-[^}]+\\}$`));
    expect(resolveWith({})).toMatchObject({ CHAT_API_URL: 'http://emulator:8787', CHAT_API_KEY: 'dev-key' });
    const own = { CHAT_API_URL: 'https://chat.example.com', CHAT_API_KEY: 'sk-own', CHAT_BOT_ID: 'mine' };
    expect(resolveWith(own)).toMatchObject(own);
    // The replicas too.
    const replicas = compose.slice(compose.indexOf('  replica-1:'));
    expect(replicas).toContain('CHAT_API_URL: ${CHAT_API_URL:-http://emulator:8787}');
  });

  it('limits memory to the recommended 256 MB and says how to reach the playground through the port', () => {
    const bridge = compose.slice(compose.indexOf('\n  bridge:'), compose.indexOf('\n  emulator:'));
    expect(bridge).toMatch(/^ {4}mem_limit: 256m$/m);
    expect(compose).toMatch(/^x-replica: &replica\n(?: {2}.*\n)* {2}mem_limit: 256m$/m);
    expect(read('docs/deployment.md')).toMatch(/A container limit of 256 MB/);
    // A browser through the published port arrives from Docker's gateway: PLAYGROUND=on + token.
    for (const doc of [compose, read('docs/deployment.md')]) {
      expect(doc).toMatch(/gateway/);
      expect(doc).toMatch(/PLAYGROUND=on/);
      expect(doc).toMatch(/PLAYGROUND_TOKEN/);
      expect(doc).toMatch(/\/playground\?token=/);
    }
  });

  it('has a replicas profile: PostgreSQL and two replicas with their own REPLICA_ID on one DATABASE_URL', () => {
    const replicas = compose.slice(compose.indexOf('  replica-1:'));
    const names = [...replicas.matchAll(/^\s+([A-Z_]+):/gm)].map((m) => m[1]);
    for (const n of names) expect(Object.keys(envSchema.shape), n).toContain(n);
    expect(replicas).toContain('DATABASE_URL: postgres://bridge:bridge@postgres:5432/bridge');
    expect([...replicas.matchAll(/REPLICA_ID: (\S+)/g)].map((m) => m[1])).toEqual(['replica-1', 'replica-2']);
    expect(compose).toMatch(/postgres:\n\s+image: postgres:15\n\s+profiles: \[replicas\]/);
  });

  it('sets only variables the configuration knows', () => {
    const env = compose.slice(compose.indexOf('environment:'), compose.indexOf('ports:'));
    const names = [...env.matchAll(/^\s+([A-Z_]+):/gm)].map((m) => m[1]);
    expect(names.length).toBeGreaterThan(0);
    for (const n of names) expect(Object.keys(envSchema.shape), n).toContain(n);
  });
});
