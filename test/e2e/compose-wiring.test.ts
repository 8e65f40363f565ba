import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import {
  eventually,
  type PrivateRedis,
  startPrivateRedis,
  startWorker,
  type WorkerProcess,
} from '../support/worker-process.js';

/**
 * The container stack's wiring, run without containers: the worker service of docker-compose.yml
 * with its environment and volumes as compose would resolve them, each host of the stack mapped to
 * a local one (its Postgres, Redis and sandbox), the image's `/app` to the repository. It must start
 * and sync the sample drop folder copied into its drop folder, as `docker compose up` would.
 */

interface ComposeService {
  environment: Record<string, string>;
  volumes: string[];
  command: string[];
}

/** Compose's interpolation: `${VAR}`, `${VAR:-default}`, `${VAR:?message}` (which fails when unset). */
function interpolate(text: string, env: Record<string, string | undefined>): string {
  return text.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_, name: string, op?: string, arg?: string) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (op === '?') throw new Error(`compose refuses: ${arg}`);
    return op === '-' ? (arg ?? '') : '';
  });
}

function composeService(name: string, env: Record<string, string | undefined>): ComposeService {
  const compose = parseYaml(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8'));
  const service = compose.services[name];
  const environment = Object.fromEntries(
    Object.entries((service.environment ?? {}) as Record<string, string>).map(([k, v]) => [
      k,
      interpolate(String(v), env),
    ]),
  );
  return {
    environment,
    volumes: ((service.volumes ?? []) as string[]).map((v) => interpolate(v, env)),
    command: ((service.command ?? []) as string[]).map((c) => interpolate(String(c), env)),
  };
}

const expectedSample = { accounts: 8, invoices: 12, creditNotes: 3 };

describe('docker-compose.yml: the worker service', () => {
  let dir: string;
  let sandbox: TestSandbox;
  let redis: PrivateRedis;
  let worker: WorkerProcess | undefined;
  const schema = uniqueSchema('compose');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rs-compose-'));
    redis = await startPrivateRedis();
  });
  afterAll(async () => {
    await worker?.stop();
    await sandbox?.close();
    await redis?.kill();
    await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  it('when DASHBOARD_PASSWORD is not set, then compose refuses, naming the variable', () => {
    expect(() => composeService('worker', {})).toThrowError(/set DASHBOARD_PASSWORD in \.env/);
  });

  it('when it runs with its environment and volumes mapped to local ones, then it syncs the sample drop folder', async () => {
    const shell = { DASHBOARD_PASSWORD: 'compose-test-password' };
    // The sandbox service, started with its own command's token.
    const sandboxCommand = composeService('sandbox', shell).command;
    const accessToken = sandboxCommand[sandboxCommand.indexOf('--access-token') + 1]!;
    sandbox = await startTestSandbox({ accessToken, rateLimit: { quota: 100_000, windowSeconds: 60 } });
    const service = composeService('worker', shell);
    expect(service.environment.RECEIVABLES_ACCESS_TOKEN).toBe(accessToken);

    // Volumes: the host side resolved from the repository, here a folder of the test's.
    const hostOf = new Map<string, string>();
    for (const volume of service.volumes) {
      const [host, container] = volume.split(':') as [string, string];
      expect(resolve(REPO_ROOT, host)).toBe(join(REPO_ROOT, 'drop')); // DROP_DIR's default
      hostOf.set(container, join(dir, 'drop'));
    }
    mkdirSync(join(dir, 'drop'));
    cpSync(join(REPO_ROOT, 'examples', 'drop'), join(dir, 'drop'), { recursive: true });
    hostOf.set('/app/data', join(dir, 'data'));

    // The image holds config/ at /app/config: the file the environment names, with its paths mapped.
    const configPath = service.environment.RECEIVABLES_SYNC_CONFIG!;
    expect(configPath.startsWith('/app/')).toBe(true);
    let config = readFileSync(join(REPO_ROOT, configPath.slice('/app/'.length)), 'utf8');
    for (const [container, host] of hostOf) config = config.replaceAll(container, host);
    const localConfig = join(dir, 'compose.yaml');
    writeFileSync(localConfig, config);

    // The stack's hosts, mapped to this machine's.
    const env: Record<string, string> = {
      ...service.environment,
      RECEIVABLES_SYNC_CONFIG: localConfig,
      DATABASE_URL: service.environment.DATABASE_URL!.replace(
        /^postgres:\/\/[^@]+@postgres:5432\/receivables_sync$/,
        TEST_DATABASE_URL,
      ),
      DATABASE_SCHEMA: schema,
      REDIS_URL: service.environment.REDIS_URL!.replace('redis://redis:6379', redis.url),
      RECEIVABLES_BASE_URL: service.environment.RECEIVABLES_BASE_URL!.replace(
        'http://sandbox:4010',
        sandbox.baseUrl,
      ),
      DASHBOARD_PORT: '0', // compose publishes 3000; here any free port
      LOG_LEVEL: 'info',
    };
    expect(env.DATABASE_URL).toBe(TEST_DATABASE_URL);
    const migrated = await runCli(['migrate'], { env });
    expect(migrated.code, migrated.stderr).toBe(0);

    worker = await startWorker('compose', localConfig, env);
    await eventually(
      () => sandbox.admin('GET', '/stats'),
      (s) =>
        s.accounts === expectedSample.accounts &&
        s.invoices === expectedSample.invoices &&
        s.creditNotes === expectedSample.creditNotes,
      { timeoutMs: 45_000, what: 'the sample synced' },
    );
    // The files were taken from the drop folder (and archived there), never from examples/.
    expect(readdirSync(join(dir, 'drop')).filter((f) => f.endsWith('.csv'))).toEqual([]);
  }, 90_000);
});
