import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { parseDecimal } from '../../src/domain/decimal.js';
import type { DateParts } from '../../src/domain/records.js';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { cursorOf, lastJsonLine, type SyncEnv, syncEnv } from '../support/sync-env.js';

/**
 * Singer taps synced with configuration alone. test/fixtures/singer holds a fixture tap replaying
 * what tap-stripe, tap-quickbooks and tap-xero write (their schemas from the taps' repositories;
 * see each SOURCE.md), the `source.yaml` that maps each, and `expected.json`, what the service
 * holds after a correct sync. Each tap runs in two waves: the second, given the STATE of the first,
 * brings a new customer, its invoice, and a payment on an invoice of the first.
 */
const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'singer');
const TAP = join(FIXTURES, 'tap.mjs');

interface Expected {
  accounts: Array<{
    sourceId: string;
    fullName: string;
    currencyCode: string;
    billingAddress?: Record<string, string | null> | null;
    wave: number;
  }>;
  invoices: Array<{
    sourceId: string;
    accountSourceId: string;
    number: string;
    issuedDate: string;
    dueDate: string;
    totalAmount: string;
    taxAmount: string;
    paidAmount: string | null;
    wave: number;
    afterWave1?: { paidAmount?: string | null };
  }>;
  creditNotes: Array<{
    sourceId: string;
    accountSourceId: string;
    number: string;
    issuedDate: string;
    totalAmount: string;
    taxAmount: string;
    wave: number;
  }>;
  counts: { afterWave1: { skippedRecords: number } };
}

const same = (a: string | null | undefined, b: string | null | undefined): boolean =>
  a === b || (a != null && b != null && parseDecimal(a) === parseDecimal(b));
const iso = (d: DateParts | null): string | null =>
  d === null ? null : `${d.year}-${String(d.month).padStart(2, '0')}-${String(d.day).padStart(2, '0')}`;
const zero = { created: 0, updated: 0, failed: 0 };

/** The fixture's source.yaml as a source of `env`, the tap run with this Node, its config a copy in `env`. */
function configureTap(env: SyncEnv, tap: string, extra: Record<string, unknown> = {}): string {
  const source = parseYaml(readFileSync(join(FIXTURES, tap, 'source.yaml'), 'utf8')) as Record<
    string,
    unknown
  >;
  const tapConfig = join(env.dir, `${tap}.json`);
  writeFileSync(
    env.configFile,
    stringifyYaml({
      state: { dataDir: join(env.dir, 'data') },
      sources: [{ ...source, command: [process.execPath, TAP], config: tapConfig, cwd: REPO_ROOT, ...extra }],
    }),
  );
  return tapConfig;
}

/** A tap config of the fixture (`config.wave1.json`, `config.json`) with changes, at `file`. */
function tapConfig(file: string, tap: string, name: string, changes: Record<string, unknown> = {}): void {
  const config = JSON.parse(readFileSync(join(FIXTURES, tap, name), 'utf8'));
  writeFileSync(file, JSON.stringify({ ...config, quiet: true, ...changes }));
}

function heldBy(sandbox: TestSandbox, connectionId: string) {
  const store = sandbox.deps.store;
  const accounts = [...store.accounts.values()].filter((a) => a.source?.connectionId === connectionId);
  const ids = new Map(accounts.map((a) => [a.id, a.source!.sourceId]));
  const documents = [...store.documents.values()].filter((d) => ids.has(d.accountId) && d.sourceId);
  return { accounts, documents, accountKeyOf: (id: string) => ids.get(id) };
}

/** Every expected record is in the sandbox as expected.json says (after `wave`), nothing more. */
function expectHeld(sandbox: TestSandbox, connectionId: string, expected: Expected, wave: 1 | 2): void {
  const { accounts, documents, accountKeyOf } = heldBy(sandbox, connectionId);
  const upTo = <T extends { wave: number }>(list: T[]) => list.filter((r) => r.wave <= wave);
  for (const want of upTo(expected.accounts)) {
    const got = accounts.find((a) => a.source?.sourceId === want.sourceId);
    expect(got, `account ${want.sourceId}`).toBeDefined();
    expect({ fullName: got!.fullName, currencyCode: got!.currencyCode }, want.sourceId).toEqual({
      fullName: want.fullName,
      currencyCode: want.currencyCode,
    });
    if (want.billingAddress)
      expect(got!.billingAddress, `address of ${want.sourceId}`).toMatchObject(want.billingAddress);
  }
  expect(accounts).toHaveLength(upTo(expected.accounts).length);
  for (const want of upTo(expected.invoices)) {
    const where = `invoice ${want.sourceId}`;
    const got = documents.find((d) => d.kind === 'invoice' && d.sourceId === want.sourceId);
    expect(got, where).toBeDefined();
    expect(got!.number, where).toBe(want.number);
    expect(accountKeyOf(got!.accountId), where).toBe(want.accountSourceId);
    expect(iso(got!.issuedDate), where).toBe(want.issuedDate);
    expect(iso(got!.dueDate), where).toBe(want.dueDate);
    expect(same(got!.totalAmount, want.totalAmount), `${where} total ${got!.totalAmount}`).toBe(true);
    expect(same(got!.taxAmount, want.taxAmount), `${where} tax ${got!.taxAmount}`).toBe(true);
    const paid =
      wave === 1 && want.afterWave1 && 'paidAmount' in want.afterWave1
        ? want.afterWave1.paidAmount
        : want.paidAmount;
    expect(same(got!.paidAmount, paid ?? '0'), `${where} paid ${got!.paidAmount}`).toBe(true);
  }
  for (const want of upTo(expected.creditNotes)) {
    const where = `credit note ${want.sourceId}`;
    const got = documents.find((d) => d.kind === 'creditNote' && d.sourceId === want.sourceId);
    expect(got, where).toBeDefined();
    expect(got!.number, where).toBe(want.number);
    expect(accountKeyOf(got!.accountId), where).toBe(want.accountSourceId);
    expect(iso(got!.issuedDate), where).toBe(want.issuedDate);
    expect(same(got!.totalAmount, want.totalAmount), `${where} total ${got!.totalAmount}`).toBe(true);
    expect(same(got!.taxAmount, want.taxAmount), `${where} tax ${got!.taxAmount}`).toBe(true);
  }
  expect(documents.filter((d) => d.kind === 'invoice')).toHaveLength(upTo(expected.invoices).length);
  expect(documents.filter((d) => d.kind === 'creditNote')).toHaveLength(upTo(expected.creditNotes).length);
}

const expectedOf = (tap: string) =>
  JSON.parse(readFileSync(join(FIXTURES, tap, 'expected.json'), 'utf8')) as Expected;

describe('Singer taps, synced with configuration alone', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
  });
  afterAll(() => sandbox?.close());

  describe.each(['stripe', 'quickbooks', 'xero'])('%s, run by the source in two waves', (tap) => {
    let env: SyncEnv;
    let configFile: string;
    const expected = expectedOf(tap);
    const sync = async () => {
      const result = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
      return { ...result, json: lastJsonLine(result.stdout) };
    };
    // Read in the state DB (what `status` shows as the `state` stream), without a CLI process.
    const cursor = () => cursorOf(env, tap, 'state');
    const created = (wave: number, list: Array<{ wave: number }>) =>
      list.filter((r) => r.wave === wave).length;

    beforeAll(() => {
      env = syncEnv(sandbox, 'postgres');
      configFile = configureTap(env, tap);
    });
    afterAll(() => env?.cleanup());

    it('when the tap first runs, then its records are in the service as expected, the skipped counted, its last STATE stored', async () => {
      tapConfig(configFile, tap, 'config.wave1.json');
      const result = await sync();
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.json.accounts).toMatchObject({ ...zero, created: created(1, expected.accounts) });
      expect(result.json.invoices).toMatchObject({ ...zero, created: created(1, expected.invoices) });
      expect(result.json.creditNotes).toMatchObject({ ...zero, created: created(1, expected.creditNotes) });
      expect(result.json.skippedRows).toBe(expected.counts.afterWave1.skippedRecords);
      expectHeld(sandbox, tap, expected, 1);
      expect(await cursor()).not.toBeNull();
    });

    it('when the tap runs again from that STATE, then only the new and changed records are written, and the STATE moves on', async () => {
      const before = await cursor();
      tapConfig(configFile, tap, 'config.json');
      const result = await sync();
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.json.accounts).toMatchObject({ ...zero, created: created(2, expected.accounts) });
      expect(result.json.invoices).toMatchObject({
        failed: 0,
        created: created(2, expected.invoices),
        updated: 1,
      });
      expect(result.json.creditNotes).toMatchObject(zero);
      expectHeld(sandbox, tap, expected, 2);
      const after = await cursor();
      expect(after).not.toEqual(before);
    });

    it('when it runs once more, then nothing is written', async () => {
      const result = await sync();
      expect(result.code, result.stderr).toBe(0);
      for (const kind of ['accounts', 'invoices', 'creditNotes'] as const)
        expect(result.json[kind], kind).toMatchObject(zero);
      expectHeld(sandbox, tap, expected, 2);
    });

    // One tap is enough to show the reset (each case costs a full re-read).
    it.runIf(tap === 'stripe')(
      'when its cursor is reset, then the tap reads everything again from its start, and nothing is written',
      async () => {
        const reset = await runCli(
          ['--config', env.configFile, 'status', 'reset-cursor', '--source', tap, '--stream', 'state'],
          { env: env.env },
        );
        expect(reset.code, reset.stderr).toBe(0);
        expect(await cursor()).toBeNull();
        const result = await sync();
        expect(result.code, result.stderr).toBe(0);
        // From its start the tap replays both of its runs: the invoice paid in the second comes in
        // its older version first. In one batch the later wins (nothing written); split over two
        // batches (a STATE between them flushes a batch open for a second, under load) it is
        // written back and then forward again: at most those two writes, nothing created.
        expect(result.json.accounts).toMatchObject({ ...zero, unchanged: expected.accounts.length });
        expect(result.json.invoices).toMatchObject({ created: 0, failed: 0 });
        expect(result.json.invoices.updated).toBeLessThanOrEqual(2);
        expect(result.json.creditNotes).toMatchObject(zero);
        expectHeld(sandbox, tap, expected, 2);
        expect(await cursor()).not.toBeNull();
      },
    );
  });
});

/** The fixture tap's whole output for a config (no state): its lines. */
async function tapOutput(config: string): Promise<string> {
  const child = spawn(process.execPath, [TAP, '--config', config], { cwd: REPO_ROOT });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  await new Promise((resolve) => child.once('close', resolve));
  return out;
}

const lastState = (output: string): unknown =>
  output
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l))
    .filter((m) => m.type === 'STATE')
    .at(-1)?.value;

describe('receivables-sync target, fed a tap on stdin', () => {
  let sandbox: TestSandbox;
  let env: SyncEnv;
  const expected = expectedOf('xero');
  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
    env = syncEnv(sandbox, 'postgres');
    const {
      command: _c,
      config: _f,
      ...source
    } = parseYaml(readFileSync(join(FIXTURES, 'xero', 'source.yaml'), 'utf8')) as Record<string, unknown>;
    writeFileSync(
      env.configFile,
      stringifyYaml({
        state: { dataDir: join(env.dir, 'data') },
        sources: [{ ...source, id: 'xero-target' }],
      }),
    );
  });
  afterAll(async () => {
    await env?.cleanup();
    await sandbox?.close();
  });

  it("when a tap's output is piped in, then its records are synced and each STATE is echoed on stdout, the last one the tap's", async () => {
    const config = join(env.dir, 'tap.json');
    tapConfig(config, 'xero', 'config.json');
    const output = await tapOutput(config);
    const result = await runCli(['--config', env.configFile, 'target'], { env: env.env, input: output });
    expect(result.code, result.stderr).toBe(0);
    const states = result.stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l));
    expect(states.length).toBeGreaterThan(0);
    expect(states.at(-1)).toEqual(lastState(output));
    // Progress and the summary are on stderr, stdout holds the STATEs alone.
    // Without a STATE the tap writes both of its runs: the invoice paid in the second comes twice.
    expect(result.stderr).toMatch(/invoices\s+created 11, updated [01], unchanged \d+, failed 0/);
    expectHeld(sandbox, 'xero-target', expected, 2);
  });

  it('when Meltano runs target-receivables with its settings file, then the same input writes nothing more and ends with the same STATE', async () => {
    const config = join(env.dir, 'tap.json');
    const output = await tapOutput(config);
    const settings = join(env.dir, 'meltano-settings.json');
    writeFileSync(settings, JSON.stringify({ config_file: env.configFile, source: 'xero-target' }));
    const result = await runCli(['--config', settings], {
      env: env.env,
      input: output,
      bin: join(REPO_ROOT, 'bin', 'target-receivables.js'),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n').at(-1)).toBe(JSON.stringify(lastState(output)));
    expect(result.stderr).toMatch(/accounts\s+created 0, updated 0/);
    expect(result.stderr).toMatch(/invoices\s+created 0, updated 0/);
    expectHeld(sandbox, 'xero-target', expected, 2);
  });

  it('when a line of the input is not a Singer message, then it exits 1 naming the line, and echoes no STATE after it', async () => {
    const config = join(env.dir, 'tap-garbage.json');
    tapConfig(config, 'xero', 'config.json', { garbageAfter: 10 });
    const output = await tapOutput(config);
    const result = await runCli(['--config', env.configFile, 'target'], { env: env.env, input: output });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/line 11 of the tap's output is not JSON/);
    const lines = output.split('\n');
    const stateBefore = lines.slice(0, 10).filter((l) => l.includes('"STATE"')).length;
    expect(result.stdout.split('\n').filter((l) => l !== '').length).toBeLessThanOrEqual(stateBefore);
  });
});

describe('a tap that fails, hangs or writes a broken line', () => {
  let sandbox: TestSandbox;
  let env: SyncEnv;
  let configFile: string;
  const expected = expectedOf('stripe');
  const sync = async () => {
    const result = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
    return { ...result, json: lastJsonLine(result.stdout) };
  };
  const cursor = () => cursorOf(env, 'stripe', 'state');
  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
    env = syncEnv(sandbox, 'postgres');
    configFile = configureTap(env, 'stripe', { timeoutSeconds: 2, batchSize: 3 });
  });
  afterAll(async () => {
    await env?.cleanup();
    await sandbox?.close();
  });

  it('when the tap is killed mid-stream, then the pass fails naming it, the cursor stays unset; the next pass completes, nothing twice', async () => {
    // The tap writes every invoice before the customers: after 20 records, 6 customers came, and
    // the invoices that waited for them went with them; the others were still waiting.
    tapConfig(configFile, 'stripe', 'config.json', { killSelfAfter: 20 });
    const killed = await sync();
    expect(killed.code).toBe(1);
    expect(killed.stderr).toMatch(/the tap was killed \(SIGKILL\)/);
    expect(await cursor()).toBeNull();
    // Some of what came before the kill was synced: it is not written again.
    const before = heldBy(sandbox, 'stripe').documents.length;
    expect(before).toBeGreaterThan(0);

    tapConfig(configFile, 'stripe', 'config.json');
    const resumed = await sync();
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.json.invoices.created + before).toBeGreaterThanOrEqual(expected.invoices.length);
    expectHeld(sandbox, 'stripe', expected, 2);
    expect(await cursor()).not.toBeNull();
  });

  it('when the tap hangs or writes a line that is not JSON, then the pass fails saying so and the cursor does not move', async () => {
    const stored = await cursor();
    // From the stored STATE the tap has little left to write: it hangs after its first SCHEMA.
    tapConfig(configFile, 'stripe', 'config.json', { hangAfter: 1 });
    const hung = await sync();
    expect(hung.code).toBe(1);
    expect(hung.stderr).toMatch(/the tap wrote nothing for 2 s \(timeoutSeconds\) and was stopped/);
    expect(await cursor()).toEqual(stored);

    tapConfig(configFile, 'stripe', 'config.json', {
      garbageAfter: 4,
      garbageLine: 'Traceback (most recent call last):',
    });
    const broken = await sync();
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(
      /line \d+ of the tap's output is not JSON .*Traceback \(most recent call last\):/,
    );
    expect(await cursor()).toEqual(stored);
    expectHeld(sandbox, 'stripe', expected, 2);
  });
});
