import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateDatabase } from '../../../src/state/database.js';
import { EMBEDDED_LOCK_FILE, LOCK_STALE_MS } from '../../../src/state/embedded-lock.js';
import { runCli } from '../../support/cli.js';
import { startEmbeddedHolder } from '../../support/embedded-holder.js';

const ONE_PROCESS = 'the embedded state DB serves one process at a time';

describe('embedded state DB: one process at a time', () => {
  let dir: string;
  let dataDir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rs-lock-'));
    dataDir = join(dir, 'data');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('when a process holds it, then `status` in another process exits 1 naming the folder, the holder and the fix, and runs once it is closed', async () => {
    const configFile = join(dir, 'receivables-sync.yaml');
    // A source, so that status reads the state DB (without one it has nothing to read there).
    writeFileSync(
      configFile,
      `state:\n  dataDir: ${dataDir}\nsources:\n  - id: erp-csv\n    type: csv\n    dropDir: ${join(dir, 'drop')}\n`,
    );
    const env = { DATABASE_URL: '', DATABASE_SCHEMA: '', REDIS_URL: '', LOG_LEVEL: 'warn' };
    const held = await openStateDatabase({ databaseUrl: null, dataDir });
    let refused: Awaited<ReturnType<typeof runCli>>;
    try {
      refused = await runCli(['--config', configFile, 'status'], { env });
    } finally {
      await held.close();
    }
    expect(refused.code).toBe(1);
    const lines = refused.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`the embedded state DB in ${dataDir} is in use by process ${process.pid} (`);
    expect(lines[0]).toContain(`${ONE_PROCESS}: stop it, or use Postgres (DATABASE_URL)`);
    expect(existsSync(join(dataDir, EMBEDDED_LOCK_FILE))).toBe(false);

    const after = await runCli(['--config', configFile, 'status'], { env });
    expect(after.stderr).toBe('');
    expect(after.code).toBe(0);
  });

  it('when another process holds it, then an open here gets STATE_DB_IN_USE; once that process is killed (SIGKILL: its lock stays), the next open takes the stale lock over', async () => {
    const holder = await startEmbeddedHolder(dataDir);
    expect(holder.firstLine).toBe('open');
    try {
      const error = await openStateDatabase({ databaseUrl: null, dataDir }).then(
        (state) => state.close().then(() => null),
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: 'STATE_DB_IN_USE', kind: 'config' });
      expect((error as Error).message).toContain(`in use by process ${holder.child.pid} (embedded-holder.ts`);
    } finally {
      holder.child.kill('SIGKILL');
      await once(holder.child, 'exit');
    }
    expect(existsSync(join(dataDir, EMBEDDED_LOCK_FILE))).toBe(true);

    const state = await openStateDatabase({ databaseUrl: null, dataDir });
    try {
      await state.db.insertInto('sources').values({ id: 'erp-csv', type: 'csv' }).execute();
      // A second open in this process while the first is open is refused as well.
      await expect(openStateDatabase({ databaseUrl: null, dataDir })).rejects.toMatchObject({
        code: 'STATE_DB_IN_USE',
      });
      const child = await startEmbeddedHolder(dataDir);
      expect(JSON.parse(child.firstLine)).toMatchObject({ code: 'STATE_DB_IN_USE' });
      expect(JSON.parse(child.firstLine).message).toContain(`in use by process ${process.pid}`);
    } finally {
      await state.close();
    }
    expect(existsSync(join(dataDir, EMBEDDED_LOCK_FILE))).toBe(false);
  });

  it('when the lock file is unreadable (cut short), then it is stale and the open succeeds', async () => {
    const first = await openStateDatabase({ databaseUrl: null, dataDir });
    await first.close();
    writeFileSync(join(dataDir, EMBEDDED_LOCK_FILE), '{"pid":');
    const state = await openStateDatabase({ databaseUrl: null, dataDir });
    await state.close();
  });

  it('when the lock is of another host (a container recreated on the same volume), then it stands while touched, and is stale once not touched for a minute', async () => {
    const first = await openStateDatabase({ databaseUrl: null, dataDir });
    await first.close();
    const lock = join(dataDir, EMBEDDED_LOCK_FILE);
    writeFileSync(lock, `${JSON.stringify({ pid: 4242, host: 'gone-container', command: 'worker' })}\n`);
    await expect(openStateDatabase({ databaseUrl: null, dataDir })).rejects.toThrow(
      /in use by process 4242 on gone-container \(worker\).*lapses 60 s after its last sign of life/,
    );
    const longAgo = new Date(Date.now() - LOCK_STALE_MS - 5_000);
    utimesSync(lock, longAgo, longAgo);
    const state = await openStateDatabase({ databaseUrl: null, dataDir });
    await state.close();
  });
});
