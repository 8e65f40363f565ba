import { apiConnections, connectionIdOf, DEFAULT_CONNECTION } from '../config/connections.js';
import type { LoadedConfig } from '../config/load.js';
import type { SourceConfig } from '../config/schema.js';
import { namedOrganization, settleOrganization } from '../config/source-organization.js';
import type { TokenBudgetReading } from './token-budgets.js';

/** A configured API connection as the dashboard shows it (no credentials). */
export interface DashboardConnection {
  id: string;
  /** The service's base URL; null when not configured. */
  baseUrl: string | null;
  /** The organization of its sources that name none; null when unset. */
  organizationId: string | null;
}

/**
 * Why a connection's budget is (not) shown: `ok` (a worker told it, Redis answered), `not-told`
 * (no worker told it in the last day), `unavailable` (Redis did not answer), `unknown` (this
 * dashboard has no Redis: it cannot see the workers' budgets).
 */
export type BudgetStatus = 'ok' | 'not-told' | 'unavailable' | 'unknown';

/** A token's use of its rate budget: the requests of the last window against the policy. */
export interface TokenBudgetView {
  /** Requests in the policy's window (every logged one while no policy is known). */
  requestsInWindow: number;
  /** The policy the server told (`RateLimit-Policy`); null until a response told it. */
  quota: number | null;
  windowSeconds: number | null;
  /** The flows waiting for it now: a source id (or '' for requests outside a pass) and its requests. */
  waiting: Array<{ flow: string; requests: number }>;
  /** When a worker last told this connection's budget (ISO). */
  toldAt: string;
}

/**
 * Where an organization's id came from: the source's `organizationId`, its connection's, the
 * last run of the source, or the token (the only organization the worker saw it reach). `id` is
 * null when none tells: the source syncs into its token's only organization, not known here.
 */
export type OrganizationFrom = 'source' | 'connection' | 'last-run' | 'token' | 'unresolved';

export interface OrganizationGroupView {
  id: string | null;
  from: OrganizationFrom;
  /** Source ids, in configuration order. */
  sources: string[];
}

/** A connection with sources, its token's budget and its sources by organization. */
export interface ConnectionGroupView {
  id: string;
  baseUrl: string | null;
  /** The base URL's host (`receivables.example.com`), for the heading. */
  host: string | null;
  budget: TokenBudgetView | null;
  budgetStatus: BudgetStatus;
  organizations: OrganizationGroupView[];
}

/** The connections of a configuration as the dashboard needs them, the default one first. */
export function dashboardConnectionsOf(loaded: LoadedConfig): DashboardConnection[] {
  return [...apiConnections(loaded).values()].map((c) => ({
    id: c.id,
    baseUrl: c.api.baseUrl ?? null,
    organizationId: namedOrganization(undefined, c)?.id ?? null,
  }));
}

export interface ConnectionGroupsInput {
  sources: readonly Pick<SourceConfig, 'id' | 'connection' | 'organizationId'>[];
  /** The configured connections; one missing here is shown by its id alone. */
  connections: readonly DashboardConnection[];
  /** The connection and organization each source's latest run recorded ('' when not stamped). */
  lastRuns: ReadonlyMap<string, { connectionId: string; organizationId: string }>;
  /** Null when the dashboard has no Redis. */
  budgets: TokenBudgetReading | null;
}

/**
 * The sources grouped by connection (in the order of their first source), then by organization:
 * the source's `organizationId`, else its connection's, else the one its latest run recorded
 * through the same connection, else the token's only organization when the worker told it sees
 * exactly one, else unresolved ("its token's only organization").
 */
export function connectionGroups(input: ConnectionGroupsInput): ConnectionGroupView[] {
  const configured = new Map(input.connections.map((c) => [c.id, c]));
  const groups = new Map<string, ConnectionGroupView>();
  for (const source of input.sources) {
    const connectionId = connectionIdOf(source);
    let group = groups.get(connectionId);
    if (!group) {
      group = newGroup(configured.get(connectionId) ?? fallbackConnection(connectionId), input.budgets);
      groups.set(connectionId, group);
    }
    const told = input.budgets?.available ? input.budgets.byConnection.get(connectionId) : undefined;
    const { id, from } = organizationOf(
      source,
      configured.get(connectionId),
      input.lastRuns.get(source.id),
      told?.organizations,
    );
    const organization = group.organizations.find((o) => o.id === id);
    if (organization) organization.sources.push(source.id);
    else group.organizations.push({ id, from, sources: [source.id] });
  }
  return [...groups.values()];
}

function organizationOf(
  source: Pick<SourceConfig, 'connection' | 'organizationId'>,
  connection: DashboardConnection | undefined,
  lastRun: { connectionId: string; organizationId: string } | undefined,
  tokenOrganizations: readonly string[] | undefined,
): { id: string | null; from: OrganizationFrom } {
  const configured = { id: connectionIdOf(source), api: { organizationId: connection?.organizationId } };
  const named = namedOrganization(source, configured);
  if (named) return named;
  if (lastRun?.organizationId && lastRun.connectionId === configured.id)
    return { id: lastRun.organizationId, from: 'last-run' };
  // Nothing names one and no run recorded one: the token's only organization, when the worker told it.
  const settled = settleOrganization(source, configured, tokenOrganizations);
  return { id: settled.organizationId, from: settled.from };
}

function newGroup(connection: DashboardConnection, budgets: TokenBudgetReading | null): ConnectionGroupView {
  const base = {
    id: connection.id,
    baseUrl: connection.baseUrl,
    host: hostOf(connection.baseUrl),
    organizations: [],
  };
  if (budgets === null) return { ...base, budget: null, budgetStatus: 'unknown' };
  if (!budgets.available) return { ...base, budget: null, budgetStatus: 'unavailable' };
  const told = budgets.byConnection.get(connection.id);
  if (!told) return { ...base, budget: null, budgetStatus: 'not-told' };
  return {
    ...base,
    budget: {
      ...told.use,
      waiting: told.use.waiting.map((w) => ({ ...w })),
      toldAt: told.toldAt.toISOString(),
    },
    budgetStatus: 'ok',
  };
}

const fallbackConnection = (id: string): DashboardConnection => ({
  id,
  baseUrl: null,
  organizationId: null,
});

function hostOf(baseUrl: string | null): string | null {
  if (!baseUrl) return null;
  try {
    return new URL(baseUrl).host;
  } catch {
    return baseUrl;
  }
}

/** True when the grouping is worth headings: more than one connection, or one that is not the default. */
export const showsConnectionHeadings = (groups: readonly ConnectionGroupView[]): boolean =>
  groups.length > 1 || (groups.length === 1 && groups[0]!.id !== DEFAULT_CONNECTION);
