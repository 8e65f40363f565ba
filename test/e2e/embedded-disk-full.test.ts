import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { dropAccountsAndInvoices } from '../support/drop-data.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { type SyncEnv, startSyncOnce, syncEnv, untilMidPass } from '../support/sync-env.js';

/**
 * The embedded state DB on a disk that fills up: its data folder is a tmpfs of 128 MB of its own
 * (the machine's CI runs as root; `mount` is how the fault is made). A ballast file eats the space
 * mid-pass; PGlite would hang on the full disk, so the pass must stop before it: exit 1 saying
 * "disk full", the files back in the drop folder, and the next pass, with space again, syncs every
 * row exactly once.
 */
describe('the embedded state DB when its disk fills up', () => {
  let sandbox: TestSandbox;
  let env: SyncEnv;
  let dataDir: string;
  const ballast = () => join(dataDir, '..', 'ballast');
  const freeMb = () => {
    const s = statfsSync(dataDir);
    return (s.bavail * s.bsize) / 1024 / 1024;
  };
  /** Fills the disk until `leaveMb` is free. */
  const fill = (leaveMb: number) => {
    const mb = Math.floor(freeMb() - leaveMb);
    if (mb > 0) writeFileSync(ballast(), Buffer.alloc(mb * 1024 * 1024));
  };

  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
    env = syncEnv(sandbox, 'embedded');
    const disk = join(env.dir, 'disk');
    mkdirSync(disk);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=128m', 'tmpfs', disk]);
    dataDir = join(disk, 'data');
    writeFileSync(
      env.configFile,
      `state:\n  dataDir: ${dataDir}\n  minFreeMb: 24\nsources:\n  - { id: erp-csv, type: csv, dropDir: ${env.dropDir}, stableSeconds: 0 }\n`,
    );
  });
  afterAll(async () => {
    if (dataDir) execFileSync('umount', ['-l', join(dataDir, '..')]);
    await env?.cleanup();
    await sandbox?.close();
  });

  it('when the disk has less free than minFreeMb, then sync --once stops at once saying so, touching nothing', async () => {
    mkdirSync(dataDir, { recursive: true });
    fill(10);
    dropAccountsAndInvoices(env.dropDir, 5, 10);
    const result = await runCli(['--config', env.configFile, 'sync', '--once'], { env: env.env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/disk full: [\d.]+ MB free in .*data, the embedded state DB needs 24 MB/);
    expect(readdirSync(env.dropDir).sort()).toEqual(['accounts.csv', 'invoices.csv']);
    expect((await sandbox.admin('GET', '/stats')).accounts).toBe(0);
    rmSync(ballast());
  });

  it('when the disk fills up mid-pass, then the pass stops before the next batch and exits; the next pass syncs every row once', async () => {
    dropAccountsAndInvoices(env.dropDir, 20, 700);
    const run = startSyncOnce(env);
    await untilMidPass(sandbox, run, (stats) => stats.invoices > 0);
    fill(12);
    const [code] = (await once(run.child, 'exit')) as [number];
    expect(code, run.stderr()).toBe(1);
    expect(run.stderr()).toMatch(/disk full: [\d.]+ MB free in/);
    // The first test's files were replaced by these (same names). The file it was reading went back to the drop folder; nothing is left claimed.
    expect(readdirSync(env.dropDir)).toContain('invoices.csv');
    const stopped = (await sandbox.admin('GET', '/stats')).invoices;
    expect(stopped).toBeLessThan(700);

    rmSync(ballast());
    const healed = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
    expect(healed.code, healed.stderr).toBe(0);
    expect(await sandbox.admin('GET', '/stats')).toMatchObject({ accounts: 20, invoices: 700 });
    expect(readdirSync(env.dropDir).filter((f) => f.endsWith('.csv'))).toEqual([]);
  });
});
