import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import {
  ACCOUNT_HEADER,
  accountRow,
  dropCsv,
  INVOICE_HEADER,
  invoiceRow,
  range,
} from '../support/drop-data.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { type SyncEnv, syncEnv } from '../support/sync-env.js';

/**
 * What the short commands load: the worker's modules (BullMQ, Redis, the dashboard's server and
 * its queue board, metrics) and the PDF renderer cost a process about 0.3 s and 40 MB to load, so
 * `status` and `sync --once` load them only when they use them. A module hook
 * (test/support/footprint-hook.mjs) records the packages each CLI process loads.
 */
const HOOK = join(import.meta.dirname, '..', 'support', 'footprint-hook.mjs');
const WORKER_ONLY = ['bullmq', 'ioredis', 'fastify', '@bull-board/api', 'prom-client', 'node-cron'];

describe('the packages a CLI command loads', () => {
  let sandbox: TestSandbox;
  let env: SyncEnv;
  let hookDir: string;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    env = syncEnv(sandbox, 'embedded');
    hookDir = mkdtempSync(join(tmpdir(), 'rs-footprint-'));
  });
  afterAll(async () => {
    await env.cleanup();
    await sandbox.close();
    rmSync(hookDir, { recursive: true, force: true });
  });

  const loadedBy = async (args: string[]) => {
    const file = join(hookDir, `${args.join('-')}-${Date.now()}.txt`);
    writeFileSync(file, '');
    const result = await runCli(['--config', env.configFile, ...args], {
      env: { ...env.env, NODE_OPTIONS: `--import ${HOOK}`, FOOTPRINT_FILE: file },
    });
    expect(result.code, result.stderr).toBe(0);
    return new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean));
  };

  it("when status runs, then none of the worker's packages nor the PDF renderer is loaded", async () => {
    const loaded = await loadedBy(['status']);
    expect(loaded.has('kysely'), 'the hook saw the state DB being loaded').toBe(true);
    expect(WORKER_ONLY.filter((name) => loaded.has(name))).toEqual([]);
    expect(loaded.has('pdfkit')).toBe(false);
  });

  it("when sync --once creates accounts, then the worker's packages stay unloaded; the PDF renderer loads for invoices without a file", async () => {
    dropCsv(
      env.dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1, 3).map((i) => accountRow(i)),
    );
    const accountsOnly = await loadedBy(['sync', '--once']);
    expect(WORKER_ONLY.filter((name) => accountsOnly.has(name))).toEqual([]);
    expect(accountsOnly.has('pdfkit')).toBe(false);

    dropCsv(env.dropDir, 'invoices.csv', INVOICE_HEADER, [invoiceRow(1, 1)]);
    const withInvoice = await loadedBy(['sync', '--once']);
    expect(withInvoice.has('pdfkit')).toBe(true);
    expect(WORKER_ONLY.filter((name) => withInvoice.has(name))).toEqual([]);
  });
});
