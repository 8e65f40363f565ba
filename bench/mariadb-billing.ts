/**
 * The bench's billing data on MariaDB: the same tables and the same generated rows as
 * `test/integration/sql/billing-fixture.ts` makes in Postgres (customer i at BASE + i minutes,
 * invoice j at BASE + 10 j seconds, the same names, amounts and dates), with the same stream queries
 * written in MariaDB's dialect, so the two databases' rows/s compare like for like.
 */
import type mysql from 'mysql2/promise';
import { adminConnection, dropDatabase, mariadbUrl, uniqueDatabase } from '../test/support/mariadb.js';

export interface MariadbBilling {
  database: string;
  url: string;
  connection: mysql.Connection;
  close(): Promise<void>;
}

const BASE = '2026-01-01 00:00:00';

/** 1..n (n up to 1,000,000) from a cross join of digits. */
const numbers = `(select a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * g.d + 100000 * h.d + 1 as n
  from digits a, digits b, digits c, digits e, digits g, digits h)`;

export async function createMariadbBilling(
  prefix: string,
  counts: { accounts: number; invoices: number },
): Promise<MariadbBilling> {
  const database = uniqueDatabase(prefix);
  const admin = await adminConnection();
  await admin.query(`create database \`${database}\` character set utf8mb4`);
  await admin.end();
  const connection = await adminConnection(database);
  await connection.query(`
    create table digits (d integer primary key);
    insert into digits values (0), (1), (2), (3), (4), (5), (6), (7), (8), (9);
    create table customers (
      id bigint primary key, name varchar(100), currency varchar(3), street varchar(100), city varchar(50),
      postal_code varchar(10), country varchar(2), tags varchar(100) not null default '',
      deleted boolean not null default false, updated_at datetime(6) not null, key (updated_at, id));
    create table invoices (
      id bigint primary key, customer_id bigint not null, number varchar(20) not null, issued_on date not null,
      due_on date not null, total decimal(12,2) not null, tax decimal(12,2) not null, paid decimal(12,2),
      deleted boolean not null default false, updated_at datetime(6) not null, key (updated_at, id));`);
  await connection.query(
    `insert into customers (id, name, currency, street, city, postal_code, country, tags, updated_at)
     select n, concat('Customer ', n), if(n % 4 = 0, 'USD', 'EUR'), concat(n, ' rue de la Paix'),
            if(n % 2 = 0, 'Paris', 'Lyon'), concat('750', n % 20), 'FR', if(n % 10 = 0, 'vip', ''),
            timestamp '${BASE}' + interval n minute
     from ${numbers} ns where n <= ?`,
    [counts.accounts],
  );
  await connection.query(
    `insert into invoices (id, customer_id, number, issued_on, due_on, total, tax, paid, updated_at)
     select n, ((n - 1) % ?) + 1, concat('INV-', lpad(n, 6, '0')),
            date '2025-01-01' + interval (n % 365) day, date '2025-01-31' + interval (n % 365) day,
            100 + (n % 900) + 0.5, round((100 + (n % 900) + 0.5) * 0.2, 2), if(n % 3 = 0, 10.00, null),
            timestamp '${BASE}' + interval (n * 10) second
     from ${numbers} ns where n <= ?`,
    [counts.accounts, counts.invoices],
  );
  await connection.query('analyze table customers, invoices');
  return {
    database,
    url: mariadbUrl(database),
    connection,
    async close() {
      await connection.end();
      await dropDatabase(database);
    },
  };
}

/** `billingStreams` in MariaDB's dialect: backquoted aliases, `concat`, `cast(... as char)`. */
export function mariadbBillingStreams() {
  return {
    accounts: {
      query: `select cast(id as char) as sourceId, name as fullName, currency as currencyCode,
                street as \`billingAddress.street\`, city as \`billingAddress.city\`,
                postal_code as \`billingAddress.postalCode\`, country as \`billingAddress.country\`,
                tags, deleted, updated_at, id
              from customers`,
      deletedColumn: 'deleted',
    },
    invoices: {
      query: `select concat('INV-', id) as sourceId, cast(customer_id as char) as accountSourceId, number,
                issued_on as issuedDate, due_on as dueDate, total as totalAmount, tax as taxAmount,
                paid as paidAmount, deleted, updated_at, id
              from invoices`,
      deletedColumn: 'deleted',
    },
  };
}
