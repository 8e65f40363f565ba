import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RedisUnavailableError } from '../domain/redis-unavailable.js';
import { settlesWithin } from '../domain/settle.js';

export interface QueueConnectionProps {
  url: string;
  logger: Logger;
  /** `CLIENT SETNAME`, shown by `CLIENT LIST`. */
  name?: string;
}

/** Reconnection delays: 200 ms, doubling, at most 3 s, for as long as it takes. */
export const reconnectDelayMs = (attempt: number): number => Math.min(100 * 2 ** Math.min(attempt, 5), 3000);

/**
 * An ioredis connection as BullMQ needs it: commands wait through an outage instead of failing
 * (`maxRetriesPerRequest: null`, required for workers' blocking commands) and the connection comes
 * back by itself after a Redis restart. A lost connection is logged once, and its return once.
 */
export function openQueueConnection(props: QueueConnectionProps): Redis {
  const redis = new Redis(props.url, {
    maxRetriesPerRequest: null,
    connectionName: props.name ?? 'receivables-sync-worker',
    retryStrategy: reconnectDelayMs,
  });
  watchConnection(redis, props.logger);
  return redis;
}

/** Logs the first error of an outage and the reconnection; ioredis emits an error per failed attempt. */
export function watchConnection(redis: Redis, logger: Logger): void {
  let lost = false;
  redis.on('error', (error: Error) => {
    if (lost) return;
    lost = true;
    logger.warn({ event: 'redis.lost', err: error.message }, 'Redis connection lost, reconnecting');
  });
  redis.on('ready', () => {
    if (!lost) return;
    lost = false;
    logger.info({ event: 'redis.back' }, 'Redis connection back');
  });
}

/** Waits for the first answer of Redis, or fails after `timeoutMs` (the worker cannot run without it). */
export async function waitForRedis(redis: Redis, url: string, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new RedisUnavailableError(`cannot reach Redis at ${redactedUrl(url)} within ${timeoutMs / 1000} s`),
        ),
      timeoutMs,
    );
  });
  try {
    await Promise.race([redis.ping(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The `maxmemory-policy` of the server: from `CONFIG GET`, else from `INFO memory` (managed Redis
 * services often disable `CONFIG`); null when neither tells.
 */
export async function evictionPolicyOf(redis: Redis): Promise<string | null> {
  try {
    const reply = (await redis.config('GET', 'maxmemory-policy')) as unknown;
    if (Array.isArray(reply) && typeof reply[1] === 'string') return reply[1];
  } catch {
    // CONFIG is disabled: fall back to INFO.
  }
  try {
    const info = await redis.info('memory');
    return /^maxmemory_policy:(\S+)/m.exec(info)?.[1] ?? null;
  } catch {
    return null;
  }
}

/**
 * BullMQ keeps jobs and locks in Redis: a server that evicts keys under memory pressure loses
 * them silently. Only `noeviction` is safe; anything else is worth a warning at start.
 */
export async function warnUnlessNoEviction(redis: Redis, logger: Logger): Promise<string | null> {
  const policy = await evictionPolicyOf(redis);
  if (policy === null) {
    logger.warn('cannot read the Redis maxmemory-policy; it must be "noeviction" for the queues to be safe');
  } else if (policy !== 'noeviction') {
    logger.warn(
      { maxmemoryPolicy: policy },
      'Redis maxmemory-policy is not "noeviction": under memory pressure Redis may evict queued jobs and locks',
    );
  }
  return policy;
}

/** The URL without its password, for messages. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured URL';
  }
}

/**
 * Closes a connection for good: QUIT when Redis answers (within 2 s), then the socket is dropped in
 * any case. During an outage QUIT fails or waits while ioredis keeps reconnecting, and those
 * reconnection timers alone would keep a finished `sync --once` process alive.
 */
export async function closeConnection(redis: Pick<Redis, 'quit' | 'disconnect' | 'status'>): Promise<void> {
  if (redis.status === 'ready')
    await settlesWithin(
      redis.quit().catch(() => undefined),
      2000,
    );
  redis.disconnect();
}
