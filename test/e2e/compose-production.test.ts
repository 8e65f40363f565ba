import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { WORKER_CLOSE_MARGIN_MS } from '../../src/app/worker-closers.js';
import { WORKER_DEFAULTS } from '../../src/jobs/worker-settings.js';
import { REPO_ROOT } from '../support/cli.js';
import { composeFile, composeService, durationSeconds } from '../support/compose-file.js';

/**
 * docker-compose.yml as the file a user deploys, read as compose reads it (parsed and
 * interpolated from a production `.env`): what restarts, how long a stop may take, where state
 * lives, what the sandbox needs to run; and the image it builds (Dockerfile, .dockerignore).
 * `docker compose up` itself is not run here (no Docker daemon): `.ci/run` checks the file with
 * `docker-compose config`, and compose-wiring.test.ts runs the worker with its environment.
 */

/** A production `.env`: the required values, a real API, no sandbox. */
const PRODUCTION_ENV = {
  RECEIVABLES_BASE_URL: 'https://receivables.example.com',
  RECEIVABLES_ACCESS_TOKEN: 'at-123',
  RECEIVABLES_TOKEN_KEY: Buffer.alloc(32, 1).toString('base64'),
  POSTGRES_PASSWORD: 'pg-secret-123',
  DASHBOARD_PASSWORD: 'dash-secret-123',
};

const read = (file: string) => readFileSync(join(REPO_ROOT, file), 'utf8');

/** The longest the worker's shutdown waits for its passes: `queue.shutdownSeconds` of the file the image runs, then closing. */
function workerShutdownSeconds(): number {
  const { environment } = composeService('worker', PRODUCTION_ENV);
  const config = parseYaml(read(environment.RECEIVABLES_SYNC_CONFIG!.replace(/^\/app\//, ''))) as {
    queue?: { shutdownSeconds?: number };
  };
  return (config.queue?.shutdownSeconds ?? WORKER_DEFAULTS.shutdownSeconds) + WORKER_CLOSE_MARGIN_MS / 1000;
}

describe('docker-compose.yml: the stack a user deploys', () => {
  it('when any service stops or the machine reboots, then compose restarts it (unless stopped by hand)', () => {
    const { services } = composeFile(PRODUCTION_ENV);
    expect(Object.keys(services).sort()).toEqual(['postgres', 'redis', 'sandbox', 'worker']);
    for (const [name, service] of Object.entries(services))
      expect([name, service.restart]).toEqual([name, 'unless-stopped']);
  });

  it("when the worker is stopped, then compose waits longer than the worker's own shutdown before it kills it", () => {
    const worker = composeService('worker', PRODUCTION_ENV);
    const shutdown = workerShutdownSeconds();
    expect(shutdown).toBeGreaterThanOrEqual(25 + 10);
    expect(durationSeconds(worker.stop_grace_period ?? '10s')).toBeGreaterThanOrEqual(shutdown);
    // Node as PID 1 under an init: the taps it starts are reaped, signals reach it.
    expect(worker.init).toBe(true);
  });

  it('when the containers are recreated, then credentials, the state DB and the queues survive in named volumes', () => {
    const { services, volumes } = composeFile(PRODUCTION_ENV);
    const mounts = (name: string) =>
      Object.fromEntries((services[name]!.volumes ?? []).map((v) => String(v).split(':').reverse()));
    expect(mounts('worker')['/app/data']).toBe('data');
    expect(mounts('postgres')['/var/lib/postgresql/data']).toBe('pgdata');
    expect(mounts('redis')['/data']).toBe('redisdata');
    expect(Object.keys(volumes ?? {}).sort()).toEqual(['data', 'pgdata', 'redisdata']);
    // /app/data is where the worker keeps them: the state dir of the file it runs.
    const config = parseYaml(read('config/compose.yaml')) as { state: { dataDir: string } };
    expect(config.state.dataDir).toBe('/app/data');
  });

  it('when .env lacks a secret or the API, then compose refuses to start, naming what to set', () => {
    for (const name of [
      'RECEIVABLES_BASE_URL',
      'RECEIVABLES_TOKEN_KEY',
      'POSTGRES_PASSWORD',
      'DASHBOARD_PASSWORD',
    ])
      expect(() => composeFile({ ...PRODUCTION_ENV, [name]: '' }), name).toThrowError(
        new RegExp(`set ${name} in \\.env`),
      );
    const worker = composeService('worker', PRODUCTION_ENV);
    expect(worker.environment).toMatchObject({
      RECEIVABLES_BASE_URL: 'https://receivables.example.com',
      RECEIVABLES_TOKEN_KEY: PRODUCTION_ENV.RECEIVABLES_TOKEN_KEY,
      DATABASE_URL: 'postgres://receivables:pg-secret-123@postgres:5432/receivables_sync',
    });
    expect(composeService('postgres', PRODUCTION_ENV).environment.POSTGRES_PASSWORD).toBe('pg-secret-123');
    // No secret is written in the file itself.
    expect(read('docker-compose.yml')).not.toMatch(/PASSWORD: [^$\s]/);
  });

  it('when the stack runs in production, then the sandbox is only a trial profile and nothing depends on it', () => {
    const { services } = composeFile(PRODUCTION_ENV);
    expect(services.sandbox!.profiles).toEqual(['sandbox']);
    for (const [name, service] of Object.entries(services)) {
      if (name === 'sandbox') continue;
      expect([name, service.profiles]).toEqual([name, undefined]);
      expect(JSON.stringify(service)).not.toContain('sandbox');
    }
    // One image for both: built once (the second build is the first's cache).
    expect(services.sandbox!.image).toBe(services.worker!.image);
  });

  it('when compose watches the services, then each has a healthcheck, the worker its /healthz', () => {
    const { services } = composeFile(PRODUCTION_ENV);
    for (const [name, service] of Object.entries(services)) expect(service.healthcheck, name).toBeDefined();
    expect(JSON.stringify(services.worker!.healthcheck!.test)).toContain('/healthz');
  });

  it.skipIf(spawnSync('docker-compose', ['version']).error !== undefined)(
    'when docker-compose reads the file, then it accepts it, with and without the sandbox profile',
    () => {
      for (const profile of [[], ['--profile', 'sandbox']]) {
        const result = spawnSync('docker-compose', ['-f', 'docker-compose.yml', ...profile, 'config'], {
          cwd: REPO_ROOT,
          env: { ...process.env, ...PRODUCTION_ENV },
          encoding: 'utf8',
        });
        expect(result.status, result.stderr).toBe(0);
        const resolved = parseYaml(result.stdout) as {
          services: Record<string, { restart?: string; stop_grace_period?: string; profiles?: string[] }>;
        };
        // docker-compose 1.x lists every service whatever the profile; 2.x only the active ones.
        expect(resolved.services.sandbox?.profiles ?? ['sandbox']).toEqual(['sandbox']);
        expect(resolved.services.worker?.restart).toBe('unless-stopped');
        expect(durationSeconds(resolved.services.worker?.stop_grace_period ?? '10s')).toBeGreaterThanOrEqual(
          workerShutdownSeconds(),
        );
      }
    },
  );
});

describe('the image', () => {
  it('when it is built, then it is multi-stage and runs as a user other than root', () => {
    const lines = read('Dockerfile')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    const stages = lines.filter((l) => /^FROM\s/i.test(l));
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(lines.some((l) => /^COPY\s+--from=/i.test(l))).toBe(true);
    const lastStage = lines.slice(lines.lastIndexOf(stages.at(-1)!));
    const user = lastStage.filter((l) => /^USER\s/i.test(l)).at(-1);
    expect(user).toBeDefined();
    expect(user!.split(/\s+/)[1]).not.toMatch(/^(root|0)(:|$)/);
  });

  it('when the build context is sent, then dependencies, git history, builds, local state and secrets stay out', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    for (const entry of ['node_modules', '.git', 'dist', 'data', '.env']) expect(ignored).toContain(entry);
    // What the Dockerfile copies is not ignored.
    for (const needed of ['src', 'migrations', 'bin', 'config', 'package.json', 'package-lock.json'])
      expect(ignored).not.toContain(needed);
  });
});
