import type mysql from 'mysql2/promise';
import { adminConnection, dropDatabase, mariadbUrl, uniqueDatabase } from '../../support/mariadb.js';

/**
 * A Dolibarr-shaped billing database of its own per test file, on the machine's MariaDB. The tables
 * keep the columns the worked example reads, as Dolibarr declares them in
 * `htdocs/install/mysql/tables/llx_societe.sql`, `llx_facture.sql`, `llx_paiement_facture.sql` and
 * `llx_c_country.sql` (github.com/Dolibarr/dolibarr): amounts are `DOUBLE(24,8)`, `tms` is a
 * `TIMESTAMP` updated on every write, a credit note is an `llx_facture` row of `type = 2` with
 * negative totals, and what was paid is the sum of `llx_paiement_facture.amount`. The other
 * columns are left out. The `(tms, rowid)` indexes are not Dolibarr's: docs/sources-sql.md advises
 * them, and the keyset reads each page through them.
 */
export interface DolibarrDb {
  database: string;
  /** What the source's `urlEnv` holds: `mysql://root@127.0.0.1:3306/rs_...`. */
  url: string;
  /** Runs SQL (several statements allowed) on the database, in UTC. */
  sql<T = Record<string, unknown>>(text: string, values?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** Seeded times, UTC: third party i at BASE + i minutes, invoice j at BASE + 10 j seconds. */
export const BASE = '2026-01-01 00:00:00';

export async function createDolibarrDb(prefix: string): Promise<DolibarrDb> {
  const database = uniqueDatabase(prefix);
  const admin = await adminConnection();
  await admin.query(`create database \`${database}\` character set utf8mb4`);
  await admin.end();
  const connection: mysql.Connection = await adminConnection(database);
  const sql = async (text: string, values: unknown[] = []) => {
    const [rows] = await connection.query(text, values);
    return rows as never[];
  };
  await sql(`
    create table llx_c_country (
      rowid integer primary key, code varchar(2) not null, code_iso varchar(3), label varchar(50) not null,
      active tinyint default 1 not null);
    create table llx_societe (
      rowid integer auto_increment primary key, nom varchar(128), entity integer default 1 not null,
      status tinyint default 1, code_client varchar(24), address varchar(255), zip varchar(25),
      town varchar(50), fk_pays integer default 0, client tinyint default 0, multicurrency_code varchar(3),
      tms timestamp default current_timestamp on update current_timestamp, datec datetime,
      key idx_societe_tms (tms, rowid));
    create table llx_facture (
      rowid integer auto_increment primary key, ref varchar(30) not null, entity integer default 1 not null,
      type smallint default 0 not null, fk_soc integer not null, datec datetime, datef date,
      tms timestamp default current_timestamp on update current_timestamp, paye smallint default 0 not null,
      total_tva double(24,8) default 0, total_ht double(24,8) default 0, total_ttc double(24,8) default 0,
      fk_statut smallint default 0 not null, fk_facture_source integer, date_lim_reglement date,
      multicurrency_code varchar(3),
      key idx_facture_fk_soc (fk_soc), key idx_facture_tms (tms, rowid));
    create table llx_paiement_facture (
      rowid integer auto_increment primary key, fk_paiement integer, fk_facture integer,
      amount double(24,8) default 0, key idx_paiement_facture_fk_facture (fk_facture));
    insert into llx_c_country (rowid, code, code_iso, label) values
      (1, 'FR', 'FRA', 'France'), (2, 'BE', 'BEL', 'Belgium'), (5, 'DE', 'DEU', 'Germany'),
      (7, 'GB', 'GBR', 'United Kingdom');
    create table rs_digits (d integer primary key);
    insert into rs_digits values (0), (1), (2), (3), (4), (5), (6), (7), (8), (9);`);
  return {
    database,
    url: mariadbUrl(database),
    sql: sql as DolibarrDb['sql'],
    async close() {
      await connection.end();
      await dropDatabase(database);
    },
  };
}

/** 1..n (n up to 100,000) from a cross join of digits: MySQL 8 caps recursive CTEs at 1,000 rows. */
const numbers = `(select a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * g.d + 1 as n
  from rs_digits a, rs_digits b, rs_digits c, rs_digits e, rs_digits g)`;

/**
 * `customers` third parties, `invoices` validated invoices spread over them (every third one paid
 * 10.00 through `llx_paiement_facture`), and `creditNotes` credit notes (`type = 2`, negative
 * totals), all valid.
 */
export async function seedDolibarr(
  db: DolibarrDb,
  counts: { customers: number; invoices: number; creditNotes?: number },
): Promise<void> {
  const { customers, invoices, creditNotes = 0 } = counts;
  await db.sql(
    `insert into llx_societe (rowid, nom, code_client, address, zip, town, fk_pays, client, tms)
     select n, concat('Client ', n), concat('CU-', lpad(n, 5, '0')), concat(n, ' rue de la Paix'),
            concat('750', n % 20), if(n % 2 = 0, 'Paris', 'Lyon'), if(n % 5 = 0, 5, 1), 1,
            timestamp '${BASE}' + interval n minute
     from ${numbers} ns where n <= ?`,
    [customers],
  );
  await db.sql(
    `insert into llx_facture (rowid, ref, type, fk_soc, datef, date_lim_reglement, total_ht, total_tva,
                              total_ttc, fk_statut, tms)
     select n, concat('FA2601-', lpad(n, 5, '0')), 0, ((n - 1) % ?) + 1,
            date '2025-01-01' + interval (n % 365) day, date '2025-01-31' + interval (n % 365) day,
            100 + (n % 900) + 0.5, round((100 + (n % 900) + 0.5) * 0.2, 2),
            100 + (n % 900) + 0.5 + round((100 + (n % 900) + 0.5) * 0.2, 2), 1,
            timestamp '${BASE}' + interval (n * 10) second
     from ${numbers} ns where n <= ?`,
    [customers, invoices],
  );
  await db.sql(
    `insert into llx_paiement_facture (fk_paiement, fk_facture, amount)
     select n, n, 10 from ${numbers} ns where n <= ? and n % 3 = 0`,
    [invoices],
  );
  await db.sql(
    `insert into llx_facture (rowid, ref, type, fk_soc, datef, total_ht, total_tva, total_ttc, fk_statut, tms)
     select ? + n, concat('AV2601-', lpad(n, 5, '0')), 2, ((n - 1) % ?) + 1,
            date '2025-06-01' + interval (n % 100) day, -(20 + n), -4, -(24 + n), 1,
            timestamp '${BASE}' + interval n hour
     from ${numbers} ns where n <= ?`,
    [invoices, customers, creditNotes],
  );
  await db.sql('analyze table llx_societe, llx_facture, llx_paiement_facture');
}

/**
 * The worked example of docs/sources-sql.md: the stream queries over a Dolibarr database, in
 * MariaDB's dialect. A third party's customer code is its `sourceId`; drafts (`fk_statut = 0`, a
 * provisional `(PROV…)` ref) are not sent; credit notes are made positive.
 */
export function dolibarrStreams() {
  return {
    accounts: {
      query: `select s.code_client as sourceId, s.nom as fullName,
                coalesce(nullif(s.multicurrency_code, ''), 'EUR') as currencyCode,
                s.address as \`billingAddress.street\`, s.zip as \`billingAddress.postalCode\`,
                s.town as \`billingAddress.city\`, c.code as \`billingAddress.country\`, s.tms, s.rowid
              from llx_societe s left join llx_c_country c on c.rowid = s.fk_pays
              where s.client in (1, 3) and s.code_client is not null`,
      cursorColumns: ['tms', 'rowid'] as [string, string],
    },
    invoices: {
      query: `select f.ref as sourceId,
                (select s.code_client from llx_societe s where s.rowid = f.fk_soc) as accountSourceId,
                f.ref as number, f.datef as issuedDate, f.date_lim_reglement as dueDate,
                f.total_ttc as totalAmount, f.total_tva as taxAmount,
                (select sum(pf.amount) from llx_paiement_facture pf where pf.fk_facture = f.rowid) as paidAmount,
                f.tms, f.rowid
              from llx_facture f
              where f.type = 0 and f.fk_statut > 0`,
      cursorColumns: ['tms', 'rowid'] as [string, string],
    },
    creditNotes: {
      query: `select f.ref as sourceId,
                (select s.code_client from llx_societe s where s.rowid = f.fk_soc) as accountSourceId,
                f.ref as number, f.datef as issuedDate,
                abs(f.total_ttc) as totalAmount, abs(f.total_tva) as taxAmount, f.tms, f.rowid
              from llx_facture f
              where f.type = 2 and f.fk_statut > 0`,
      cursorColumns: ['tms', 'rowid'] as [string, string],
    },
  };
}
