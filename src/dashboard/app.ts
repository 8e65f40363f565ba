import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import formbody from '@fastify/formbody';
import type { Queue } from 'bullmq';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import type { ErrorCode } from '../domain/error-codes.js';
import type { Logger } from '../logging/logger.js';
import { SyncMetrics } from '../metrics/sync-metrics.js';
import { FailuresRepository } from '../state/failures.js';
import { PausedSources } from '../state/paused-sources.js';
import { ReconciliationsRepository } from '../state/reconciliations.js';
import { RunsRepository } from '../state/runs.js';
import { StatusQueries } from '../state/status-queries.js';
import { fromSourcePage, registerActionRoutes } from './action-routes.js';
import { DashboardAuth, refuse, wantsHtml } from './auth.js';
import { registerAuthRoutes } from './auth-routes.js';
import { BULL_BOARD_PATH, bullBoardPlugin } from './bull-board.js';
import { registerConnectionRoutes } from './connection-routes.js';
import { assertServable } from './credentials.js';
import { CsrfTokens, sameOrigin } from './csrf.js';
import type { DashboardDeps, ReadinessCheck } from './deps.js';
import { registerDetailRoutes } from './detail-routes.js';
import { DashboardError } from './errors.js';
import { registerFailureRoutes, sourcePagePath } from './failure-routes.js';
import { registerHealthRoutes } from './health-routes.js';
import { noticeQuery } from './notices.js';
import { registerPageRoutes } from './page-routes.js';
import { lastReconciliations, registerReconciliationRoutes } from './reconciliation-routes.js';
import { SessionStore } from './sessions.js';
import { SignInBackoff } from './sign-in-backoff.js';
import { sourceProfiles } from './source-profile.js';
import { type QueueView, StatusReader } from './status.js';
import { registerUploadRoutes } from './upload-routes.js';
import { DASHBOARD_CSS, DASHBOARD_JS } from './views/assets.js';
import { refusalPage } from './views/sign-in-page.js';

/**
 * Our own pages load nothing but `/assets/*`, post only to themselves and are never framed
 * (bull-board's pages replace it with `BULL_BOARD_CSP`, see bull-board-page.ts).
 */
const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The dashboard's Fastify app, not listening (tests use `inject`; `startDashboard` listens).
 *
 * Public: `/healthz`, `/readyz`, `/login`, `/assets/*`. Behind the sign-in (HTTP Basic or the
 * session cookie of the sign-in form): the sync page `/`, `/partials/status`, `/api/status`, the
 * POST actions under `/actions/`, `/metrics` and bull-board under `/queues`. Every POST must come
 * from this origin (Origin check) and the actions also carry a synchronizer token. bull-board is
 * read-only unless `queueAdmin`; then its writes need the same token (see `bullBoardPlugin`).
 *
 * @throws DashboardConfigError when `host` is beyond loopback and there are no credentials.
 * @example
 * const app = buildDashboardApp({ sources, db, queues, credentials, host: '127.0.0.1', clock: systemClock, logger });
 * const res = await app.inject({ url: '/api/status', headers: { authorization: `Basic ${b64}` } });
 */
export function buildDashboardApp(deps: DashboardDeps): FastifyInstance {
  assertServable(deps.host, deps.credentials);
  const logger = deps.logger.child({ component: 'dashboard' });
  const random = deps.randomBytes ?? cryptoRandomBytes;
  const queries = new StatusQueries(deps.db);
  const paused = new PausedSources(deps.db);
  const reconciliationsRepo = new ReconciliationsRepository(deps.db);
  const profileOf = sourceProfiles(deps.sources, deps.describeSource);
  const queues = deps.queues;
  const metrics =
    deps.metrics ??
    new SyncMetrics({
      queues: () => queues?.queues ?? [],
      lastSuccess: () => queries.lastSuccesses(),
      reconciliations: lastReconciliations(deps.db),
      sourceIds: deps.sources.map((s) => s.id),
      logger,
    });
  const csrf = new CsrfTokens(random(32));
  const auth = new DashboardAuth({
    credentials: deps.credentials,
    sessions: new SessionStore({
      clock: deps.clock,
      newId: () => random(32).toString('base64url'),
      ...(deps.sessionTtlMs ? { ttlMs: deps.sessionTtlMs } : {}),
    }),
    backoff: new SignInBackoff({ clock: deps.clock }),
    wait: deps.wait ?? ((ms) => sleep(ms)),
    csrf,
    logger,
  });
  const status = new StatusReader({
    sources: deps.sources,
    queries,
    paused,
    clock: deps.clock,
    ...(queues ? { queueCounts: () => queueCounts(queues.queues, logger) } : {}),
    reconciliations: () => reconciliationsRepo.latest(),
    connections: deps.connections,
    tokenBudgets: deps.tokenBudgets,
  });
  const checks: ReadinessCheck[] = [
    { name: 'database', check: () => queries.ping() },
    ...(queues && queues.queues.length > 0
      ? [{ name: 'redis', check: async () => void (await queues.queues[0]!.getJobCounts('waiting')) }]
      : []),
    ...(deps.readiness ?? []),
  ];

  // trustProxy: behind a TLS-terminating proxy, request.protocol / host / ip are the browser's
  // (X-Forwarded-*), which the Origin check, the cookies' Secure flag and the sign-in back-off use.
  const { trustProxy = false } = deps;
  const app = Fastify({
    logger: false,
    trustProxy: typeof trustProxy === 'boolean' ? trustProxy : [...trustProxy],
    bodyLimit: 64 * 1024,
  });
  app.register(formbody);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'same-origin');
    reply.header('content-security-policy', PAGE_CSP);
    const safe = request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS';
    if (!safe && !sameOrigin(request)) {
      logger.warn(
        { url: request.url, origin: request.headers.origin },
        'dashboard: cross-origin request refused',
      );
      await refuse(
        reply.code(403),
        request,
        'DASHBOARD_ORIGIN_REFUSED',
        'This request came from another site: refused.',
      );
    }
  });

  app.setErrorHandler(async (error: FastifyError | DashboardError, request, reply) => {
    if (error instanceof DashboardError) {
      if (request.method === 'POST' && wantsHtml(request)) {
        const params = (request.params ?? {}) as Record<string, string>;
        // An action on failures goes back to its source's page; the others to the sync page.
        const back =
          request.url.startsWith('/actions/failures/') && error.details.source
            ? sourcePagePath(error.details.source)
            : fromSourcePage(request) && params.sourceId
              ? sourcePagePath(params.sourceId)
              : '/';
        return reply.redirect(
          noticeQuery({ code: error.code, source: params.sourceId, ...error.details }, back),
          303,
        );
      }
      if (request.method === 'GET' && wantsHtml(request))
        return reply
          .code(error.status)
          .type('text/html; charset=utf-8')
          .send(refusalPage(error.status === 404 ? 'Not found' : 'Refused', error.message).value);
      return reply.code(error.status).send({ code: error.code, message: error.message });
    }
    const statusCode = (error as FastifyError).statusCode;
    if (statusCode !== undefined && statusCode >= 400 && statusCode < 500) {
      return reply.code(statusCode).send({
        code: (error as FastifyError).code ?? ('DASHBOARD_BAD_REQUEST' satisfies ErrorCode),
        message: error.message,
      });
    }
    logger.error({ err: error, url: request.url }, 'dashboard request failed');
    return reply
      .code(500)
      .send({ code: 'DASHBOARD_INTERNAL' satisfies ErrorCode, message: 'internal error (see the logs)' });
  });

  registerHealthRoutes(app, checks, logger);
  app.get('/assets/dashboard.css', (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'no-cache').send(DASHBOARD_CSS),
  );
  app.get('/assets/dashboard.js', (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(DASHBOARD_JS),
  );
  registerAuthRoutes(app, auth);

  app.register(async (scope) => {
    scope.addHook('onRequest', auth.requireAuth);
    scope.addHook('onSend', async (_request, reply) => {
      if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    });
    registerPageRoutes(scope, {
      auth,
      status,
      clock: deps.clock,
      hasQueues: queues !== undefined,
      refreshMs: deps.refreshMs ?? 2000,
      sourceIds: new Set(deps.sources.map((s) => s.id)),
      profileOf,
      canTestConnection: deps.testConnection !== undefined,
    });
    registerActionRoutes(scope, {
      auth,
      sources: deps.sources,
      queues,
      paused,
      queries,
      runs: new RunsRepository(deps.db),
      logger,
    });
    registerDetailRoutes(scope, {
      auth,
      sources: deps.sources,
      profileOf,
      db: deps.db,
      queues,
      paused,
      clock: deps.clock,
      logger,
      failuresCsv: deps.failuresCsv,
    });
    registerReconciliationRoutes(scope, {
      auth,
      sources: deps.sources,
      db: deps.db,
      hasQueues: queues !== undefined,
      clock: deps.clock,
    });
    registerFailureRoutes(scope, {
      auth,
      sources: deps.sources,
      queues,
      paused,
      failures: new FailuresRepository(deps.db),
      logger,
    });
    registerConnectionRoutes(scope, {
      auth,
      hasQueues: queues !== undefined,
      testConnection: deps.testConnection,
    });
    registerUploadRoutes(scope, {
      auth,
      sources: deps.sources,
      uploads: deps.uploads,
      queues,
      paused,
      verifyCsrf: (request, token) => csrf.verify(auth.principal(request), token),
      clock: deps.clock,
      logger,
    });
    scope.get('/metrics', async (_request, reply) => {
      const { contentType, body } = await metrics.text();
      return reply.type(contentType).send(body);
    });
    if (queues && queues.queues.length > 0) {
      const board = bullBoardPlugin(queues.queues, {
        queueAdmin: deps.queueAdmin ?? false,
        csrfToken: (request) => auth.csrfToken(request),
        verifyCsrf: (request, token) => csrf.verify(auth.principal(request), token),
        logger,
      });
      await scope.register(board, { prefix: BULL_BOARD_PATH });
    }
  });
  return app;
}

async function queueCounts(queues: readonly Queue[], logger: Logger): Promise<QueueView[]> {
  return Promise.all(
    queues.map(async (queue): Promise<QueueView> => {
      try {
        return { name: queue.name, counts: await queue.getJobCounts() };
      } catch (error) {
        logger.warn(
          { err: (error as Error).message, queue: queue.name },
          'dashboard: cannot read queue counts',
        );
        return { name: queue.name, counts: {}, unreachable: true };
      }
    }),
  );
}
