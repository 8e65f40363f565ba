import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SourceConfig } from '../config/schema.js';
import type { SyncQueues } from '../jobs/types.js';
import type { Logger } from '../logging/logger.js';
import type { PausedSources } from '../state/paused-sources.js';
import type { RunsRepository } from '../state/runs.js';
import type { RecordKind } from '../state/schema.js';
import type { StatusQueries } from '../state/status-queries.js';
import { type DashboardAuth, wantsHtml } from './auth.js';
import { DashboardError } from './errors.js';
import { type Notice, noticeQuery } from './notices.js';

export interface ActionRoutesProps {
  auth: DashboardAuth;
  sources: readonly SourceConfig[];
  queues: SyncQueues | undefined;
  paused: PausedSources;
  queries: StatusQueries;
  /** Where a Cancel is asked of a source's running pass (it reads it before each batch). */
  runs: Pick<RunsRepository, 'requestCancel'>;
  logger: Logger;
}

const SOURCE_ACTIONS = [
  'resync',
  'full-resync',
  'retry-failures',
  'pause',
  'resume',
  'cancel',
  'reconcile',
  'reconcile-repair',
] as const;
type SourceAction = (typeof SOURCE_ACTIONS)[number];
const KINDS: readonly RecordKind[] = ['account', 'invoice', 'creditNote'];

/**
 * The actions: POST only (a GET never changes anything), each behind the CSRF check. A browser's
 * form gets a 303 back to the page with a notice; a script (`Accept: application/json`) gets JSON.
 */
export function registerActionRoutes(app: FastifyInstance, props: ActionRoutesProps): void {
  const { auth, logger } = props;

  app.post<{ Params: { sourceId: string; action: string } }>(
    '/actions/sources/:sourceId/:action',
    { preHandler: auth.requireCsrf },
    async (request, reply) => {
      const { sourceId, action } = request.params;
      if (!(SOURCE_ACTIONS as readonly string[]).includes(action)) {
        throw new DashboardError('DASHBOARD_ACTION_UNKNOWN', 404, `no action "${action}"`);
      }
      const config = configOf(props.sources, sourceId);
      const who = auth.principal(request).user ?? 'local';
      const notice = await runSourceAction(props, config, action as SourceAction, who);
      logger.info({ sourceId, action, user: who, jobId: notice.job, runId: notice.run }, 'dashboard action');
      return respond(request, reply, notice);
    },
  );

  app.post('/actions/records/resync', { preHandler: auth.requireCsrf }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const sourceKey = typeof body.sourceKey === 'string' ? body.sourceKey.trim() : '';
    const kind = KINDS.find((k) => k === body.kind);
    if (!kind || sourceKey.length === 0 || sourceKey.length > 200 || typeof body.sourceId !== 'string') {
      throw new DashboardError(
        'DASHBOARD_INPUT_INVALID',
        400,
        'sourceId, kind (account, invoice, creditNote) and sourceKey are required',
      );
    }
    const config = configOf(props.sources, body.sourceId);
    const queues = await usable(props, config.id);
    if (!(await props.queries.hasSyncedRecord(config.id, kind, sourceKey))) {
      throw new DashboardError(
        'DASHBOARD_RECORD_UNKNOWN',
        404,
        `${config.id} has no synced ${kind} "${sourceKey}"`,
        {
          details: { source: config.id, kind, key: sourceKey },
        },
      );
    }
    const { jobId } = await enqueue(() => queues.enqueueRecordResync(config.id, kind, sourceKey));
    logger.info(
      { sourceId: config.id, kind, sourceKey, user: auth.principal(request).user ?? 'local', jobId },
      'dashboard action: record re-sync',
    );
    return respond(request, reply, {
      code: 'record-queued',
      source: config.id,
      job: jobId,
      kind,
      key: sourceKey,
    });
  });

  app.post('/logout', { preHandler: auth.requireCsrf }, (request, reply) => auth.signOut(request, reply));
}

async function runSourceAction(
  props: ActionRoutesProps,
  config: SourceConfig,
  action: SourceAction,
  who: string,
): Promise<Notice> {
  const source = config.id;
  if (action === 'pause' || action === 'resume') {
    // Resuming also clears an automatic pause and starts its count of failed runs anew.
    await props.paused.set(source, config.type, action === 'pause', {
      by: 'user',
      reason: `paused by ${who} from the dashboard`,
    });
    return { code: action === 'pause' ? 'paused' : 'resumed', source };
  }
  if (action === 'cancel') {
    // No queue needed: the pass reads the request in the state DB before its next batch.
    const running = (await props.queries.runningRuns()).get(source);
    if (!running || !(await props.runs.requestCancel(running.id, `${who} from the dashboard`)))
      return { code: 'nothing-running', source };
    return { code: 'cancel-requested', source, run: running.id };
  }
  const queues = await usable(props, source);
  if (action === 'reconcile' || action === 'reconcile-repair') {
    const repair = action === 'reconcile-repair';
    const { jobId, deduplicated } = await enqueue(() =>
      queues.enqueueSourceReconcile(source, { trigger: 'dashboard', repair }),
    );
    if (deduplicated) return { code: 'reconcile-already-queued', source, job: jobId };
    return { code: repair ? 'reconcile-repair-queued' : 'reconcile-queued', source, job: jobId };
  }
  if (action === 'retry-failures') {
    const { jobId } = await enqueue(() => queues.enqueueFailureRetry(source));
    return { code: 'retry-queued', source, job: jobId };
  }
  const full = action === 'full-resync';
  const { jobId, deduplicated } = await enqueue(() =>
    queues.enqueueSourceSync(source, { trigger: 'manual', full }),
  );
  if (deduplicated) return { code: 'already-queued', source, job: jobId };
  return { code: full ? 'full-resync-queued' : 'resync-queued', source, job: jobId };
}

const sourcePath = (sourceId: string): string => `/sources/${encodeURIComponent(sourceId)}`;

export function configOf(sources: readonly SourceConfig[], sourceId: unknown): SourceConfig {
  const config = sources.find((s) => s.id === sourceId);
  if (!config)
    throw new DashboardError(
      'DASHBOARD_SOURCE_UNKNOWN',
      404,
      `no source "${String(sourceId)}" in the configuration`,
    );
  return config;
}

/** The queues, for a source that is not paused. */
export async function usable(
  props: Pick<ActionRoutesProps, 'queues' | 'paused'>,
  sourceId: string,
): Promise<SyncQueues> {
  if (!props.queues)
    throw new DashboardError(
      'DASHBOARD_NO_QUEUES',
      503,
      'no queues in this process: actions need the worker (REDIS_URL)',
    );
  if (await props.paused.isPaused(sourceId)) {
    throw new DashboardError('DASHBOARD_SOURCE_PAUSED', 409, `${sourceId} is paused: resume it first`, {
      details: { source: sourceId },
    });
  }
  return props.queues;
}

/** Adds a job, or answers 503 when the queue does not take it within 5 s (Redis down). */
export async function enqueue<T>(add: () => Promise<T>, timeoutMs = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer from the queue within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([add(), timeout]);
  } catch (error) {
    throw new DashboardError(
      'DASHBOARD_QUEUE_UNAVAILABLE',
      503,
      `cannot queue the job: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  } finally {
    clearTimeout(timer);
  }
}

function respond(request: FastifyRequest, reply: FastifyReply, notice: Notice): FastifyReply {
  if (wantsHtml(request) || !(request.headers.accept ?? '').includes('application/json')) {
    // A reconciliation is followed on its source's page (its card shows the result), and so is
    // any action pressed there.
    const back =
      notice.source && (notice.code.startsWith('reconcile') || fromSourcePage(request))
        ? sourcePath(notice.source)
        : '/';
    return reply.redirect(noticeQuery(notice, back), 303);
  }
  const { code, ...rest } = notice;
  const done = code === 'paused' || code === 'resumed' || code === 'nothing-running';
  return reply.code(done ? 200 : 202).send({ result: code, ...rest });
}

/** Whether the action's form is a source page's (it sends `back=source`): the answer goes back there. */
export function fromSourcePage(request: FastifyRequest): boolean {
  return ((request.body ?? {}) as Record<string, unknown>).back === 'source';
}
