/** Query and path parameters shared by the balance, communication and task routes. */

import type { FastifyRequest } from 'fastify';
import { authOf, type SandboxDeps } from '../context.js';
import { badRequest } from '../errors.js';
import type { ListQuery } from '../lists/index.js';
import type { Organization } from '../model.js';
import { isUuid, organizationIdParam } from '../resources/input.js';

export type QueryRecord = Record<string, unknown>;

export const queryOf = (request: FastifyRequest): QueryRecord => (request.query ?? {}) as QueryRecord;

/** An optional uuid query parameter; absent or empty = undefined, malformed = 400 naming it. */
export function optionalUuidParam(value: unknown, name: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!isUuid(value)) throw badRequest(`${name} must be a uuid, got "${String(value)}"`);
  return value;
}

/** The organization named by the required `organizationId` query parameter: 400 missing/invalid, 404 unknown. */
export function organizationOfQuery(request: FastifyRequest, deps: SandboxDeps): Organization {
  return deps.store.organizationFor(organizationIdParam(request.query), authOf(request).userId);
}

/** The list parameters of a query, refusing repeated ones instead of reading one of them. */
export function listQueryOf(request: FastifyRequest): ListQuery {
  const query = queryOf(request);
  const text = (name: string): string | undefined => {
    const value = query[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw badRequest(`${name} must be given once`);
    return value;
  };
  return {
    first: text('first'),
    after: text('after'),
    filters: text('filters'),
    sortBy: text('sortBy'),
    sortOrder: text('sortOrder'),
  };
}

/** Operators of the filterable fields of the balance, communication and task lists (sandbox choices). */
export const NAME_OPERATORS = ['contains', 'startsWith', 'equals'] as const;
export const CHOICE_OPERATORS = ['is', 'isNot', 'isAnyOf'] as const;
export const NUMBER_OPERATORS = ['equals', 'greaterThan', 'lessThan', 'between'] as const;
export const DATE_OPERATORS = ['on', 'before', 'after', 'between'] as const;
export const LIST_OPERATORS = [
  'containsAny',
  'containsAll',
  'containsNone',
  'isEmpty',
  'isNotEmpty',
] as const;
