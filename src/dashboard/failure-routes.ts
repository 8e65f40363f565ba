import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SourceConfig } from '../config/schema.js';
import type { SyncQueues } from '../jobs/types.js';
import type { Logger } from '../logging/logger.js';
import type { FailuresRepository } from '../state/failures.js';
import type { PausedSources } from '../state/paused-sources.js';
import { configOf, enqueue, usable } from './action-routes.js';
import { type DashboardAuth, wantsHtml } from './auth.js';
import { DashboardError } from './errors.js';
import { type Notice, noticeQuery } from './notices.js';

export interface FailureRoutesProps {
  auth: DashboardAuth;
  sources: readonly SourceConfig[];
  queues: SyncQueues | undefined;
  paused: PausedSources;
  failures: Pick<FailuresRepository, 'dismiss' | 'open'>;
  logger: Logger;
}

/** Failures selected at once, at most (a page of the source's open failures is 50). */
const MAX_SELECTED = 500;

/**
 * The actions on selected failures of a source, from its page (form fields `sourceId`, `ids`,
 * one per selected failure, and `reason` to dismiss), behind the CSRF check like every action:
 *
 * - `POST /actions/failures/dismiss`: the failures are closed (no longer open) and kept in the
 *   history with the user and the reason;
 * - `POST /actions/failures/retry`: a `failure-retry` job of these failures only.
 *
 * A browser's form gets a 303 back to the source's page with a notice; a script gets JSON.
 */
export function registerFailureRoutes(app: FastifyInstance, props: FailureRoutesProps): void {
  const { auth, logger } = props;

  app.post('/actions/failures/dismiss', { preHandler: auth.requireCsrf }, async (request, reply) => {
    const { config, ids, body } = selection(props, request);
    const reason = typeof body.reason === 'string' ? body.reason.trim() : '';
    if (reason.length === 0 || reason.length > 500)
      throw new DashboardError(
        'DASHBOARD_REASON_REQUIRED',
        400,
        'a reason (1 to 500 characters) is required',
        {
          details: { source: config.id },
        },
      );
    const by = auth.principal(request).user ?? 'local';
    const dismissed = await props.failures.dismiss(config.id, ids, { reason, by });
    logger.info(
      { sourceId: config.id, failures: ids, dismissed, user: by },
      'dashboard action: failures dismissed',
    );
    return respond(request, reply, { code: 'dismissed', source: config.id, count: String(dismissed) });
  });

  app.post('/actions/failures/retry', { preHandler: auth.requireCsrf }, async (request, reply) => {
    const { config, ids } = selection(props, request);
    const queues = await usable(props, config.id);
    const open = await props.failures.open({ sourceId: config.id, ids });
    if (open.length === 0)
      throw new DashboardError('DASHBOARD_SELECTION_EMPTY', 400, 'none of the selected failures is open', {
        details: { source: config.id },
      });
    const failureIds = open.map((f) => f.id);
    const { jobId } = await enqueue(() => queues.enqueueFailureRetry(config.id, { failureIds }));
    logger.info(
      { sourceId: config.id, failures: failureIds, user: auth.principal(request).user ?? 'local', jobId },
      'dashboard action: selected failures retried',
    );
    return respond(request, reply, {
      code: 'retry-selected-queued',
      source: config.id,
      job: jobId,
      count: String(failureIds.length),
    });
  });
}

/** The source and the failure ids of a form (a lone checkbox comes as a string, several as an array). */
function selection(props: FailureRoutesProps, request: FastifyRequest) {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const config = configOf(props.sources, body.sourceId);
  const raw = Array.isArray(body.ids) ? body.ids : body.ids === undefined ? [] : [body.ids];
  const ids = [...new Set(raw.filter((id): id is string => typeof id === 'string' && /^\d{1,18}$/.test(id)))];
  if (ids.length === 0 || ids.length > MAX_SELECTED)
    throw new DashboardError(
      'DASHBOARD_SELECTION_EMPTY',
      400,
      `select between 1 and ${MAX_SELECTED} failures (form field "ids")`,
      { details: { source: config.id } },
    );
  return { config, ids, body };
}

/** The source's page of a failure action (its notice, or its error's). */
export const sourcePagePath = (sourceId: string): string => `/sources/${encodeURIComponent(sourceId)}`;

function respond(request: FastifyRequest, reply: FastifyReply, notice: Notice): FastifyReply {
  if (wantsHtml(request) || !(request.headers.accept ?? '').includes('application/json'))
    return reply.redirect(noticeQuery(notice, sourcePagePath(notice.source ?? '')), 303);
  const { code, ...rest } = notice;
  return reply.code(code === 'dismissed' ? 200 : 202).send({ result: code, ...rest });
}
