import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { SourceConfig } from '../config/schema.js';
import { AppError, messageOf } from '../domain/errors.js';
import type { ApiTargets } from './api-targets.js';

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

/**
 * The worker's watch of its connections: each source's connection and organization checked once at
 * start (one read per connection) without holding the start up (an organization out of a token's
 * reach is logged as an error now; an unreachable API only delays the check to the sources'
 * passes, which heal with it), and each token's budget published for the dashboard.
 */
export function watchConnections(props: {
  targets: Pick<ApiTargets, 'check' | 'budgets'>;
  sources: readonly SourceConfig[];
  redis: Redis;
  prefix: string;
  logger: Logger;
  /** How often the budgets are published (default 5 s). */
  intervalMs?: number;
}): { stop(): Promise<void> } {
  const { logger } = props;
  // Not awaited on stop: a check still waiting for an API must not hold the shutdown up.
  void props.targets.check(props.sources).then(
    (problems) => {
      for (const { sourceId, error } of problems) {
        const config = error instanceof AppError && error.kind === 'config';
        logger[config ? 'error' : 'warn'](
          { event: 'connections.check', sourceId, err: messageOf(error) },
          config
            ? 'a source cannot sync until its configuration is fixed'
            : 'connections not checked at start',
        );
      }
    },
    (error: unknown) =>
      logger.warn({ event: 'connections.check', err: messageOf(error) }, 'connections not checked at start'),
  );
  const publisher = startBudgetPublisher({
    redis: props.redis,
    prefix: props.prefix,
    budgets: () => props.targets.budgets(),
    logger,
    ...(props.intervalMs ? { intervalMs: props.intervalMs } : {}),
  });
  return {
    stop: () => publisher.stop(),
  };
}
