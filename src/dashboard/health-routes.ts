import type { FastifyInstance } from 'fastify';
import type { Logger } from '../logging/logger.js';
import type { ReadinessCheck } from './deps.js';

/**
 * Probes, public and without details an outsider could use: `/healthz` says the process serves,
 * `/readyz` that its dependencies answer (503 naming the one that does not; the reason is logged).
 */
export function registerHealthRoutes(
  app: FastifyInstance,
  checks: readonly ReadinessCheck[],
  logger: Logger,
): void {
  app.get('/healthz', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { status: 'ok' };
  });

  app.get('/readyz', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    const results: Record<string, 'ok' | 'failed'> = {};
    await Promise.all(
      checks.map(async ({ name, check }) => {
        try {
          await withTimeout(check(), 3000, name);
          results[name] = 'ok';
        } catch (error) {
          results[name] = 'failed';
          logger.warn({ check: name, err: (error as Error).message }, 'readiness check failed');
        }
      }),
    );
    const ready = Object.values(results).every((r) => r === 'ok');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks: results });
  });
}

async function withTimeout(promise: Promise<void>, ms: number, name: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} did not answer within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
