import { Redis } from 'ioredis';
import { readBudgetUse } from '../api/rate-limit/budget-use.js';
import type { TokenBudgetReader, ToldBudget } from '../dashboard/token-budgets.js';
import { messageOf } from '../domain/errors.js';
import { closeConnection, reconnectDelayMs } from '../jobs/redis-connection.js';
import type { Logger } from '../logging/logger.js';
import { readConnectionBudgets } from './connection-budgets.js';

export interface TokenBudgetReaderProps {
  redis: Redis;
  /** The worker's key prefix (`queue.prefix`): where it publishes its connections' budgets. */
  prefix: string;
  /** The rate limiter's key prefix (its budgets' logs). Default: `prefix`. */
  limiterPrefix?: string | undefined;
  /** A reading slower than this counts as unavailable (default 1000 ms). */
  timeoutMs?: number | undefined;
  logger: Logger;
}

/**
 * The reader of the connections' budgets: one HGETALL of what the workers published
 * (`readConnectionBudgets`), then the limiter's figures of each distinct budget (a few commands
 * each), within `timeoutMs`. A failure is logged once per outage (the page refreshes every 2 s).
 *
 * @example
 * const read = tokenBudgetReader({ redis, prefix: 'receivables-sync', logger });
 * const reading = await read();
 * if (reading.available) reading.byConnection.get('default')?.use.requestsInWindow;
 */
export function tokenBudgetReader(props: TokenBudgetReaderProps): TokenBudgetReader {
  const limiterPrefix = props.limiterPrefix ?? props.prefix;
  const timeoutMs = props.timeoutMs ?? 1000;
  let failing = false;
  const readAll = async (): Promise<Map<string, ToldBudget>> => {
    const told = await readConnectionBudgets(props.redis, props.prefix);
    // Two connections may share one token (one budget): each budget is read once.
    const keys = [...new Set([...told.values()].map((b) => b.budgetKey))];
    const uses = new Map(
      await Promise.all(
        keys.map(async (key) => [key, await readBudgetUse(props.redis, limiterPrefix, key)] as const),
      ),
    );
    const byConnection = new Map<string, ToldBudget>();
    for (const [connectionId, budget] of told) {
      const use = uses.get(budget.budgetKey);
      if (!use) continue;
      byConnection.set(connectionId, {
        organizations: budget.organizations,
        toldAt: new Date(budget.seenAt),
        use: {
          requestsInWindow: use.requestsInWindow,
          quota: use.quota ?? null,
          windowSeconds: use.windowSeconds ?? null,
          waiting: use.waiting.map((w) => ({ flow: w.flow, requests: w.requests })),
        },
      });
    }
    return byConnection;
  };
  return async () => {
    try {
      const byConnection = await withinMs(readAll(), timeoutMs);
      if (failing)
        props.logger.info({ event: 'dashboard.budgets.back' }, 'dashboard: token budgets read again');
      failing = false;
      return { available: true, byConnection };
    } catch (error) {
      if (!failing)
        props.logger.warn(
          { event: 'dashboard.budgets.unavailable', err: messageOf(error) },
          'dashboard: cannot read the token budgets from Redis (shown as unavailable)',
        );
      failing = true;
      return { available: false };
    }
  };
}

/** `promise`, or a rejection after `ms` (its late settlement is ignored). */
function withinMs<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  promise.catch(() => {});
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export interface OpenTokenBudgetsProps extends Omit<TokenBudgetReaderProps, 'redis'> {
  redisUrl: string;
}

/**
 * A reader over a Redis connection of its own that fails fast: no offline queue (during an outage a
 * command fails at once instead of piling up with every page refresh), one retry, a 1 s command
 * timeout. The queues' connection waits through outages, which suits jobs, not a page. `close()`
 * releases the connection.
 */
export function openTokenBudgets(props: OpenTokenBudgetsProps): {
  read: TokenBudgetReader;
  close(): Promise<void>;
} {
  const redis = new Redis(props.redisUrl, {
    connectionName: 'receivables-sync-dashboard-budgets',
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
    connectTimeout: 2000,
    retryStrategy: reconnectDelayMs,
  });
  // The reader logs an outage once; ioredis would emit an error per reconnection attempt.
  redis.on('error', () => {});
  return { read: tokenBudgetReader({ ...props, redis }), close: () => closeConnection(redis) };
}
