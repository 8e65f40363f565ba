/**
 * What a 2xx answer must hold before the client hands it over: a check returns what is wrong with
 * the body (`no "id"`, `nodes[3]: no "id"`), or undefined when it can be used. Only what the
 * contract shows and the callers read is required (an `id` on what they address later, the
 * `nodes` of a page); the fields the spec leaves "not shown" never are. A body that fails its check
 * is a fault of the service (or of what stands between it and us), never of the record sent: the
 * transport retries it with the same Idempotency-Key, then throws `UnexpectedResponseError`.
 *
 * @example
 * send({ method: 'POST', path: '/accounts', body: { json: input }, expect: accountShape });
 */
export type ResponseShape = (body: unknown) => string | undefined;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `null`, `an array`, `a string`...: what was found where an object was due. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

const isIdentifier = (value: unknown): boolean => typeof value === 'string' && value !== '';

/** A JSON object whose fields the spec does not show (an audit page, a member, a status). */
export const anObject: ResponseShape = (body) =>
  isObject(body) ? undefined : `${kindOf(body)} where an object is due`;

/** A resource the caller addresses again by its id (an organization, a tag): a non-empty `id`. */
export const withId: ResponseShape = (body) => {
  if (!isObject(body)) return `${kindOf(body)} where an object is due`;
  return isIdentifier(body.id) ? undefined : 'no "id"';
};

/** An account: its `id`, and a `source` that is null or names its connection and its id. */
export const accountShape: ResponseShape = (body) => {
  const wrong = withId(body);
  if (wrong || !isObject(body)) return wrong;
  const source = body.source;
  if (source === undefined || source === null) return undefined;
  if (!isObject(source)) return `"source" is ${kindOf(source)}, neither a source reference nor null`;
  if (typeof source.connectionId !== 'string' || typeof source.sourceId !== 'string')
    return '"source" without its "connectionId" and "sourceId"';
  return undefined;
};

/** An invoice or a credit note: its `id`, and a `sourceId` that is a string or null when present. */
export const documentShape: ResponseShape = (body) => {
  const wrong = withId(body);
  if (wrong || !isObject(body)) return wrong;
  const sourceId = body.sourceId;
  if (sourceId !== undefined && sourceId !== null && typeof sourceId !== 'string')
    return `"sourceId" is ${kindOf(sourceId)}`;
  return undefined;
};

/** The notification preferences: the two fields the spec shows. */
export const preferencesShape: ResponseShape = (body) => {
  if (!isObject(body)) return `${kindOf(body)} where an object is due`;
  if (typeof body.digestFrequency !== 'string') return 'no "digestFrequency"';
  if (typeof body.newsletter !== 'boolean') return 'no boolean "newsletter"';
  return undefined;
};

/**
 * A page of a cursor list: `nodes` a list whose items pass `item`; `pageInfo`, when present, an
 * object whose `endCursor` is a string or null (a page without one ends the list: see `paginate`).
 */
export function pageOf(item: ResponseShape): ResponseShape {
  return (body) => {
    if (!isObject(body)) return `${kindOf(body)} where a page is due`;
    if (!Array.isArray(body.nodes)) return 'no "nodes" list';
    const pageInfo = body.pageInfo;
    if (pageInfo !== undefined) {
      if (!isObject(pageInfo)) return `"pageInfo" is ${kindOf(pageInfo)}`;
      const cursor = pageInfo.endCursor;
      if (cursor !== undefined && cursor !== null && typeof cursor !== 'string')
        return `"pageInfo.endCursor" is ${kindOf(cursor)}`;
    }
    return firstWrong(body.nodes, item, 'nodes');
  };
}

/** A plain JSON list (tags, members) whose items pass `item`. */
export function listOf(item: ResponseShape): ResponseShape {
  return (body) => (Array.isArray(body) ? firstWrong(body, item, '') : `${kindOf(body)} where a list is due`);
}

function firstWrong(items: readonly unknown[], item: ResponseShape, name: string): string | undefined {
  for (const [index, value] of items.entries()) {
    const wrong = item(value);
    if (wrong) return `${name}[${index}]: ${wrong}`;
  }
  return undefined;
}
