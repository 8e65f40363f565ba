import Fastify, { type FastifyInstance } from 'fastify';
import type { ErrorCode } from '../domain/error-codes.js';
import type { Logger } from '../logging/logger.js';
import type { ReadinessCheck } from './deps.js';
import { registerHealthRoutes } from './health-routes.js';
import { DASHBOARD_CSS } from './views/assets.js';
import { startingPage } from './views/starting-page.js';

export interface StartingAppProps {
  /** What the worker waits for, as `/readyz` checks (`redis`, `database`, `api`). */
  checks: readonly ReadinessCheck[];
  logger: Logger;
}

/** How often a browser on the "starting" page asks again (the `Refresh` and `Retry-After` headers). */
const RETRY_SECONDS = 5;

/**
 * What the worker serves until the dashboard's dependencies (the state DB, Redis) answer: the
 * probes (`/healthz` ok, `/readyz` 503 naming what is missing) and, on every other path, 503 with a
 * page (or JSON) naming the dependencies it waits for, never their addresses or errors (public, as
 * the probes are; the reasons are in the log). Nothing else is served: no sign-in, no data.
 */
export function buildStartingApp(props: StartingAppProps): FastifyInstance {
  const logger = props.logger.child({ component: 'dashboard' });
  const app = Fastify({ logger: false });
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('cache-control', 'no-store');
    reply.header('content-security-policy', "default-src 'none'; style-src 'self'; frame-ancestors 'none'");
  });
  registerHealthRoutes(app, props.checks, logger);
  app.get('/assets/dashboard.css', (_request, reply) =>
    reply.type('text/css; charset=utf-8').send(DASHBOARD_CSS),
  );
  app.setNotFoundHandler(async (request, reply) => {
    const waitingFor = await notAnswering(props.checks);
    reply.code(503).header('retry-after', String(RETRY_SECONDS));
    if (request.method === 'GET' && (request.headers.accept ?? '').includes('text/html'))
      return reply
        .header('refresh', String(RETRY_SECONDS))
        .type('text/html; charset=utf-8')
        .send(startingPage(waitingFor).value);
    return reply.send({
      code: 'DASHBOARD_STARTING' satisfies ErrorCode,
      message: `the worker is starting: waiting for ${waitingFor.join(', ') || 'its last parts'}`,
      waitingFor,
    });
  });
  return app;
}

/** The names of the checks that do not pass now (failed or not tried yet). */
async function notAnswering(checks: readonly ReadinessCheck[]): Promise<string[]> {
  const outcomes = await Promise.all(
    checks.map(({ check }) =>
      check().then(
        (outcome) => outcome !== 'pending',
        () => false,
      ),
    ),
  );
  return checks.filter((_, i) => !outcomes[i]).map((c) => c.name);
}
