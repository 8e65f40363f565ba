import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { Queue } from 'bullmq';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../logging/logger.js';
import { refuse } from './auth.js';
import { BULL_BOARD_CSP, withDashboardLink, withoutExternalResources } from './bull-board-page.js';

export const BULL_BOARD_PATH = '/queues';

/**
 * The cookie and header of axios' built-in XSRF support, which bull-board's UI uses for its API
 * calls: on a same-origin request axios copies the `XSRF-TOKEN` cookie into `X-XSRF-TOKEN`.
 */
export const XSRF_COOKIE = 'XSRF-TOKEN';
export const XSRF_HEADER = 'x-xsrf-token';

export interface BullBoardOptions {
  /**
   * `dashboard.queueAdmin`. False (the default): every queue is shown read-only (bull-board's
   * `readOnlyMode`, its UI hides the buttons) and every write request is refused with 403.
   */
  queueAdmin: boolean;
  /** The dashboard's synchronizer token for the principal of a request (the actions' token). */
  csrfToken(request: FastifyRequest): string;
  /** Whether `token` is that token (constant-time). */
  verifyCsrf(request: FastifyRequest, token: unknown): boolean;
  logger: Logger;
}

/**
 * bull-board's UI and API for the worker's queues, to register under `BULL_BOARD_PATH` inside the
 * protected scope (same sign-in; every state-changing call also passes the app's Origin check).
 * Its pages get a CSP of their own (`BULL_BOARD_CSP`), lose their links to other origins (Google
 * Fonts) on the way out, and gain a link back to the dashboard always in sight (`withDashboardLink`).
 *
 * Writes (any method but GET/HEAD: pause, resume, retry, clean, promote, remove, add, ...):
 * - `queueAdmin: false` → refused (403 `DASHBOARD_QUEUE_ADMIN_OFF`) before bull-board sees them,
 *   and the adapters are read-only as a second lock;
 * - `queueAdmin: true` → they need the dashboard's own CSRF token in `X-XSRF-TOKEN` (what
 *   bull-board's UI sends) or `X-CSRF-TOKEN` (scripts), else 403 `DASHBOARD_CSRF_REFUSED`.
 *
 * bull-board's UI cannot be taught to send our token, but it sends axios' XSRF header by itself.
 * So every authenticated GET under `/queues` sets `XSRF-TOKEN` = the principal's synchronizer
 * token (HMAC of the session id with the process secret): readable by the UI's script (not
 * HttpOnly), `Path=/queues`, `SameSite=Strict`. This is not a plain double-submit: the header is
 * checked against the HMAC of the request's own session, not against the cookie, so a cookie
 * planted by a sibling site does not help; another origin can neither read the cookie through our
 * pages nor set a custom header without a CORS preflight, which we do not grant.
 */
export function bullBoardPlugin(queues: readonly Queue[], options: BullBoardOptions): FastifyPluginAsync {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(BULL_BOARD_PATH);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: !options.queueAdmin })),
    serverAdapter,
    options: {
      uiConfig: {
        boardTitle: 'receivables-sync',
        // Back to the dashboard's pages (it links here from its header, a source and a run).
        miscLinks: [
          { text: 'Sync dashboard', url: '/' },
          { text: 'Record search', url: '/records' },
        ],
      },
    },
  });
  const guard = writeGuard(options);
  return async (board) => {
    board.addHook('onRequest', async (_request, reply) => {
      reply.header('content-security-policy', BULL_BOARD_CSP);
    });
    board.addHook('onRequest', guard);
    board.addHook('onSend', async (_request, reply, payload) => {
      const type = String(reply.getHeader('content-type') ?? '');
      return typeof payload === 'string' && type.startsWith('text/html')
        ? withDashboardLink(withoutExternalResources(payload))
        : payload;
    });
    await board.register(serverAdapter.registerPlugin());
  };
}

function writeGuard(options: BullBoardOptions) {
  const { logger } = options;
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (request.method === 'GET' || request.method === 'HEAD') {
      if (options.queueAdmin) reply.header('set-cookie', xsrfCookie(options.csrfToken(request), request));
      return;
    }
    if (!options.queueAdmin) {
      logger.warn(
        { url: request.url, method: request.method },
        'dashboard: bull-board write refused (read-only)',
      );
      await refuse(
        reply.code(403),
        request,
        'DASHBOARD_QUEUE_ADMIN_OFF',
        'bull-board is read-only here: queue administration needs dashboard.queueAdmin: true.',
      );
      return;
    }
    const { headers } = request;
    if (
      options.verifyCsrf(request, headers[XSRF_HEADER]) ||
      options.verifyCsrf(request, headers['x-csrf-token'])
    )
      return;
    logger.warn(
      { url: request.url, method: request.method, ip: request.ip },
      'dashboard: bull-board write refused, CSRF token missing or wrong',
    );
    await refuse(
      reply.code(403),
      request,
      'DASHBOARD_CSRF_REFUSED',
      'This queue action did not come from a page of this dashboard (its token is missing or stale): reload the page and try again.',
    );
  };
}

/** Readable by bull-board's script (that is the point), sent to `/queues` only, never cross-site. */
function xsrfCookie(token: string, request: FastifyRequest): string {
  return [
    `${XSRF_COOKIE}=${token}`,
    `Path=${BULL_BOARD_PATH}`,
    'SameSite=Strict',
    ...(request.protocol === 'https' ? ['Secure'] : []),
  ].join('; ');
}
