import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { InMemoryCursorStore } from '../../../src/sources/ports.js';
import { createSqlSource, dialectForUrl, SqlSourceError } from '../../../src/sources/sql/index.js';
import { mysqlConnectionOptions, serverOf } from '../../../src/sources/sql/mysql-session.js';

const errorOf = (run: () => unknown): SqlSourceError => {
  try {
    run();
  } catch (error) {
    return error as SqlSourceError;
  }
  throw new Error('no error thrown');
};

describe('the database a SQL source reads, chosen by the URL scheme', () => {
  it('when the scheme is postgres or postgresql, then Postgres; mysql or mariadb, then MySQL/MariaDB (any case)', () => {
    expect(dialectForUrl('postgres://reader@db:5432/billing', 'db').name).toBe('Postgres');
    expect(dialectForUrl('postgresql://reader@db/billing', 'db').name).toBe('Postgres');
    expect(dialectForUrl('mysql://reader@db:3306/dolibarr', 'db').name).toBe('MySQL/MariaDB');
    expect(dialectForUrl('MariaDB://reader@db/dolibarr', 'db').name).toBe('MySQL/MariaDB');
  });

  it('when the scheme is another one, then a configuration error names the schemes accepted, never the password', () => {
    const error = errorOf(() => dialectForUrl('sqlserver://sa:S3cret!@erp:1433/sage', 'sage'));
    expect(error).toBeInstanceOf(SqlSourceError);
    expect(error.code).toBe('SQL_CONFIG_INVALID');
    expect(error.retryable).toBe(false);
    expect(error.message).toBe(
      'source "sage": the database URL\'s scheme "sqlserver://" is not one this source reads; the scheme ' +
        'chooses the database: postgres:// or postgresql:// (Postgres), mysql:// or mariadb:// (MySQL/MariaDB)',
    );
    expect(error.message).not.toContain('S3cret');
    expect(errorOf(() => dialectForUrl('db.example:5432/billing', 'db')).message).toContain(
      'the database URL has no scheme',
    );
  });

  it('when a source is created with an unknown scheme, then it fails at once, before any connection', () => {
    const error = errorOf(() =>
      createSqlSource({
        config: { id: 'erp', urlEnv: 'ERP_URL', streams: { invoices: { query: 'select 1' } } },
        cursors: new InMemoryCursorStore(),
        logger: pino({ level: 'silent' }),
        env: { ERP_URL: 'oracle://erp/orcl' },
      }),
    );
    expect(error.code).toBe('SQL_CONFIG_INVALID');
    expect(error.message).toContain('"oracle://"');
  });

  it('when a MySQL URL is read, then its parts become connection options, and an unknown parameter is refused', () => {
    expect(mysqlConnectionOptions('mariadb://reader:p%40ss@db.example:3307/dolibarr?ssl=true')).toEqual({
      host: 'db.example',
      port: 3307,
      user: 'reader',
      password: 'p@ss',
      database: 'dolibarr',
      ssl: {},
    });
    expect(mysqlConnectionOptions('mysql://root@127.0.0.1/erp')).toMatchObject({ port: 3306, password: '' });
    const error = errorOf(() => mysqlConnectionOptions('mysql://root@db/erp?decimalNumbers=true'));
    expect(error.code).toBe('SQL_CONFIG_INVALID');
    expect(error.message).toContain('decimalNumbers is not understood');
  });

  it('when the server says its version, then MariaDB and MySQL are told apart and old versions flagged', () => {
    expect(serverOf('10.11.19-MariaDB-0+deb12u1')).toEqual({
      mariadb: true,
      label: 'MariaDB 10.11.19',
      supported: true,
    });
    expect(serverOf('8.0.36')).toEqual({ mariadb: false, label: 'MySQL 8.0.36', supported: true });
    expect(serverOf('10.5.2-MariaDB').supported).toBe(false);
    expect(serverOf('5.7.44-log').supported).toBe(false);
    expect(serverOf('11.4.2-MariaDB').supported).toBe(true);
  });
});
