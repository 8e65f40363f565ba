import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { closeConnection } from '../../../src/jobs/redis-connection.js';
import { type PrivateRedis, startPrivateRedis } from '../../support/worker-process.js';

/**
 * A finished `sync --once` must exit even when Redis died during its pass: QUIT cannot be sent
 * then, and ioredis would go on reconnecting (its timers keeping the process alive) unless the
 * connection is dropped.
 */
describe('closeConnection (a private redis-server)', () => {
  let server: PrivateRedis | undefined;
  afterEach(async () => {
    await server?.kill();
  });

  it('when Redis answers, then the connection quits and ends', async () => {
    server = await startPrivateRedis();
    const redis = new Redis(server.url, { maxRetriesPerRequest: 3 });
    await redis.ping();
    const ended = once(redis, 'end');
    await closeConnection(redis);
    await ended;
    expect(redis.status).toBe('end');
  });

  it('when Redis died and the client is reconnecting, then the connection ends instead of reconnecting forever', async () => {
    server = await startPrivateRedis();
    const redis = new Redis(server.url, { maxRetriesPerRequest: 3 });
    redis.on('error', () => undefined);
    await redis.ping();
    await server.kill();
    // A command on the dead connection, as the rate limiter's: it fails after the retries.
    await expect(redis.ping()).rejects.toThrow();
    expect(redis.status).not.toBe('ready');
    let attempts = 0;
    redis.on('reconnecting', () => attempts++);
    await closeConnection(redis);
    // ioredis's default retry strategy waits at most 2 s between attempts; none may come.
    await sleep(2500);
    expect(attempts).toBe(0);
  });
});
