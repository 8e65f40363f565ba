import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { composeService } from '../support/compose-file.js';
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
 * with its environment and volumes as compose would resolve them from a trial's `.env` (the
 * sandbox profile, as .env.example says), each host of the stack mapped to a local one (its
 * Postgres, Redis and sandbox), the image's `/app` to the repository, the `data` volume to a temp
 * folder. It must start and sync the sample drop folder copied into its drop folder, as
 * `docker compose --profile sandbox up` would.
 */

/** What a trial's `.env` holds: the required secrets, and the trial lines of .env.example. */
const TRIAL_ENV = {
  DASHBOARD_PASSWORD: 'compose-test-password',
  POSTGRES_PASSWORD: 'compose-test-db-password',
  RECEIVABLES_TOKEN_KEY: Buffer.alloc(32, 7).toString('base64'),
  RECEIVABLES_BASE_URL: 'http://sandbox:4010',
  RECEIVABLES_ACCESS_TOKEN: 'sandbox-dev-token',
};

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
    expect(() => composeService('worker', { ...TRIAL_ENV, DASHBOARD_PASSWORD: undefined })).toThrowError(
      /set DASHBOARD_PASSWORD in \.env/,
    );
  });

  it('when .env.example is followed for a trial, then its lines are the ones this test runs with', () => {
    const example = readFileSync(join(REPO_ROOT, '.env.example'), 'utf8');
    expect(example).toContain(`# RECEIVABLES_BASE_URL=${TRIAL_ENV.RECEIVABLES_BASE_URL}`);
    expect(example).toContain(`# RECEIVABLES_ACCESS_TOKEN=${TRIAL_ENV.RECEIVABLES_ACCESS_TOKEN}`);
    for (const name of Object.keys(TRIAL_ENV)) expect(example).toMatch(new RegExp(`^#? ?${name}=`, 'm'));
  });

  it('when it runs with its environment and volumes mapped to local ones, then it syncs the sample drop folder', async () => {
    const shell = TRIAL_ENV;
    // The sandbox service, started with its own command's token.
    const sandboxCommand = composeService('sandbox', shell).command;
    const accessToken = sandboxCommand[sandboxCommand.indexOf('--access-token') + 1]!;
    sandbox = await startTestSandbox({ accessToken, rateLimit: { quota: 100_000, windowSeconds: 60 } });
    const service = composeService('worker', shell);
    expect(service.environment.RECEIVABLES_ACCESS_TOKEN).toBe(accessToken);

    // Volumes: a bind mount's host side resolved from the repository, a named volume (the `data`
    // volume), each here a folder of the test's.
    const hostOf = new Map<string, string>();
    for (const volume of service.volumes) {
      const [host, container] = volume.split(':') as [string, string];
      if (/^[./]/.test(host)) {
        expect(resolve(REPO_ROOT, host)).toBe(join(REPO_ROOT, 'drop')); // DROP_DIR's default
        hostOf.set(container, join(dir, 'drop'));
      } else {
        expect([host, container]).toEqual(['data', '/app/data']);
        hostOf.set(container, join(dir, 'data'));
      }
    }
    expect([...hostOf.keys()].sort()).toEqual(['/app/data', '/app/drop']);
    mkdirSync(join(dir, 'drop'));
    cpSync(join(REPO_ROOT, 'examples', 'drop'), join(dir, 'drop'), { recursive: true });

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
