import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { SourceConfig } from '../config/schema.js';
import { AppError, errorCodeOf, messageOf } from '../domain/errors.js';
import type { ApiTargets } from './api-targets.js';
import type { WorkerReadiness } from './worker-readiness.js';

/**
 * What a worker tells the dashboard of one connection: the rate budget its token uses now (the
 * limiter's key: a hash of the token, never the token) and the organizations the token sees.
 */
export interface ConnectionBudget {
  connectionId: string;
  budgetKey: string;
  organizations: string[];
  /** When a worker last told it (epoch ms). */
  seenAt: number;
}

/** The HASH of connection id -> JSON `ConnectionBudget`, under the worker's prefix. */
export const connectionBudgetsKey = (prefix: string) => `${prefix}:connections`;

/** A connection no worker told about for this long is left out of the dashboard. */
const FORGET_MS = 24 * 3600 * 1000;

/** Writes the connections' budgets (one HSET); the HASH lapses a day after the last write. */
export async function publishConnectionBudgets(
  redis: Redis,
  prefix: string,
  budgets: ReadonlyArray<Omit<ConnectionBudget, 'seenAt'>>,
  now = Date.now(),
): Promise<void> {
  if (budgets.length === 0) return;
  const key = connectionBudgetsKey(prefix);
  const fields = budgets.flatMap((b) => [b.connectionId, JSON.stringify({ ...b, seenAt: now })]);
  await redis
    .multi()
    .hset(key, ...fields)
    .pexpire(key, FORGET_MS)
    .exec();
}

/** The budgets the workers told, by connection id (entries older than a day left out). */
export async function readConnectionBudgets(
  redis: Redis,
  prefix: string,
  now = Date.now(),
): Promise<Map<string, ConnectionBudget>> {
  const raw = await redis.hgetall(connectionBudgetsKey(prefix));
  const budgets = new Map<string, ConnectionBudget>();
  for (const [connectionId, json] of Object.entries(raw)) {
    try {
      const parsed = JSON.parse(json) as ConnectionBudget;
      if (now - parsed.seenAt <= FORGET_MS) budgets.set(connectionId, parsed);
    } catch {
      // Not written by this version: ignored.
    }
  }
  return budgets;
}

/**
 * Publishes `budgets()` every `intervalMs` (default 5 s) while the worker runs; a Redis outage is
 * logged at debug level (the worker's connection watch reports it) and the next tick tries again.
 */
export function startBudgetPublisher(props: {
  redis: Redis;
  prefix: string;
  budgets: () => ReadonlyArray<Omit<ConnectionBudget, 'seenAt'>>;
  logger: Logger;
  intervalMs?: number;
}): { stop(): Promise<void> } {
  let last: Promise<void> = Promise.resolve();
  const tick = () => {
    last = publishConnectionBudgets(props.redis, props.prefix, props.budgets()).catch((error: unknown) =>
      props.logger.debug({ err: messageOf(error) }, 'connection budgets not published'),
    );
  };
  const timer = setInterval(tick, props.intervalMs ?? 5000);
  timer.unref();
  tick();
  return {
    stop: async () => {
      clearInterval(timer);
      await last;
    },
  };
}

/** What `check` finds when the API answered but a source's organization is not the token's to sync into. */
const ORGANIZATION_PROBLEMS = new Set(['ORGANIZATION_NOT_VISIBLE', 'ORGANIZATION_UNKNOWN']);

/** The wait before the next check of the connections while an API cannot be reached: 1 s, doubling, at most 60 s. */
export const connectionCheckDelayMs = (attempt: number): number =>
  Math.min(1000 * 2 ** Math.min(attempt, 6), 60_000);

/**
 * The worker's watch of its connections: each source's connection and organization checked at
 * start (one read per connection) without holding the start up, and again with backoff while an
 * API cannot be reached or refuses the token, until every connection answered (told to
 * `readiness`: `/readyz`'s `api`). An organization out of a token's reach is logged as an error,
 * once: the source cannot sync until its configuration changes. The sources' passes do not wait for
 * this check: each resolves its own organization on its first pass that reaches the API. Each
 * token's budget is published for the dashboard meanwhile.
 */
export function watchConnections(props: {
  targets: Pick<ApiTargets, 'check' | 'budgets'>;
  sources: readonly SourceConfig[];
  redis: Redis;
  prefix: string;
  logger: Logger;
  /** How often the budgets are published (default 5 s). */
  intervalMs?: number;
  /** Told each check's outcome (the worker's readiness). */
  readiness?: Pick<WorkerReadiness, 'trying' | 'missing' | 'answered'> | undefined;
  /** Default `connectionCheckDelayMs`. */
  retryDelayMs?: (attempt: number) => number;
}): { stop(): Promise<void> } {
  const { logger, readiness } = props;
  const stopping = new AbortController();
  const retryDelayMs = props.retryDelayMs ?? connectionCheckDelayMs;
  const told = new Set<string>();
  const checkUntilReached = async () => {
    for (let attempt = 0; !stopping.signal.aborted; attempt++) {
      readiness?.trying('api');
      const problems = await props.targets
        .check(props.sources)
        .catch((error: unknown) => [{ sourceId: null as string | null, error }]);
      if (stopping.signal.aborted) return;
      // The API answered a source whose organization is out of its token's reach; any other
      // problem (unreachable, credentials refused or unusable) is retried: it may pass, or be fixed.
      const outages = problems.filter((p) => !ORGANIZATION_PROBLEMS.has(errorCodeOf(p.error) ?? ''));
      for (const { sourceId, error } of problems) {
        const config = error instanceof AppError && error.kind === 'config';
        if (!config || told.has(`${sourceId}:${messageOf(error)}`)) continue;
        told.add(`${sourceId}:${messageOf(error)}`);
        logger.error(
          { event: 'connections.check', sourceId, err: messageOf(error) },
          'a source cannot sync until its configuration is fixed',
        );
      }
      if (outages.length === 0) {
        readiness?.answered('api');
        return;
      }
      const wait = retryDelayMs(attempt);
      // The first outage of each source is worth a line; the retries are the readiness's to tell.
      for (const { sourceId, error } of attempt === 0 ? outages : []) {
        if (error instanceof AppError && error.kind === 'config') continue;
        logger.warn(
          { event: 'connections.check', sourceId, err: messageOf(error), retryInMs: wait },
          'connections not checked at start',
        );
      }
      readiness?.missing('api', outages[0]!.error, wait);
      await sleep(wait, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  };
  // Not awaited on stop: a check still waiting for an API must not hold the shutdown up.
  void checkUntilReached();
  const publisher = startBudgetPublisher({
    redis: props.redis,
    prefix: props.prefix,
    budgets: () => props.targets.budgets(),
    logger,
    ...(props.intervalMs ? { intervalMs: props.intervalMs } : {}),
  });
  return {
    stop: () => {
      stopping.abort();
      return publisher.stop();
    },
  };
}
