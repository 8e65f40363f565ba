/**
 * The SQL of one keyset page over a stream's query. The user's query is wrapped as a subquery and
 * paged by its cursor columns `(ts, id)`, in that order, `limit` rows at a time: memory stays bounded
 * and no OFFSET is needed. Rows sharing a `ts` are ordered by `id`, so a page boundary in the middle
 * of them neither skips nor repeats one. What differs between databases (quoting, parameters, the
 * look-back arithmetic, the comparison form the planner can use an index for) is a `KeysetSyntax`
 * the dialect gives.
 */

/** Where a page starts. */
export type PagePosition =
  /** The beginning of the stream: no cursor yet, or a full refresh. */
  | { kind: 'start' }
  /** The first page of an incremental pass: every row from `ts - lookbackSeconds` on, ties included. */
  | { kind: 'since'; ts: string; lookbackSeconds: number }
  /** Strictly after a key: the next page of a pass (or the first one without a look-back). */
  | { kind: 'after'; key: CursorKey };

/** A cursor key as the database printed it (text), passed back as text: no precision is lost. */
export type CursorKey = readonly [ts: string, id: string];

/** A statement for a session: its text and the values of its parameters, in order. */
export interface SqlStatement {
  text: string;
  values: unknown[];
}

/** How one database spells the parts of a keyset page. */
export interface KeysetSyntax {
  /** A checked column name (letters, digits, `_`) of the wrapped query `q`, quoted. */
  column(name: string): string;
  /** What stands for `value` in the text: a placeholder (the value pushed on `values`) or a literal. */
  bind(value: string | number, values: unknown[]): string;
  /** `ts` at or after the cursor's time less the look-back (`cursorTs`, `seconds`: bound forms). */
  since(ts: string, cursorTs: string, seconds: string): string;
  /** `(ts, id)` strictly after the key `(a, b)` (bound forms). */
  after(ts: string, id: string, a: string, b: string): string;
}

/**
 * Builds a page's statement. `cursorColumns` are checked names, quoted by the syntax.
 *
 * @example
 *   pageQuery(postgresKeyset, 'select ... from billing.invoices', ['updated_at', 'id'], { kind: 'after', key }, 1000)
 *   // select * from (\n select ... \n) as q where q."updated_at" is not null and q."id" is not null
 *   //   and (q."updated_at", q."id") > ($1, $2) order by q."updated_at", q."id" limit $3
 */
export function pageQuery(
  syntax: KeysetSyntax,
  query: string,
  cursorColumns: readonly [string, string],
  position: PagePosition,
  limit: number,
): SqlStatement {
  const ts = syntax.column(cursorColumns[0]);
  const id = syntax.column(cursorColumns[1]);
  const inner = stripTrailingSemicolons(query);
  const conditions = [`${ts} is not null`, `${id} is not null`];
  const values: unknown[] = [];
  if (position.kind === 'since') {
    // The cursor's first column must be a date or timestamp for the look-back arithmetic.
    const cursorTs = syntax.bind(position.ts, values);
    conditions.push(syntax.since(ts, cursorTs, syntax.bind(position.lookbackSeconds, values)));
  } else if (position.kind === 'after') {
    const a = syntax.bind(position.key[0], values);
    conditions.push(syntax.after(ts, id, a, syntax.bind(position.key[1], values)));
  }
  const limitText = syntax.bind(limit, values);
  // The newlines keep a trailing `-- comment` of the user's query from eating the closing parenthesis.
  const text =
    `select * from (\n${inner}\n) as q where ${conditions.join(' and ')} ` +
    `order by ${ts}, ${id} limit ${limitText}`;
  return { text, values };
}

/** The query's columns without reading a row: `limit 0` is planned but returns nothing. */
export function probeQuery(query: string): string {
  return `select * from (\n${stripTrailingSemicolons(query)}\n) as q limit 0`;
}

/** `probeQuery` as a statement. */
export const probeStatement = (query: string): SqlStatement => ({ text: probeQuery(query), values: [] });

/** `select ...;` is natural to write but cannot be a subquery. */
export function stripTrailingSemicolons(query: string): string {
  return query.trim().replace(/[\s;]+$/, '');
}
