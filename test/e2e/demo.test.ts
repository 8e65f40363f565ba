import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, runCli } from '../support/cli.js';

/** The README's quick start: `npm run demo`, then a look at what it recorded. */
describe('demo', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'rs-demo-'));
  afterAll(() => rmSync(cwd, { recursive: true, force: true }));
  // The user's own settings must not leak into the demo (it always runs on its embedded DB).
  const env = {
    DATABASE_URL: 'postgres://127.0.0.1:1/nowhere',
    RECEIVABLES_SYNC_CONFIG: '',
    LOG_LEVEL: 'warn',
  };

  it('when demo runs, then the sample syncs twice, the second pass writes nothing, and status reads its runs from the file it names', async () => {
    const demo = await runCli(['demo'], { cwd, env });
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stdout).toMatch(/== First pass: everything is new/);
    expect(demo.stdout).toMatch(/== Second pass: the same data dropped again/);
    // What examples/drop holds, each once: the second pass added nothing.
    expect(demo.stdout).toContain('The sandbox now holds 8 accounts, 12 invoices and 3 credit notes.');
    // The command as it can be run here: node and the script (this test runs no link on the PATH).
    const hint = /What it recorded \(its runs, cursors, failures\): node (\S+) --config (\S+) status/.exec(
      demo.stdout,
    );
    expect(hint?.[1]).toBe(BIN);
    expect(hint?.[2]).toBe(join('data', 'demo', 'receivables-sync.yaml'));

    const status = await runCli(['--config', hint?.[2] ?? '', 'status', '--json'], {
      cwd,
      env: { ...env, DATABASE_URL: '' },
    });
    expect(status.code, status.stderr).toBe(0);
    const [source] = JSON.parse(status.stdout).sources;
    expect(source.id).toBe('erp-csv');
    expect(source.lastRun).toMatchObject({ trigger: 'demo', status: 'succeeded' });
    const counts = Object.values(source.lastRun.counts) as Array<Record<string, number>>;
    expect(counts.length).toBeGreaterThan(0);
    for (const kind of counts) expect(kind).toMatchObject({ created: 0, updated: 0, failed: 0 });
    expect(counts.reduce((sum, kind) => sum + (kind.unchanged ?? 0), 0)).toBeGreaterThan(0);
  });

  it("when status runs where the demo ran, with no configuration, then it says none was found and points to the demo's, and makes no state DB", async () => {
    const status = await runCli(['status'], { cwd, env: { ...env, DATABASE_URL: '' } });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^No source is configured: no configuration file was found/);
    expect(status.stdout).toContain(
      `The demo keeps its own configuration: node ${BIN} --config ${join('data', 'demo', 'receivables-sync.yaml')} status`,
    );
    expect(existsSync(join(cwd, 'data', 'state-db'))).toBe(false);
    // A source asked for by name is still an error when there is none.
    const named = await runCli(['status', '--source', 'billing'], { cwd, env: { ...env, DATABASE_URL: '' } });
    expect(named.code).toBe(1);
    expect(named.stderr).toMatch(/no source "billing" in the configuration/);
  });
});
