import type { FastifyInstance } from 'fastify';
import { authOf, requires, type SandboxDeps } from '../context.js';
import { badRequest } from '../errors.js';
import { foldText } from '../lists/index.js';
import type { ActorType, AuditEntry } from '../model.js';
import { ORGANIZATIONS_READ } from '../oauth/scopes.js';
import { integerParam, isUuid } from './organizations-validation.js';

/** `GET /organizations/{id}/audit`: page-numbered (not cursor) list, newest first. */

const ACTOR_TYPES: readonly ActorType[] = ['USER', 'AGENT', 'SYSTEM', 'SERVICE_ACCOUNT'];

interface AuditQuery {
  page: number;
  limit: number;
  accountId: string | undefined;
  actorTypes: readonly ActorType[] | undefined;
  action: string | undefined;
  search: string | undefined;
}

export interface AuditPage {
  items: AuditEntryView[];
  page: number;
  limit: number;
  /** Entries matching the filters, over all pages. */
  total: number;
}

export type AuditEntryView = Omit<AuditEntry, 'organizationId'>;

/** A query parameter given once; a repeated one is refused rather than silently reduced. */
function single(raw: unknown, field: string): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') throw badRequest(`${field} must be given once`);
  return raw;
}

/** `actorTypes=USER&actorTypes=AGENT` and `actorTypes=USER,AGENT` are both accepted. */
function actorTypesParam(raw: unknown): ActorType[] | undefined {
  if (raw === undefined) return undefined;
  const values = (Array.isArray(raw) ? raw : [raw])
    .flatMap((v) => String(v).split(','))
    .map((v) => v.trim())
    .filter((v) => v.length > 0);
  const unknown = values.filter((v) => !(ACTOR_TYPES as readonly string[]).includes(v));
  if (unknown.length > 0 || values.length === 0) {
    throw badRequest(`actorTypes accepts ${ACTOR_TYPES.join(', ')}; got "${unknown.join(',')}"`);
  }
  return values as ActorType[];
}

function parseAuditQuery(query: Record<string, unknown>): AuditQuery {
  const accountId = single(query.accountId, 'accountId');
  if (accountId !== undefined && !isUuid(accountId)) throw badRequest('accountId must be a uuid');
  const search = single(query.search, 'search');
  const action = single(query.action, 'action');
  return {
    page: integerParam(single(query.page, 'page'), 'page', {
      min: 1,
      max: Number.POSITIVE_INFINITY,
      fallback: 1,
    }),
    limit: integerParam(single(query.limit, 'limit'), 'limit', { min: 1, max: 100, fallback: 20 }),
    accountId: accountId?.toLowerCase(),
    actorTypes: actorTypesParam(query.actorTypes),
    action: action === '' ? undefined : action,
    search: search === undefined || search.trim() === '' ? undefined : foldText(search.trim()),
  };
}

/** Every scalar inside the metadata, however deeply nested, as text. */
function metadataTexts(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value.flatMap(metadataTexts);
  if (typeof value === 'object') return Object.values(value).flatMap(metadataTexts);
  return [String(value)];
}

const matchesSearch = (entry: AuditEntry, folded: string) =>
  [...metadataTexts(entry.metadata), ...entry.accountIds].some((text) => foldText(text).includes(folded));

function matches(entry: AuditEntry, query: AuditQuery): boolean {
  if (query.accountId && !entry.accountIds.some((id) => id.toLowerCase() === query.accountId)) return false;
  if (query.actorTypes && !query.actorTypes.includes(entry.actor.type)) return false;
  if (query.action !== undefined && entry.action !== query.action) return false;
  return query.search === undefined || matchesSearch(entry, query.search);
}

const entryView = ({ organizationId: _, ...entry }: AuditEntry): AuditEntryView => entry;

/** Newest first; entries of the same instant keep reverse recording order. */
function newestFirst(entries: readonly AuditEntry[]): AuditEntry[] {
  return entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => b.entry.createdAt.localeCompare(a.entry.createdAt) || b.index - a.index)
    .map(({ entry }) => entry);
}

export function registerAuditRoute(app: FastifyInstance, deps: SandboxDeps): void {
  const { store } = deps;
  app.get('/organizations/:organizationId/audit', requires(ORGANIZATIONS_READ), async (request) => {
    const { organizationId } = request.params as { organizationId: string };
    const org = store.organizationFor(organizationId, authOf(request).userId);
    const query = parseAuditQuery(request.query as Record<string, unknown>);
    const selected = newestFirst(
      store.auditEntries.filter((e) => e.organizationId === org.id && matches(e, query)),
    );
    const start = (query.page - 1) * query.limit;
    const page: AuditPage = {
      items: selected.slice(start, start + query.limit).map(entryView),
      page: query.page,
      limit: query.limit,
      total: selected.length,
    };
    return page;
  });
}
