import type { FastifyInstance } from 'fastify';
import type { Logger } from '../logging/logger.js';
import type { ReadinessCheck } from './deps.js';

/**
 * Probes, public and without details an outsider could use: `/healthz` says the process serves,
 * `/readyz` that its dependencies answer (503 naming the one that does not, `failed`, or has not
 * been tried yet, `pending`; the reason is logged).
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

  /** The reason last logged of each failing check. */
  const told = new Map<string, string>();
  app.get('/readyz', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    // In the order of `checks`, whichever answers first.
    const results = Object.fromEntries(
      await Promise.all(
        checks.map(async ({ name, check }) => {
          try {
            const outcome = await withTimeout(check(), 3000, name);
            told.delete(name);
            return [name, outcome === 'pending' ? 'pending' : 'ok'] as const;
          } catch (error) {
            const message = (error as Error).message;
            // A probe every few seconds through an outage: its reason is worth a line when it changes.
            const level = told.get(name) === message ? 'debug' : 'warn';
            told.set(name, message);
            logger[level]({ check: name, err: message }, 'readiness check failed');
            return [name, 'failed'] as const;
          }
        }),
      ),
    );
    const ready = Object.values(results).every((r) => r === 'ok');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks: results });
  });
}

async function withTimeout<T>(promise: Promise<T>, ms: number, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
