import type { FastifyInstance } from 'fastify';
import type { SourceConfig } from '../config/schema.js';
import type { Clock } from '../domain/clock.js';
import type { ReconciliationSample } from '../metrics/sync-metrics.js';
import type { StateDb } from '../state/database.js';
import { ReconciliationsRepository } from '../state/reconciliations.js';
import { configOf } from './action-routes.js';
import type { DashboardAuth } from './auth.js';
import { DashboardError } from './errors.js';
import { signedInPage } from './signed-in-page.js';
import { reconciliationPage } from './views/reconciliation-view.js';

export interface ReconciliationRoutesProps {
  auth: DashboardAuth;
  sources: readonly SourceConfig[];
  db: StateDb;
  hasQueues: boolean;
  clock: Clock;
}

/** Reconciliations linked from a details page (its source's latest). */
const RECENT = 10;

/**
 * `/sources/:id/reconciliations/:rid`: one reconciliation of a source, its counts and the records it
 * found (the first 500 kept with it; docs/reconcile.md). GET only, behind the sign-in. The source
 * page's card (`reconciliationCard`) links here; its actions are `/actions/sources/:id/reconcile`
 * and `reconcile-repair` (action-routes.ts).
 */
export function registerReconciliationRoutes(app: FastifyInstance, props: ReconciliationRoutesProps): void {
  const { auth, clock } = props;
  const repo = new ReconciliationsRepository(props.db);
  const sourceIds = new Set(props.sources.map((s) => s.id));
  const page = signedInPage({ auth, sourceIds, hasQueues: props.hasQueues });

  app.get<{ Params: { sourceId: string; id: string } }>(
    '/sources/:sourceId/reconciliations/:id',
    async (request, reply) => {
      const config = configOf(props.sources, request.params.sourceId);
      const { id } = request.params;
      const row = /^\d{1,18}$/.test(id) ? await repo.get(id) : undefined;
      if (!row || row.sourceId !== config.id)
        throw new DashboardError(
          'DASHBOARD_RECONCILIATION_UNKNOWN',
          404,
          `no reconciliation #${id} of ${config.id}`,
        );
      const recent = await repo.recent(config.id, RECENT);
      reply.type('text/html; charset=utf-8');
      return page(
        request,
        `Reconciliation #${row.id}`,
        reconciliationPage({ row, now: clock.now(), recent }),
      );
    },
  );
}

/**
 * The last finished reconciliation of each source, for `/metrics`: the latest row when it is done,
 * else the latest done among the source's recent ones (a reconciliation running, or one that
 * failed, leaves the figures of the one before).
 */
export function lastReconciliations(db: StateDb): () => Promise<ReconciliationSample[]> {
  const repo = new ReconciliationsRepository(db);
  return async () => {
    const samples: ReconciliationSample[] = [];
    for (const latest of await repo.latest()) {
      const row =
        latest.status === 'done'
          ? latest
          : (await repo.recent(latest.sourceId, 20)).find((r) => r.status === 'done');
      if (!row) continue;
      samples.push({
        sourceId: row.sourceId,
        at: row.finishedAt ?? row.startedAt,
        counts: row.counts,
        drift: row.drift,
      });
    }
    return samples;
  };
}
