import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { BIN, REPO_ROOT } from './cli.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from './postgres.js';
import { apiEnvOf, type TestSandbox } from './sandbox.js';

export type StateKind = 'embedded' | 'postgres';

/** A temp folder with a drop folder, a config file and the env that points the CLI at a sandbox. */
export interface SyncEnv {
  dir: string;
  dropDir: string;
  configFile: string;
  env: NodeJS.ProcessEnv;
  cleanup(): Promise<void>;
}

export function syncEnv(sandbox: TestSandbox, state: StateKind, extraYaml = ''): SyncEnv {
  const dir = mkdtempSync(join(tmpdir(), 'rs-sync-'));
  const dropDir = join(dir, 'drop');
  const configFile = join(dir, 'receivables-sync.yaml');
  const schema = state === 'postgres' ? uniqueSchema('sync') : undefined;
  writeFileSync(
    configFile,
    `state:\n  dataDir: ${join(dir, 'data')}\nsources:\n  - id: erp-csv\n    type: csv\n    dropDir: ${dropDir}\n    stableSeconds: 0\n${extraYaml}`,
  );
  const env: NodeJS.ProcessEnv = {
    ...apiEnvOf(sandbox),
    LOG_LEVEL: 'warn',
    DATABASE_URL: schema ? TEST_DATABASE_URL : '',
    DATABASE_SCHEMA: schema ?? '',
    REDIS_URL: '',
  };
  return {
    dir,
    dropDir,
    configFile,
    env,
    async cleanup() {
      if (schema) await dropSchema(schema);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The last stdout line of `sync --once --json`, parsed. */
export function lastJsonLine(stdout: string): any {
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!);
}

/** A query against the env's Postgres schema (the state DB of a `postgres` SyncEnv). */
async function queryState<T extends pg.QueryResultRow>(env: SyncEnv, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return (await client.query<T>(text.replaceAll('$schema', `"${env.env.DATABASE_SCHEMA}"`))).rows;
  } finally {
    await client.end();
  }
}

/** A source's cursor of one stream in the env's state DB (a `postgres` SyncEnv), or null. */
export async function cursorOf(env: SyncEnv, sourceId: string, stream: string): Promise<unknown> {
  const rows = await queryState<{ cursor: unknown }>(
    env,
    `select cursor from $schema.cursors where source_id = '${sourceId.replaceAll("'", "''")}' and stream = '${stream.replaceAll("'", "''")}'`,
  );
  return rows[0]?.cursor ?? null;
}

/** The runs of the env's state DB (not dry runs), oldest first. */
export function runsOf(env: SyncEnv): Promise<Array<{ id: string; status: string; error: string | null }>> {
  return queryState(
    env,
    'select id::text as id, status, error from $schema.runs where dry_run = false order by id',
  );
}

/** How many failures of the env's state DB are open. */
export async function openFailuresOf(env: SyncEnv): Promise<number> {
  const rows = await queryState<{ n: number }>(
    env,
    'select count(*)::int as n from $schema.failures where resolved_at is null',
  );
  return rows[0]!.n;
}

/** `sync --once` (plus `args`) of the built CLI in the background, its stderr kept. */
export function startSyncOnce(
  env: SyncEnv,
  args: string[] = [],
): { child: ChildProcess; stderr: () => string } {
  const child = spawn(process.execPath, [BIN, '--config', env.configFile, 'sync', '--once', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return { child, stderr: () => stderr };
}

/**
 * Waits until the pass is under way (`reached` says so of the sandbox's stats), to inject a fault
 * there; fails when the process ended first.
 */
export async function untilMidPass(
  sandbox: TestSandbox,
  run: { child: ChildProcess; stderr: () => string },
  reached: (stats: { accounts: number; invoices: number }) => boolean,
): Promise<void> {
  for (;;) {
    if (reached(await sandbox.admin('GET', '/stats'))) return;
    if (run.child.exitCode !== null) throw new Error(`the sync ended before the fault: ${run.stderr()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
