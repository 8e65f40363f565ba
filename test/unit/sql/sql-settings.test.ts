import { describe, expect, it } from 'vitest';
import { parseSqlSettings, SqlSourceError } from '../../../src/sources/sql/index.js';

describe('SQL source settings', () => {
  it('when only the queries are given, then the defaults apply', () => {
    const settings = parseSqlSettings({
      id: 'db',
      urlEnv: 'U',
      streams: { invoices: { query: 'select 1' } },
    });
    expect(settings).toEqual({
      streams: { invoices: { query: 'select 1', cursorColumns: ['updated_at', 'id'] } },
      lookbackSeconds: 300,
      fullRefresh: false,
      statementTimeoutMs: 60_000,
      batchSize: 1000,
      timeZone: 'UTC',
    });
  });

  it('when an accounts stream has a deleted column, then a tombstone unlinks by default', () => {
    const settings = parseSqlSettings({
      id: 'db',
      urlEnv: 'U',
      streams: {
        accounts: {
          query: 'select 1',
          deletedColumn: 'is_deleted',
          cursorColumns: ['modified_at', 'customer_id'],
        },
      },
    });
    expect(settings.streams.accounts).toEqual({
      query: 'select 1',
      deletedColumn: 'is_deleted',
      cursorColumns: ['modified_at', 'customer_id'],
      onDelete: 'unlink',
      deletedTag: 'deleted-in-source',
    });
  });

  it('when the settings are wrong, then every problem is listed in one coded error', () => {
    const error = (() => {
      try {
        parseSqlSettings({
          id: 'db',
          urlEnv: 'U',
          streams: {
            payments: { query: 'x' },
            invoices: { query: '', onDelete: 'unlink', cursorColumns: ['a;drop', 'id'] },
          },
          lookbackSeconds: -1,
          timeZone: 'Paris',
        });
      } catch (e) {
        return e as SqlSourceError;
      }
    })();
    expect(error).toBeInstanceOf(SqlSourceError);
    expect(error?.code).toBe('SQL_CONFIG_INVALID');
    expect(error?.message).toContain('source "db": ');
    expect(error?.message).toContain('streams: Unrecognized key: "payments"');
    expect(error?.message).toContain('streams.invoices.query: a query is required');
    expect(error?.message).toContain('streams.invoices.cursorColumns.0: a column name');
    expect(error?.message).toContain('streams.invoices: Unrecognized key: "onDelete"');
    expect(error?.message).toContain('lookbackSeconds: Too small');
    expect(error?.message).toContain('timeZone: an IANA time zone, like UTC or Europe/Paris');
  });

  it('when no stream is configured, then the source is refused', () => {
    expect(() => parseSqlSettings({ id: 'db', urlEnv: 'U', streams: {} })).toThrow(/at least one stream/);
  });
});
