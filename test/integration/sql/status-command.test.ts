import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CliError } from '../../../src/cli/errors.js';
import { statusCommand } from '../../../src/cli/status-command.js';
import { CursorsRepository } from '../../../src/state/cursors.js';
import { openStateDatabase, type StateDatabase } from '../../../src/state/database.js';
import { FailuresRepository } from '../../../src/state/failures.js';
import { RunsRepository } from '../../../src/state/runs.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';

const keyset = (ts: string, id: string) => ({
  kind: 'keyset',
  columns: ['updated_at', 'id'],
  values: [ts, id],
});

describe('receivables-sync status', () => {
  let dir: string;
  let configFile: string;
  let schema: string;
  let state: StateDatabase;
  let cursors: CursorsRepository;

  /** Runs `status ...` as the program would, returning what it printed on stdout. */
  const status = async (...args: string[]): Promise<string> => {
    const program = new Command('receivables-sync')
      .option('-c, --config <file>')
      .addCommand(statusCommand())
      .exitOverride();
    const out: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
    try {
      await program.parseAsync(['--config', configFile, 'status', ...args], { from: 'user' });
    } finally {
      spy.mockRestore();
    }
    return out.join('');
  };

  beforeAll(async () => {
    schema = uniqueSchema('status');
    dir = mkdtempSync(join(tmpdir(), 'rs-status-'));
    configFile = join(dir, 'receivables-sync.yaml');
    writeFileSync(
      configFile,
      [
        'log:',
        '  level: silent',
        'state:',
        `  databaseUrl: ${TEST_DATABASE_URL}`,
        `  schema: ${schema}`,
        'sources:',
        '  - id: billing-db',
        '    type: sql',
        '    urlEnv: BILLING_DATABASE_URL',
        '    schedule: "*/10 * * * *"',
        '    streams:',
        '      accounts: { query: "select 1" }',
        '      invoices: { query: "select 1" }',
        '      creditNotes: { query: "select 1" }',
        '  - id: erp-csv',
        '    type: csv',
        `    dropDir: ${join(dir, 'drop')}`,
        '',
      ].join('\n'),
    );
    state = await openStateDatabase({ databaseUrl: TEST_DATABASE_URL, dataDir: dir, schema });
    cursors = new CursorsRepository(state.db);
    await cursors.set('billing-db', 'accounts', keyset('2026-01-15 09:30:00.123456+00', '42'));
    await cursors.set('billing-db', 'invoices', keyset('2026-01-15 09:31:00+00', '7'));
    await cursors.set('billing-db', 'creditNotes', keyset('2026-01-14 00:00:00+00', '3'));
    const runs = new RunsRepository(state.db);
    const runId = await runs.start('billing-db', 'schedule', false);
    const counts = { created: 2, updated: 1, unchanged: 97, failed: 1 };
    await runs.finish(runId, 'partial', {
      accounts: counts,
      invoices: { ...counts, created: 5 },
      creditNotes: { created: 0, updated: 0, unchanged: 0, failed: 0 },
    });
    const failures = new FailuresRepository(state.db);
    for (const key of ['INV-1', 'INV-2']) {
      await failures.record({
        sourceId: 'billing-db',
        kind: 'invoice',
        sourceKey: key,
        stage: 'create',
        message: 'refused',
        retryable: false,
      });
    }
  });
  afterAll(async () => {
    await state?.close();
    await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  it('when the configuration has several connections, then each source shows its connection and organization, in text and JSON', async () => {
    const org = '6f1c1f43-8a43-4c6e-9a1e-2f0c6f0b8d11';
    const other = '0b7c9a52-3d7e-4b8f-a1c2-5e6f7a8b9c0d';
    const scoped = join(dir, 'scoped.yaml');
    writeFileSync(
      scoped,
      [
        'log:',
        '  level: silent',
        'state:',
        `  databaseUrl: ${TEST_DATABASE_URL}`,
        `  schema: ${schema}`,
        'connections:',
        `  - { id: acme, baseUrl: https://acme.example.com, accessTokenEnv: ACME_AT, organizationId: ${org} }`,
        'sources:',
        `  - { id: eu-csv, type: csv, dropDir: ${join(dir, 'eu')}, connection: acme }`,
        `  - { id: us-csv, type: csv, dropDir: ${join(dir, 'us')}, connection: acme, organizationId: ${other} }`,
        `  - { id: erp-csv, type: csv, dropDir: ${join(dir, 'drop')} }`,
        '',
      ].join('\n'),
    );
    const previous = configFile;
    configFile = scoped;
    try {
      const text = await status();
      expect(text).toContain(`eu-csv (csv)\n  connection: acme, organization: ${org}\n`);
      expect(text).toContain(`us-csv (csv)\n  connection: acme, organization: ${other}\n`);
      expect(text).toContain(
        'erp-csv (csv)\n  connection: default, organization: (the one its token sees)\n',
      );
      const json = JSON.parse(await status('--json'));
      expect(
        json.sources.map((s: { id: string; connection: string; organizationId: string | null }) => [
          s.id,
          s.connection,
          s.organizationId,
        ]),
      ).toEqual([
        ['eu-csv', 'acme', org],
        ['us-csv', 'acme', other],
        ['erp-csv', 'default', null],
      ]);
    } finally {
      configFile = previous;
    }
  });

  it('when asked, then each source shows its type, the cursor of each stream, its last run with counts and its open failures', async () => {
    const text = await status();
    expect(text).toContain('billing-db (sql, schedule "*/10 * * * *")');
    expect(text).toMatch(/ {4}accounts {5}updated_at=2026-01-15 09:30:00.123456\+00 id=42 {2}\[set \d{4}-/);
    expect(text).toMatch(/ {4}invoices {5}updated_at=2026-01-15 09:31:00\+00 id=7/);
    expect(text).toMatch(/ {4}creditNotes {2}updated_at=2026-01-14 00:00:00\+00 id=3/);
    expect(text).toMatch(
      /last run: #\d+ partial \(schedule\), started .* in \d+\.\d s; created\/updated\/unchanged\/failed: accounts 2\/1\/97\/1, invoices 5\/1\/97\/1, creditNotes 0\/0\/0\/0/,
    );
    expect(text).toContain('open failures: 2 (see `failures --source billing-db`)');
    expect(text).toContain(
      'erp-csv (csv)\n  cursors: none (a drop folder keeps no cursor)\n  last run: never\n  open failures: 0',
    );

    const json = JSON.parse(await status('--json', '--source', 'billing-db'));
    expect(json.sources).toHaveLength(1);
    expect(json.sources[0]).toMatchObject({
      id: 'billing-db',
      type: 'sql',
      openFailures: 2,
      streams: [
        { stream: 'accounts', cursor: keyset('2026-01-15 09:30:00.123456+00', '42') },
        { stream: 'invoices', cursor: keyset('2026-01-15 09:31:00+00', '7') },
        { stream: 'creditNotes', cursor: keyset('2026-01-14 00:00:00+00', '3') },
      ],
      lastRun: { status: 'partial', trigger: 'schedule' },
    });
  });

  it('when one stream is reset, then only its cursor is forgotten and status shows it as reset', async () => {
    const message = await status('reset-cursor', '--source', 'billing-db', '--stream', 'credit-notes');
    expect(message).toBe(
      'Cursor of billing-db/creditNotes reset (it was updated_at=2026-01-14 00:00:00+00 id=3); the next pass reads ' +
        'that stream from its start. The other streams keep their cursors.\n',
    );
    expect(await cursors.get('billing-db', 'creditNotes')).toBeNull();
    expect(await cursors.get('billing-db', 'accounts')).toEqual(
      keyset('2026-01-15 09:30:00.123456+00', '42'),
    );
    expect(await cursors.get('billing-db', 'invoices')).toEqual(keyset('2026-01-15 09:31:00+00', '7'));
    expect(await status()).toMatch(
      / {4}creditNotes {2}\(none: the next pass reads the stream from its start\) {2}\[reset \d{4}-/,
    );

    expect(await status('reset-cursor', '--source', 'billing-db', '--stream', 'creditNotes')).toBe(
      'billing-db/creditNotes has no cursor: nothing to reset.\n',
    );
  });

  it('when the source or the stream is unknown, then nothing is reset and the error says what is accepted', async () => {
    await expect(status('reset-cursor', '--source', 'nope', '--stream', 'invoices')).rejects.toThrow(
      new CliError('no source "nope" in the configuration'),
    );
    await expect(status('reset-cursor', '--source', 'billing-db', '--stream', 'payments')).rejects.toThrow(
      'unknown stream "payments": one of accounts, invoices, creditNotes',
    );
    expect(await cursors.get('billing-db', 'invoices')).not.toBeNull();
  });
});
