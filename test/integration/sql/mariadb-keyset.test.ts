import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InMemoryCursorStore } from '../../../src/sources/ports.js';
import { createSqlSource, type SqlSourceError } from '../../../src/sources/sql/index.js';
import { pageQuery } from '../../../src/sources/sql/keyset-query.js';
import { mysqlKeyset } from '../../../src/sources/sql/mysql-session.js';
import { sqlQueryCheck } from '../../../src/sources/sql/query-check.js';
import { drain } from './billing-fixture.js';
import { createDolibarrDb, type DolibarrDb, dolibarrStreams, seedDolibarr } from './dolibarr-fixture.js';

const logger = pino({ level: 'silent' });

describe('SQL source on MariaDB: keyset pages, look-back, timeout and read-only reads', () => {
  let dolibarr: DolibarrDb;
  let cursors: InMemoryCursorStore;

  const streams = dolibarrStreams();
  const source = (config: Record<string, unknown>, batchSize?: number) =>
    createSqlSource({
      config: { id: 'dolibarr', urlEnv: 'DOLIBARR_URL', lookbackSeconds: 0, ...config },
      cursors,
      logger,
      env: { DOLIBARR_URL: dolibarr.url },
      ...(batchSize ? { batchSize } : {}),
    });
  const accountsOnly = { streams: { accounts: streams.accounts } };
  const addThirdParty = (rowid: number, tms: string) =>
    dolibarr.sql(
      `insert into llx_societe (rowid, nom, code_client, fk_pays, client, tms) values (?, ?, ?, 1, 1, ?)`,
      [rowid, `Client ${rowid}`, `CU-${rowid}`, tms],
    );
  const ids = (records: Array<{ sourceId: string }>) => records.map((r) => r.sourceId);

  beforeAll(async () => {
    dolibarr = await createDolibarrDb('keyset');
  });
  afterAll(async () => {
    await dolibarr?.close();
  });
  beforeEach(async () => {
    cursors = new InMemoryCursorStore();
    await dolibarr.sql('delete from llx_societe; delete from llx_facture; delete from llx_paiement_facture');
  });

  it('when rows share a tms across page boundaries, then each is read once, in (tms, rowid) order', async () => {
    await addThirdParty(1, '2026-01-01 10:00:00');
    await addThirdParty(2, '2026-01-01 10:00:01');
    // Three rows on the same second (Dolibarr's tms has no fraction); pages of 2 split them.
    for (const id of [5, 3, 4]) await addThirdParty(id, '2026-01-01 10:00:02');
    await addThirdParty(6, '2026-01-01 10:00:03');
    await addThirdParty(7, '2026-01-01 10:00:03');
    const first = source(accountsOnly, 2);
    const pass = await drain(first.units());
    expect(ids(pass.records.accounts)).toEqual(['CU-1', 'CU-2', 'CU-3', 'CU-4', 'CU-5', 'CU-6', 'CU-7']);
    expect(first.lastPass().streams.accounts).toMatchObject({ rowsRead: 7, pages: 4, largestPage: 2 });
    // A TIMESTAMP is read in UTC and keeps its offset in the cursor, as Postgres's timestamptz does.
    expect((await cursors.get('dolibarr', 'accounts'))!.values).toEqual(['2026-01-01 10:00:03+00:00', '7']);
  });

  it('when the cursor stops inside a group of ties, then the next pass reads the later ties only, none twice', async () => {
    const tie = '2026-01-01 10:00:02';
    await addThirdParty(1, '2026-01-01 10:00:00');
    await addThirdParty(3, tie);
    await addThirdParty(4, tie);
    await drain(source(accountsOnly, 2).units());
    expect((await cursors.get('dolibarr', 'accounts'))!.values).toEqual([`${tie}+00:00`, '4']);

    await addThirdParty(5, tie);
    await addThirdParty(6, tie);
    await addThirdParty(7, '2026-01-01 10:00:03');
    const next = source(accountsOnly, 2);
    expect(ids((await drain(next.units())).records.accounts)).toEqual(['CU-5', 'CU-6', 'CU-7']);
    expect(next.lastPass().streams.accounts).toMatchObject({ start: 'after', rowsRead: 3 });
  });

  it('when a row is committed late with a tms inside the look-back, then it is read; outside it, it is not', async () => {
    await addThirdParty(1, '2026-01-01 10:00:00');
    await addThirdParty(2, '2026-01-01 11:00:00');
    const config = { ...accountsOnly, lookbackSeconds: 300 };
    await drain(source(config).units());
    await addThirdParty(10, '2026-01-01 10:58:00'); // 2 minutes behind the cursor: inside 300 s
    await addThirdParty(11, '2026-01-01 10:50:00'); // 10 minutes behind: outside
    const next = source(config);
    expect(ids((await drain(next.units())).records.accounts)).toEqual(['CU-10', 'CU-2']);
    expect(next.lastPass().streams.accounts).toMatchObject({ start: 'since', rowsRead: 2 });
    expect((await cursors.get('dolibarr', 'accounts'))!.values).toEqual(['2026-01-01 11:00:00+00:00', '2']);
  });

  it('when a page follows a key, then MariaDB reads it through the (tms, rowid) index, without a sort', async () => {
    await seedDolibarr(dolibarr, { customers: 50, invoices: 3000 });
    const page = pageQuery(
      mysqlKeyset,
      streams.invoices.query,
      streams.invoices.cursorColumns,
      { kind: 'after', key: ['2026-01-01 01:00:00+00:00', '360'] },
      1000,
    );
    const plan = await dolibarr.sql<{ table: string; key: string | null; Extra: string }>(
      `explain ${page.text}`,
    );
    const facture = plan.find((row) => row.table === 'f');
    expect(facture).toMatchObject({ key: 'idx_facture_tms' });
    expect(facture!.Extra).not.toContain('filesort');
    // The same page as a row-value comparison: a full scan and a sort, what the expanded form avoids.
    const rowValue = page.text.replace(
      /\(q\.`tms` > .*?\)\) order/,
      "(q.`tms`, q.`rowid`) > ('2026-01-01 01:00:00', 360) order",
    );
    const slowPlan = await dolibarr.sql<{ table: string; key: string | null; Extra: string }>(
      `explain ${rowValue}`,
    );
    expect(slowPlan.find((row) => row.table === 'f')!.Extra).toContain('filesort');
  });

  it('when a query writes, runs too long or is broken, then the unit fails with a coded error and no cursor moves', async () => {
    await addThirdParty(1, '2026-01-01 10:00:00');
    await dolibarr.sql('create sequence if not exists rs_numbers');
    const write = source({
      streams: {
        accounts: {
          ...streams.accounts,
          query: `select a.*, nextval(rs_numbers) as n from (${streams.accounts.query}) a`,
        },
      },
    });
    const writeError = (await drain(write.units()).catch((e: unknown) => e)) as SqlSourceError;
    expect(writeError.code).toBe('SQL_QUERY_FAILED');
    expect(writeError.message).toContain('READ ONLY transaction');

    // sleep() is the slow query under test (2 s a row against a 200 ms max_statement_time), not a wait.
    const slow = source({
      statementTimeoutMs: 200,
      streams: { accounts: { ...streams.accounts, query: `${streams.accounts.query} and sleep(2) = 0` } },
    });
    const slowError = (await drain(slow.units()).catch((e: unknown) => e)) as SqlSourceError;
    expect(slowError.code).toBe('SQL_STATEMENT_TIMEOUT');
    expect(slowError.retryable).toBe(true);
    expect(slowError.message).toContain('statementTimeoutMs (200 ms)');

    const broken = source({
      streams: { accounts: { ...streams.accounts, query: 'select from llx_societe' } },
    });
    const brokenError = (await drain(broken.units()).catch((e: unknown) => e)) as SqlSourceError;
    expect(brokenError.code).toBe('SQL_QUERY_FAILED');
    expect(brokenError.message).toContain('You have an error in your SQL syntax');
    expect(await cursors.get('dolibarr', 'accounts')).toBeNull();
  });

  it('when doctor checks the source, then MariaDB compiles each query under limit 0 and names a query that does not compile', async () => {
    const config = {
      id: 'dolibarr',
      type: 'sql' as const,
      urlEnv: 'DOLIBARR_URL',
      streams,
      lookbackSeconds: 300,
      fullRefresh: false,
      statementTimeoutMs: 5000,
      batchSize: 1000,
      timeZone: 'UTC',
    };
    const context = { env: { DOLIBARR_URL: dolibarr.url }, baseDir: '.' };
    const ok = await sqlQueryCheck(config as never, context);
    expect(ok.status).toBe('ok');
    expect(ok.detail).toMatch(
      /^connects \(MariaDB 10\.\d+\.\d+\); accounts, invoices, creditNotes stream queries compile/,
    );
    const bad = await sqlQueryCheck(
      {
        ...config,
        streams: { invoices: { ...streams.invoices, query: 'select total_ttcc from llx_facture' } },
      } as never,
      context,
    );
    expect(bad.status).toBe('fail');
    expect(bad.detail).toMatch(/^the invoices query does not compile: Unknown column 'total_ttcc'/);
    // It compiles, but returns no "dueDate": the pass would refuse the stream, so doctor does.
    const lacking = await sqlQueryCheck(
      {
        ...config,
        streams: {
          invoices: { ...streams.invoices, query: streams.invoices.query.replace(/ as dueDate/, ' as due') },
        },
      } as never,
      context,
    );
    expect(lacking.status).toBe('fail');
    expect(lacking.detail).toMatch(/^the invoices query returns no column "dueDate"/);
  });

  it('when the database is unreachable, then the source says so before any unit, as a connection fault', async () => {
    const unreachable = createSqlSource({
      config: { id: 'x', urlEnv: 'U', streams: accountsOnly.streams },
      cursors,
      logger,
      env: { U: 'mariadb://nobody:secret@127.0.0.1:1/none' },
    });
    const error = (await drain(unreachable.units()).catch((e: unknown) => e)) as SqlSourceError;
    expect(error.code).toBe('SQL_CONNECT_FAILED');
    expect(error.retryable).toBe(true);
    expect(error.message).not.toContain('secret');
  });
});
