import { describe, expect, it } from 'vitest';
import { pageQuery, probeQuery } from '../../../src/sources/sql/keyset-query.js';
import { mysqlKeyset, mysqlLiteral } from '../../../src/sources/sql/mysql-session.js';
import { postgresKeyset } from '../../../src/sources/sql/pg-session.js';
import { storedKey } from '../../../src/sources/sql/stream-cursor.js';

const QUERY = 'select id, updated_at from billing.customers;  ';

describe('keyset page queries', () => {
  it('when there is no cursor, then the page reads from the start, ordered by the cursor columns', () => {
    expect(pageQuery(postgresKeyset, QUERY, ['updated_at', 'id'], { kind: 'start' }, 500)).toEqual({
      text:
        'select * from (\nselect id, updated_at from billing.customers\n) as q where q."updated_at" is not null ' +
        'and q."id" is not null order by q."updated_at", q."id" limit $1',
      values: [500],
    });
  });

  it('when a page follows a key, then it compares the (ts, id) pair strictly, so ties are neither skipped nor repeated', () => {
    const page = pageQuery(
      postgresKeyset,
      QUERY,
      ['changed', 'pk'],
      { kind: 'after', key: ['2026-01-15 09:30:00.123456+00', '42'] },
      100,
    );
    expect(page.text).toContain('and (q."changed", q."pk") > ($1, $2) order by q."changed", q."pk" limit $3');
    expect(page.values).toEqual(['2026-01-15 09:30:00.123456+00', '42', 100]);
  });

  it('when a pass starts with a look-back, then it takes every row from the cursor time minus the window, ties included', () => {
    const page = pageQuery(
      postgresKeyset,
      QUERY,
      ['updated_at', 'id'],
      { kind: 'since', ts: '2026-01-15 09:30:00+00', lookbackSeconds: 300 },
      10,
    );
    expect(page.text).toContain('and q."updated_at" >= $1::timestamptz - make_interval(secs => $2) order by');
    expect(page.values).toEqual(['2026-01-15 09:30:00+00', 300, 10]);
  });

  it('when the query ends with a comment or semicolons, then the wrapper still closes', () => {
    expect(
      pageQuery(postgresKeyset, 'select 1 as id -- the ids\n;;', ['ts', 'id'], { kind: 'start' }, 1).text,
    ).toMatch(/^select \* from \(\nselect 1 as id -- the ids\n\) as q where/);
    expect(probeQuery('select 1;')).toBe('select * from (\nselect 1\n) as q limit 0');
  });
});

describe('keyset page queries in MySQL/MariaDB', () => {
  const DOLIBARR = "select f.rowid, f.tms, f.ref from llx_facture f where f.type = 0 and f.note like '?%'";

  it('when a page follows a key, then the pair is compared in the expanded form an index range serves, values inlined', () => {
    const page = pageQuery(
      mysqlKeyset,
      DOLIBARR,
      ['tms', 'rowid'],
      { kind: 'after', key: ['2026-01-15 09:30:00.123456+00:00', '42'] },
      100,
    );
    expect(page.text).toBe(
      `select * from (\n${DOLIBARR}\n) as q where q.\`tms\` is not null and q.\`rowid\` is not null and ` +
        "(q.`tms` > '2026-01-15 09:30:00.123456' or (q.`tms` = '2026-01-15 09:30:00.123456' and q.`rowid` > '42')) " +
        'order by q.`tms`, q.`rowid` limit 100',
    );
    // No placeholder: the `?` inside the user's string literal is never a parameter.
    expect(page.values).toEqual([]);
  });

  it('when a pass starts with a look-back, then the cursor time less the window is computed by the server', () => {
    const page = pageQuery(
      mysqlKeyset,
      DOLIBARR,
      ['tms', 'rowid'],
      { kind: 'since', ts: '2026-01-15 09:30:00', lookbackSeconds: 300 },
      10,
    );
    expect(page.text).toContain(
      "and q.`tms` >= cast('2026-01-15 09:30:00' as datetime(6)) - interval 300 second order by",
    );
  });

  it('when a cursor value holds quotes or backslashes, then its literal reads the same with or without NO_BACKSLASH_ESCAPES', () => {
    expect(mysqlLiteral("O'Brien")).toBe("'O''Brien'");
    expect(mysqlLiteral('a\\b')).toBe("concat('a', char(92 using utf8mb4), 'b')");
    // Only a TIMESTAMP's own UTC suffix is dropped (the session is in UTC): other text stays.
    expect(mysqlLiteral('2026-01-15 09:30:00+00:00')).toBe("'2026-01-15 09:30:00'");
    expect(mysqlLiteral('2026-01-15 09:30:00+02:00')).toBe("'2026-01-15 09:30:00+02:00'");
  });
});

describe('stored cursors', () => {
  it('when a keyset cursor of the same columns is stored, then its key is used; otherwise the stream starts over', () => {
    const stored = { kind: 'keyset', columns: ['updated_at', 'id'], values: ['2026-01-01 00:00:00+00', '7'] };
    expect(storedKey(stored, ['updated_at', 'id'])).toEqual({
      kind: 'key',
      key: ['2026-01-01 00:00:00+00', '7'],
    });
    expect(storedKey(null, ['updated_at', 'id'])).toEqual({ kind: 'none' });
    expect(storedKey(stored, ['modified', 'id'])).toEqual({
      kind: 'other-columns',
      columns: ['updated_at', 'id'],
    });
    expect(storedKey({ checksum: 'x' }, ['updated_at', 'id'])).toEqual({
      kind: 'other-columns',
      columns: [],
    });
  });
});
