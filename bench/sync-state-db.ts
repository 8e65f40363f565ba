/**
 * The state DB's part of `bench:sync`, in processes of their own as `sync --once` runs them
 * (`bench/sync-process.ts`, no sandbox in them): a cold open (a new data folder, or schema) with an
 * empty drop folder, then unchanged re-runs of the bench's state: open + migrate, the pass, the
 * process's peak RSS. With DATABASE_URL set, the whole bench first runs again on Postgres in a
 * child (`BENCH_STATE=postgres`), which leaves its schema here; both kinds are then measured
 * alternately, round after round (the machine's load changes from one minute to the next), and
 * embedded ÷ Postgres is printed from the medians.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { SyncProcessFigures, SyncProcessProps } from './sync-process.js';

const ROUNDS = 5;

type StateProps = Pick<SyncProcessProps, 'databaseUrl' | 'dataDir' | 'schema'>;
type SandboxProps = Pick<SyncProcessProps, 'baseUrl' | 'accessToken' | 'organizationId'>;

export interface MeasureStateDbsProps {
  /** The bench's embedded state (closed: one process at a time). */
  embedded: StateProps;
  /** Its drop folder. */
  dropDir: string;
  sandbox: SandboxProps;
  /** Writes the bench's rows into `folder` again, as new files (the `run`-th time). */
  dropUnchanged(run: number, folder: string): void;
}

/** What one kind measured; re-run figures are medians of {@link ROUNDS} processes. */
export interface StateDbFigures {
  coldOpenMs: number;
  coldOrigin: string | undefined;
  coldPeakRssMb: number;
  reopenMs: number;
  passMs: number;
  peakRssMb: number;
  /** The whole process: node, module loading (through tsx here), open, pass, close. */
  processMs: number;
}

function runProcess(props: SyncProcessProps): SyncProcessFigures & { processMs: number } {
  const started = performance.now();
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, join(import.meta.dirname, 'sync-process.ts')],
    {
      env: { ...process.env, BENCH_SYNC_PROCESS: JSON.stringify(props) },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const processMs = performance.now() - started;
  const last = child.stdout.trim().split('\n').at(-1) ?? '';
  if (child.status !== 0 || !last.startsWith('{'))
    throw new Error(`sync process ended with ${child.status}: ${last}`);
  return { ...(JSON.parse(last) as SyncProcessFigures), processMs };
}

/** This script again with the state in Postgres; its lines are printed; returns its schema. */
function runPostgresBench(): string | null {
  console.log('--- the same passes, state in Postgres (DATABASE_URL, a schema of its own) ---');
  const child = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    env: { ...process.env, BENCH_STATE: 'postgres' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  });
  process.stdout.write(child.stdout);
  const last = child.stdout.trim().split('\n').at(-1) ?? '';
  if (child.status !== 0 || !last.startsWith('{')) return null;
  return (JSON.parse(last) as { postgresSchema: string }).postgresSchema;
}

/** The middle value (the upper one of an even count). */
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Drops the bench's Postgres schemas (also used by bench/cli-pass.ts). */
export async function dropSchemas(url: string, schemas: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

export async function measureStateDbs(props: MeasureStateDbsProps): Promise<void> {
  const url = process.env.DATABASE_URL || null;
  const pgSchema = url ? runPostgresBench() : null;
  const { baseUrl, accessToken, organizationId } = props.sandbox;
  const sandbox = { baseUrl, accessToken, organizationId };
  const scratch = mkdtempSync(join(tmpdir(), 'rs-bench-state-'));
  const kinds: { name: string; state: StateProps; dropDir: string }[] = [
    { name: 'embedded', state: props.embedded, dropDir: props.dropDir },
  ];
  if (url && pgSchema)
    kinds.push({
      name: 'postgres',
      state: { databaseUrl: url, dataDir: scratch, schema: pgSchema },
      dropDir: mkdtempSync(join(scratch, 'drop-')),
    });
  try {
    const cold = kinds.map((kind) => {
      const folder = mkdtempSync(join(scratch, 'cold-'));
      const state = kind.state.schema
        ? { ...kind.state, schema: `${kind.state.schema}_cold` }
        : { ...kind.state, dataDir: folder };
      return runProcess({ ...sandbox, ...state, dropDir: folder });
    });
    const reruns = kinds.map(() => [] as ReturnType<typeof runProcess>[]);
    for (let round = 1; round <= ROUNDS; round++) {
      kinds.forEach((kind, k) => {
        props.dropUnchanged(round, kind.dropDir);
        const figures = runProcess({ ...sandbox, ...kind.state, dropDir: kind.dropDir });
        if (figures.apiCalls !== 0) throw new Error(`an unchanged re-run made ${figures.apiCalls} API calls`);
        reruns[k]!.push(figures);
      });
    }
    const figures = kinds.map((_, k): StateDbFigures => {
      const runs = reruns[k]!;
      return {
        coldOpenMs: cold[k]!.openMs,
        coldOrigin: cold[k]!.origin,
        coldPeakRssMb: cold[k]!.peakRssMb,
        reopenMs: median(runs.map((r) => r.openMs)),
        passMs: median(runs.map((r) => r.passMs)),
        peakRssMb: median(runs.map((r) => r.peakRssMb)),
        processMs: median(runs.map((r) => r.processMs)),
      };
    });
    print(figures[0]!, figures[1], url !== null);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    if (url && pgSchema) await dropSchemas(url, [pgSchema, `${pgSchema}_cold`]);
  }
}

const ms = (value: number) => `${Math.round(value)} ms`;

function print(
  embedded: StateDbFigures,
  postgres: StateDbFigures | undefined,
  askedForPostgres: boolean,
): void {
  console.log(`--- the state DB in processes of their own, as sync --once (medians of ${ROUNDS} rounds) ---`);
  const line = (name: string, f: StateDbFigures, cold: string) => {
    console.log(
      `${name.padEnd(36)}open + migrate: cold ${ms(f.coldOpenMs)} (${cold}, peak RSS ${f.coldPeakRssMb} MB), re-open ${ms(f.reopenMs)}`,
    );
    console.log(
      `${''.padEnd(36)}unchanged re-run: pass ${ms(f.passMs)}, peak RSS ${f.peakRssMb} MB, whole process ${ms(f.processMs)}`,
    );
  };
  line('embedded (PGlite)', embedded, `a new data folder, from the ${embedded.coldOrigin}`);
  console.log(`${''.padEnd(36)}goals: open + migrate <= 300 ms, peak RSS <= 250 MB`);
  if (!postgres) {
    const why = askedForPostgres
      ? 'the Postgres run failed'
      : 'set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test) to measure Postgres too';
    console.log(`embedded ÷ Postgres                 not measured: ${why}`);
    console.log(JSON.stringify({ stateDb: { embedded } }));
    return;
  }
  line('Postgres', postgres, 'a new schema');
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
  console.log(
    `embedded ÷ Postgres                 unchanged re-run, open + pass: ${ratio(embedded.reopenMs + embedded.passMs, postgres.reopenMs + postgres.passMs)} (goal <= 1.5×); pass alone ${ratio(embedded.passMs, postgres.passMs)}; whole process ${ratio(embedded.processMs, postgres.processMs)}`,
  );
  console.log(JSON.stringify({ stateDb: { embedded, postgres } }));
}
