import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join, posix, resolve } from 'node:path';
import { promisify } from 'node:util';
import { glob } from 'tinyglobby';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyDirectory } from '../src/lib/secret-box.js';
import { configSchema, loadConfig } from '../src/config.js';
import { startServerProcess, type ServerProcess } from './server-process.js';

/**
 * The container image cannot be built on the machines that run this suite (no base images), so
 * every step the Dockerfile runs is one this suite runs too, and the files are checked against the
 * code: install (CI's own `npm ci`), build, the runtime dependencies left after `npm prune
 * --omit=dev`, the start command, the healthcheck, and every variable compose.yaml sets.
 */
const ROOT = resolve(import.meta.dirname, '..');
const run = promisify(execFile);
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

interface Dockerfile {
  run: string[];
  env: Record<string, string>;
  cmd: string[];
  healthcheck: string[];
  user: string[];
  volumes: string[];
  copiedFromBuild: string[];
  /** WORKDIR of the last stage: where the start resolves relative paths. */
  workdir: string;
}

/** The instructions of the Dockerfile that matter here (continuation lines joined). */
function parseDockerfile(text: string): Dockerfile {
  const lines = text.replace(/\\\n\s*/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const out: Dockerfile = { run: [], env: {}, cmd: [], healthcheck: [], user: [], volumes: [], copiedFromBuild: [], workdir: '/' };
  for (const line of lines) {
    const [op, ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    if (op === 'RUN') out.run.push(args);
    if (op === 'ENV') for (const m of args.matchAll(/(\w+)=(\S+)/g)) out.env[m[1]!] = m[2]!;
    if (op === 'CMD') out.cmd = JSON.parse(args);
    if (op === 'HEALTHCHECK') out.healthcheck = JSON.parse(args.slice(args.indexOf('CMD ') + 4));
    if (op === 'USER') out.user.push(args);
    if (op === 'WORKDIR') out.workdir = args;
    if (op === 'VOLUME') out.volumes.push(...(JSON.parse(args) as string[]));
    if (op === 'COPY' && args.startsWith('--from=build')) out.copiedFromBuild.push(...rest.slice(1, -1).map((p) => p.replace(/^\/app\//, '')));
  }
  return out;
}

const docker = parseDockerfile(read('Dockerfile'));
const compose = parseYaml(read('compose.yaml'), { merge: true }) as {
  services: Record<string, { build?: string; image?: string; environment?: Record<string, string>; healthcheck?: { test: string[] }; restart?: string; profiles?: string[]; volumes?: string[] }>;
};
const configNames = new Set(Object.keys(configSchema.shape));

/** compose.yaml's `${NAME:-default}` / `${NAME:?message}` with a plausible value for each secret. */
function substitute(value: string): string {
  const samples: Record<string, string> = {
    POSTGRES_PASSWORD: 'pw',
    ANSWERDESK_SECRET_KEY: 'a'.repeat(64),
    ANSWERDESK_ADMIN_TOKEN: 'admin-token-0123456789',
    ANSWERDESK_DOMAIN: 'support.example.com',
  };
  return value.replace(/\$\{(\w+)(?::[-?]([^}]*))?\}/g, (_, name: string, fallback?: string) => samples[name] ?? (fallback !== undefined && !/^set /.test(fallback) ? fallback : ''));
}

describe('Dockerfile', () => {
  it('installs as CI does, builds with npm run build, and drops dev dependencies', () => {
    const ci = read('.ci/run');
    const install = docker.run.find((r) => r.startsWith('npm ci'));
    expect(install).toBeDefined();
    expect(ci).toContain(install!);
    expect(docker.run).toContain('npm run build');
    expect(docker.run).toContain('npm prune --omit=dev --no-audit --no-fund');
  });

  it('runs as a non-root user, with a data volume where DATABASE_URL points, configured only by settings of src/config.ts', () => {
    expect(docker.user.at(-1)).toBe('node');
    expect(docker.volumes).toEqual(['/data']);
    expect(docker.env.DATABASE_URL).toBe('sqlite:/data/answerdesk.db');
    expect(Object.keys(docker.env).filter((n) => n !== 'NODE_ENV' && !configNames.has(n))).toEqual([]);
    expect(() => loadConfig(docker.env)).not.toThrow();
  });

  it('keeps the generated secret key on the data volume, on SQLite and on PostgreSQL', () => {
    // Symbolic links the image makes (`ln -s <target> <link>`), to follow as the start would.
    const links = new Map<string, string>();
    for (const r of docker.run) for (const m of r.matchAll(/\bln -s(?:f|n|fn|nf)? (\S+) (\S+)/g)) links.set(posix.resolve(docker.workdir, m[2]!), m[1]!);
    // The node user cannot write into the image itself: with ANSWERDESK_SECRET_KEY unset, the key
    // file it generates at the first start must land on the volume (PostgreSQL: ./data).
    for (const url of [docker.env.DATABASE_URL!, 'postgres://answerdesk:pw@postgres:5432/answerdesk']) {
      const dir = posix.resolve(docker.workdir, keyDirectory({ DATABASE_URL: url })!);
      expect([url, links.get(dir) ?? dir]).toEqual([url, expect.toBeOneOf(docker.volumes)]);
    }
  });

  it('copies into the runtime image everything the start needs, and the build context leaves secrets and data out', () => {
    for (const path of docker.copiedFromBuild.filter((p) => p !== 'dist')) expect(existsSync(join(ROOT, path)), path).toBe(true);
    expect(docker.copiedFromBuild).toEqual(expect.arrayContaining(['bin', 'src', 'dist', 'node_modules', 'package.json']));
    const ignored = read('.dockerignore').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['.env', 'node_modules', 'data', 'secret.key', '.git']));
  });

  it('starts with the command the suite uses for its server processes', () => {
    expect(docker.cmd).toEqual(['node', 'bin/answerdesk.js', 'serve']);
    const serverProcess = read('test/server-process.ts');
    expect(serverProcess).toContain("resolve(import.meta.dirname, '../bin/answerdesk.js')");
    expect(serverProcess).toContain("[BIN, 'serve']");
  });

  it('needs at run time only packages that npm prune --omit=dev keeps', async () => {
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
    const files = await glob(['src/**/*.ts', 'src/**/*.mjs', 'bin/*.js'], { cwd: ROOT, ignore: ['**/*.test.ts'] });
    const imported = new Set<string>();
    for (const file of files) {
      for (const m of read(file).matchAll(/(?:from\s+|import\s*\(\s*|^import\s+)['"]([^'".][^'"]*)['"]/gm)) {
        const spec = m[1]!;
        if (spec.startsWith('node:') || builtinModules.includes(spec)) continue;
        imported.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
      }
    }
    expect([...imported]).toEqual(expect.arrayContaining(['fastify', 'better-sqlite3', 'prom-client', 'tsx']));
    expect([...imported].filter((name) => !(name in pkg.dependencies)).sort()).toEqual([]);
  });

  it('builds the widget bundle with npm run build', async () => {
    await run('npm', ['run', 'build', '--silent'], { cwd: ROOT });
    expect(existsSync(join(ROOT, 'dist/widget.js'))).toBe(true);
  }, 60_000);
});

describe('compose.yaml', () => {
  const nodes = Object.entries(compose.services).filter(([, s]) => s.build === '.');

  it('runs two AnswerDesk nodes on PostgreSQL and Redis behind a proxy, and a single-node profile on SQLite', () => {
    const cluster = nodes.filter(([, s]) => !s.profiles);
    expect(cluster.length).toBeGreaterThanOrEqual(2);
    for (const [, s] of cluster) {
      expect(substitute(s.environment!.DATABASE_URL!)).toMatch(/^postgres:\/\/answerdesk:pw@postgres:5432\/answerdesk$/);
      expect(s.environment!.REDIS_URL).toBe('redis://redis:6379');
    }
    const single = nodes.filter(([, s]) => s.profiles?.includes('single'));
    expect(single).toHaveLength(1);
    expect(single[0]![1].environment!.DATABASE_URL).toBe('sqlite:/data/answerdesk.db');
    expect(single[0]![1].volumes).toEqual(['answerdesk-data:/data']);
    // The proxy sends traffic to each cluster node on the port the image listens on.
    const caddy = read('deploy/Caddyfile');
    for (const [name] of cluster) expect(caddy).toContain(`${name}:${docker.env.PORT}`);
    // Liveness: /ready fails with the shared database or Redis, on all nodes at once (see redis-outage.test.ts).
    expect(caddy).toContain('health_uri /health');
  });

  it('sets only variables of src/config.ts, with values the config accepts', () => {
    for (const [name, s] of nodes) {
      const env = Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, substitute(String(v))]));
      expect(Object.keys(env).filter((k) => !configNames.has(k)), name).toEqual([]);
      const config = loadConfig({ ...docker.env, ...env });
      if (!s.profiles) expect(config.TRUST_PROXY).toBe(1);
    }
  });

  it('gives every service a healthcheck (the nodes the image’s own) and a restart policy', () => {
    for (const [name, s] of Object.entries(compose.services)) {
      expect(s.restart, name).toBe('unless-stopped');
      expect(s.healthcheck?.test, name).toBeDefined();
    }
    for (const [, s] of nodes) expect(s.healthcheck!.test).toEqual(['CMD', ...docker.healthcheck]);
  });
});

describe('deploy/answerdesk.service (systemd)', () => {
  it('starts the same command as the image, with settings of src/config.ts', () => {
    const unit = read('deploy/answerdesk.service');
    expect(unit).toContain(`ExecStart=/usr/bin/${docker.cmd.join(' ')}`);
    const env = Object.fromEntries([...unit.matchAll(/^Environment=(\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
    expect(Object.keys(env).filter((n) => n !== 'NODE_ENV' && !configNames.has(n))).toEqual([]);
    expect(() => loadConfig(env)).not.toThrow();
    // Stopping waits longer than the drain.
    expect(Number(/^TimeoutStopSec=(\d+)$/m.exec(unit)![1]) * 1000).toBeGreaterThan(loadConfig({}).ANSWERDESK_SHUTDOWN_TIMEOUT_MS);
  });
});

describe('the healthcheck command', () => {
  let dir: string;
  let server: ServerProcess;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'answerdesk-health-'));
    server = await startServerProcess({ DATABASE_URL: `sqlite:${join(dir, 'answerdesk.db')}` });
  }, 90_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const healthcheck = (port: string) =>
    run(docker.healthcheck[0]!, docker.healthcheck.slice(1), { cwd: ROOT, env: { PATH: process.env.PATH ?? '', PORT: port, HOST: '0.0.0.0' } }).then(
      () => 0,
      (err: { code?: number }) => err.code ?? 1,
    );

  it('exits 0 against a running server and 1 once it has stopped', async () => {
    const port = new URL(server.base).port;
    expect(await healthcheck(port)).toBe(0);
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(await healthcheck(port)).toBe(1);
  });
});
