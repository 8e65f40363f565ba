/**
 * The SQL of one keyset page over a stream's query. The user's query is wrapped as a subquery and
 * paged by its cursor columns `(ts, id)`, in that order, `limit` rows at a time: memory stays bounded
 * and no OFFSET is needed. Rows sharing a `ts` are ordered by `id`, so a page boundary in the middle
 * of them neither skips nor repeats one.
 */

/** Where a page starts. */
export type PagePosition =
  /** The beginning of the stream: no cursor yet, or a full refresh. */
  | { kind: 'start' }
  /** The first page of an incremental pass: every row from `ts - lookbackSeconds` on, ties included. */
  | { kind: 'since'; ts: string; lookbackSeconds: number }
  /** Strictly after a key: the next page of a pass (or the first one without a look-back). */
  | { kind: 'after'; key: CursorKey };

/** A cursor key as Postgres prints it (text), passed back as text: no precision is lost. */
export type CursorKey = readonly [ts: string, id: string];

export interface PageQuery {
  text: string;
  values: unknown[];
}

const quote = (column: string) => `q."${column}"`;

/**
 * Builds a page's statement. `cursorColumns` are checked names (letters, digits, `_`), quoted here.
 *
 * @example
 *   pageQuery('select ... from billing.invoices', ['updated_at', 'id'], { kind: 'after', key }, 1000)
 *   // select * from (\n select ... \n) as q where q."updated_at" is not null and q."id" is not null
 *   //   and (q."updated_at", q."id") > ($1, $2) order by q."updated_at", q."id" limit $3
 */
export function pageQuery(
  query: string,
  cursorColumns: readonly [string, string],
  position: PagePosition,
  limit: number,
): PageQuery {
  const [ts, id] = cursorColumns.map(quote) as [string, string];
  const inner = stripTrailingSemicolons(query);
  const conditions = [`${ts} is not null`, `${id} is not null`];
  const values: unknown[] = [];
  if (position.kind === 'since') {
    // The cursor's first column must be a date or timestamp for the look-back arithmetic.
    values.push(position.ts, position.lookbackSeconds);
    conditions.push(`${ts} >= $1::timestamptz - make_interval(secs => $2)`);
  } else if (position.kind === 'after') {
    values.push(position.key[0], position.key[1]);
    conditions.push(`(${ts}, ${id}) > ($1, $2)`);
  }
  values.push(limit);
  // The newlines keep a trailing `-- comment` of the user's query from eating the closing parenthesis.
  const text =
    `select * from (\n${inner}\n) as q where ${conditions.join(' and ')} ` +
    `order by ${ts}, ${id} limit $${values.length}`;
  return { text, values };
}

/** The query's columns without reading a row: `limit 0` is planned but returns nothing. */
export function probeQuery(query: string): string {
  return `select * from (\n${stripTrailingSemicolons(query)}\n) as q limit 0`;
}

/** `select ...;` is natural to write but cannot be a subquery. */
export function stripTrailingSemicolons(query: string): string {
  return query.trim().replace(/[\s;]+$/, '');
}
