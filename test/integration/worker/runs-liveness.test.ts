import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStateDatabase, type StateDatabase } from '../../../src/state/database.js';
import { lockKey } from '../../../src/state/run-locks.js';
import { RUN_PROCESS_GONE, RUN_SHUT_DOWN, RunsRepository } from '../../../src/state/runs.js';
import { REPO_ROOT } from '../../support/cli.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';
import { eventually } from '../../support/worker-process.js';

/**
 * The runs' liveness locks, in process: a run of a process that is gone (its lock free) is closed
 * as `interrupted` by the next pass of its source; a live one (another pool: another process) is
 * never touched; a shutdown closes this process's runs as `interrupted` / `shut down`.
 */
describe('runs: nothing stays running (Postgres)', () => {
  const schema = uniqueSchema('runs_liveness');
  const open: StateDatabase[] = [];
  const openState = async () => {
    const state = await openStateDatabase({ databaseUrl: TEST_DATABASE_URL, dataDir: '/tmp/unused', schema });
    open.push(state);
    return state;
  };
  const statusOf = async (state: StateDatabase, id: string) =>
    state.db
      .selectFrom('runs')
      .select(['status', 'error', 'finished_at'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();

  afterAll(async () => {
    for (const state of open) {
      await new RunsRepository(state.db).releaseRunLocks();
      await state.close();
    }
    await dropSchema(schema);
  });

  it('when a process holding a run is gone, then the next pass of the source closes it as interrupted, and a live run of another process stays running', async () => {
    const first = await openState(); // one process
    const second = await openState(); // another process (its own pool, its own sessions)
    const a = new RunsRepository(first.db);
    const b = new RunsRepository(second.db);
    a.holdRunLocks();
    b.holdRunLocks();

    const live = await a.start('erp-csv', 'schedule', false);
    const other = await a.start('billing-db', 'schedule', false);
    // Another process's pass of the same source: the live run is left alone.
    const mine = await b.start('erp-csv', 'once', false);
    expect((await statusOf(second, live)).status).toBe('running');
    expect(await b.interruptAbandoned()).toEqual([]);

    // The first process is gone: its session (and the locks it held) ends, its runs stay `running`.
    await a.releaseRunLocks();
    expect((await statusOf(second, live)).status).toBe('running');

    await b.finish(mine, 'succeeded', {});
    const next = await b.start('erp-csv', 'schedule', false);
    expect(await statusOf(second, live)).toMatchObject({ status: 'interrupted', error: RUN_PROCESS_GONE });
    expect((await statusOf(second, live)).finished_at).toBeInstanceOf(Date);
    // Another source's dead run waits for a pass of its source (or the next process to open the runtime).
    expect((await statusOf(second, other)).status).toBe('running');
    expect(await b.interruptAbandoned()).toEqual([other]);
    // This process's own run in progress is never taken for dead.
    expect((await statusOf(second, next)).status).toBe('running');

    expect(await b.interruptInProgress()).toEqual([next]);
    expect(await statusOf(second, next)).toMatchObject({ status: 'interrupted', error: RUN_SHUT_DOWN });
    const running = await second.db.selectFrom('runs').select('id').where('status', '=', 'running').execute();
    expect(running).toEqual([]);
  });

  it('when a pass finishes after its run was closed by a shutdown, then its real outcome is kept', async () => {
    const state = await openState();
    const runs = new RunsRepository(state.db);
    runs.holdRunLocks();
    const id = await runs.start('erp-csv', 'once', false);
    await runs.interruptInProgress();
    await runs.finish(id, 'succeeded', { accounts: { created: 1, updated: 0, unchanged: 0, failed: 0 } });
    expect(await statusOf(state, id)).toMatchObject({ status: 'succeeded', error: null });
  });

  it('when the process holding a run is killed (SIGKILL), then its run is closed as interrupted by the next pass at once', async () => {
    // A child process opens the state DB, starts a run with its lock, prints the id and waits.
    const script = `
      const { openStateDatabase } = await import(${JSON.stringify(join(REPO_ROOT, 'dist/src/state/database.js'))});
      const { RunsRepository } = await import(${JSON.stringify(join(REPO_ROOT, 'dist/src/state/runs.js'))});
      const state = await openStateDatabase({ databaseUrl: ${JSON.stringify(TEST_DATABASE_URL)}, dataDir: '/tmp/unused', schema: ${JSON.stringify(schema)} });
      const runs = new RunsRepository(state.db);
      runs.holdRunLocks();
      console.log(await runs.start('killed-src', 'schedule', false));
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    const id = line.trim();
    const state = await openState();
    const runs = new RunsRepository(state.db);
    runs.holdRunLocks();
    // Alive: left alone.
    expect(await runs.interruptAbandoned('killed-src')).toEqual([]);

    child.kill('SIGKILL');
    await once(child, 'exit');
    // Postgres ends the killed process's session, and its locks with it, once its backend reads the
    // closed socket: a moment after the exit on a busy machine. Free means a try takes it (and the
    // statement's end gives it back), as the next pass's own check does.
    await eventually(
      async () =>
        (
          await sql<{ free: boolean }>`select pg_try_advisory_xact_lock(${lockKey(id)}) as free`.execute(
            state.db,
          )
        ).rows[0]?.free,
      (free) => free === true,
      { timeoutMs: 10_000, what: "the killed process's session ended" },
    );
    const next = await runs.start('killed-src', 'schedule', false);
    expect(await statusOf(state, id)).toMatchObject({ status: 'interrupted', error: RUN_PROCESS_GONE });
    await runs.finish(next, 'succeeded', {});
  });
});

describe('runs: nothing stays running (embedded state DB)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rs-runs-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('when the process before left a run running, then the next pass closes it, and this process’s own runs stay running', async () => {
    const before = await openStateDatabase({ databaseUrl: null, dataDir: dir });
    const left = await new RunsRepository(before.db).start('erp-csv', 'once', false);
    await before.close(); // its process ended without finishing the run

    const state = await openStateDatabase({ databaseUrl: null, dataDir: dir });
    try {
      const runs = new RunsRepository(state.db);
      runs.holdRunLocks();
      const other = await runs.start('billing-db', 'once', false);
      const id = await runs.start('erp-csv', 'once', false);
      const rows = await state.db
        .selectFrom('runs')
        .select(['id', 'status', 'error'])
        .orderBy('id')
        .execute();
      expect(rows.map((r) => ({ ...r, id: String(r.id) }))).toEqual([
        { id: left, status: 'interrupted', error: RUN_PROCESS_GONE },
        { id: other, status: 'running', error: null },
        { id, status: 'running', error: null },
      ]);
      await runs.finish(id, 'partial', {});
      expect(await runs.interruptInProgress()).toEqual([other]);
      expect((await runs.recent()).map((r) => r.status)).toEqual(['partial', 'interrupted', 'interrupted']);
      await runs.releaseRunLocks();
    } finally {
      await state.close();
    }
  });
});
