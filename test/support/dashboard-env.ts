import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type LoadedConfig, loadConfig } from '../../src/config/load.js';
import { openStateDatabase } from '../../src/state/database.js';
import { TEST_DATABASE_URL } from './postgres.js';
import { apiEnvOf, type TestSandbox } from './sandbox.js';

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
