import { AppError } from '../domain/errors.js';
import { DEFAULT_CONNECTION } from './connections.js';
import type { SourceConfig } from './schema.js';

/** What a source's organization is settled from: the connection's id (for messages) and its `api.organizationId`. */
export interface OrganizationConnection {
  id: string;
  api: { organizationId?: string | null | undefined };
}

/** An organization the configuration names, and which key named it. */
export interface NamedOrganization {
  id: string;
  from: 'source' | 'connection';
}

/**
 * A source's organization, settled (`from` says how), or why it cannot be: nothing names one and
 * the token sees none or several (or its organizations are not listed yet).
 */
export type SettledOrganization =
  | { organizationId: string; from: 'source' | 'connection' | 'token' }
  | { organizationId: null; from: 'unresolved'; error: AppError };

/**
 * The organization the configuration names for a source: its own `organizationId`, else its
 * connection's `api.organizationId`; null when neither does (it syncs into the one its token sees).
 * The part of `settleOrganization` that needs no request: for code that shows the configuration
 * (`status`, the dashboard), and to know whether settling costs a listing. Without a source: the
 * organization of the connection's sources that name none.
 *
 * @example
 * namedOrganization({ organizationId: undefined }, { id: 'default', api: { organizationId: ORG } }); // { id: ORG, from: 'connection' }
 */
export function namedOrganization(
  source: Pick<SourceConfig, 'organizationId'> | undefined,
  connection: Pick<OrganizationConnection, 'api'> | undefined,
): NamedOrganization | null {
  if (source?.organizationId) return { id: source.organizationId, from: 'source' };
  if (connection?.api.organizationId) return { id: connection.api.organizationId, from: 'connection' };
  return null;
}

/**
 * The one rule of which organization a source syncs into: the one the configuration names
 * (`namedOrganization`), else the only one its token sees (`visible`: the ids `GET /organizations`
 * listed; undefined when not listed), else none, with an `ORGANIZATION_UNKNOWN` configuration error
 * naming what to set. Whether a named organization is among the visible ones is the caller's check.
 *
 * @example
 * const settled = settleOrganization(source, connection, await listOrganizationIds());
 * if (settled.organizationId === null) throw settled.error;
 */
export function settleOrganization(
  source: Pick<SourceConfig, 'organizationId'> | undefined,
  connection: OrganizationConnection,
  visible: readonly string[] | undefined,
): SettledOrganization {
  const named = namedOrganization(source, connection);
  if (named) return { organizationId: named.id, from: named.from };
  if (visible?.length === 1) return { organizationId: visible[0]!, from: 'token' };
  return { organizationId: null, from: 'unresolved', error: unknownOrganization(connection.id, visible) };
}

function unknownOrganization(connectionId: string, visible: readonly string[] | undefined): AppError {
  const which =
    connectionId === DEFAULT_CONNECTION
      ? 'RECEIVABLES_ORGANIZATION_ID (or api.organizationId)'
      : `connections.${connectionId}.organizationId`;
  const message =
    visible === undefined
      ? `the organizations the token of connection "${connectionId}" sees are not listed yet: set ${which}, or the source's organizationId`
      : visible.length === 0
        ? `the token of connection "${connectionId}" sees no organization`
        : `the token sees several organizations: set ${which}, or the source's organizationId`;
  return new AppError('ORGANIZATION_UNKNOWN', message);
}
