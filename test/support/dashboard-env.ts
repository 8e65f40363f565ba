import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { openSyncRuntime, syncServiceOf } from '../../src/app/runtime.js';
import { type RunningWorkerDaemon, startWorker } from '../../src/app/worker.js';
import { type LoadedConfig, loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logging/logger.js';
import type { SandboxOverrides } from '../../src/sandbox/options.js';
import { openStateDatabase } from '../../src/state/database.js';
import { launchChromium } from './browser.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from './postgres.js';
import { apiEnvOf, startTestSandbox, type TestSandbox } from './sandbox.js';

/**
 * The configuration of a worker with its dashboard, for a browser test: one CSV source `erp-csv`
 * reading `dropDir`, the sandbox's API, Postgres in `schema` (migrated here, with the migration
 * table in that schema so a concurrent test file's is not taken for ours), the shared Redis, a
 * dashboard on a free port behind `user` / `password`.
 */
export async function dashboardWorkerConfig(props: {
  dir: string;
  dropDir: string;
  schema: string;
  sandbox: TestSandbox;
  user: string;
  password: string;
  /** More of the configuration file, appended as it is (e.g. a `dashboard:` section). */
  yaml?: string;
}): Promise<LoadedConfig> {
  const { dir, dropDir, schema, sandbox } = props;
  const migrated = await openStateDatabase({
    databaseUrl: TEST_DATABASE_URL,
    dataDir: dir,
    schema,
  });
  await migrated.close();

  const configFile = join(dir, 'receivables-sync.yaml');
  writeFileSync(
    configFile,
    `sources:\n  - id: erp-csv\n    type: csv\n    dropDir: ${dropDir}\n    stableSeconds: 0\n${props.yaml ?? ''}`,
  );
  return loadConfig({
    file: configFile,
    env: {
      ...apiEnvOf(sandbox),
      DATABASE_URL: TEST_DATABASE_URL,
      DATABASE_SCHEMA: schema,
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      DASHBOARD_HOST: '127.0.0.1',
      DASHBOARD_PORT: '0',
      DASHBOARD_USER: props.user,
      DASHBOARD_PASSWORD: props.password,
      LOG_LEVEL: 'warn',
    },
  });
}

/** A worker daemon with its dashboard, the sandbox it syncs to, and Chromium: see `startBrowserDashboard`. */
export interface BrowserDashboard {
  dir: string;
  dropDir: string;
  sandbox: TestSandbox;
  daemon: RunningWorkerDaemon;
  /** The dashboard's address. */
  url: string;
  browser: Browser;
  /** Stops all of it and removes its queue, schema and folder. */
  close(): Promise<void>;
}

/**
 * The setting of the dashboard's browser tests: a sandbox (`sandbox`: its overrides), the worker
 * daemon as `worker` starts it (real Redis queue on a prefix of its own, in the configuration as the
 * dashboard reads it; BullMQ worker; Postgres in a schema of its own) with the dashboard behind
 * `user` / `password`, and Chromium. `firstDrop`: files written into the drop folder and synced
 * once (as `sync --once`) before the worker starts.
 */
export async function startBrowserDashboard(props: {
  name: string;
  user: string;
  password: string;
  sandbox?: SandboxOverrides;
  firstDrop?: (dropDir: string) => void;
}): Promise<BrowserDashboard> {
  const logger = createLogger({ level: 'warn' });
  const schema = uniqueSchema(props.name);
  const dir = mkdtempSync(join(tmpdir(), `rs-${props.name}-`));
  const dropDir = join(dir, 'drop');
  mkdirSync(dropDir, { recursive: true });
  const sandbox = await startTestSandbox(props.sandbox);
  const loaded = await dashboardWorkerConfig({
    dir,
    dropDir,
    schema,
    sandbox,
    user: props.user,
    password: props.password,
  });
  if (props.firstDrop) {
    props.firstDrop(dropDir);
    const once = await openSyncRuntime(loaded, logger);
    try {
      await syncServiceOf(once, loaded.config.sources).syncSource('erp-csv', { trigger: 'once' });
    } finally {
      await once.close();
    }
  }
  loaded.config.queue.prefix = `test-${props.name}-${randomBytes(4).toString('hex')}`;
  const daemon = await startWorker(loaded, { logger, settings: { attempts: 1 } });
  const browser = await launchChromium();
  return {
    dir,
    dropDir,
    sandbox,
    daemon,
    url: daemon.dashboard!.url,
    browser,
    async close() {
      await browser.close();
      await daemon.queues.queue.obliterate({ force: true });
      await daemon.close();
      await sandbox.close();
      await dropSchema(schema);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
