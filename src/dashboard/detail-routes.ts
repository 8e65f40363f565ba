import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { SourceConfig } from '../config/schema.js';
import type { Clock } from '../domain/clock.js';
import { RECORD_KINDS, type RecordKind } from '../domain/records.js';
import type { SyncQueues } from '../jobs/types.js';
import type { Logger } from '../logging/logger.js';
import type { StateDb } from '../state/database.js';
import { DetailQueries } from '../state/detail-queries.js';
import { FailureQueries } from '../state/failure-queries.js';
import type { PausedSources } from '../state/paused-sources.js';
import { ReconciliationsRepository } from '../state/reconciliations.js';
import { RunLogsRepository } from '../state/run-logs.js';
import { RunRecordsRepository } from '../state/run-records.js';
import { StatusQueries } from '../state/status-queries.js';
import { configOf } from './action-routes.js';
import type { DashboardAuth } from './auth.js';
import type { FailuresCsvExport } from './deps.js';
import { waitingDropFiles } from './drop-folder-files.js';
import { DashboardError } from './errors.js';
import { jobHrefOfRun } from './job-links.js';
import { reportFile } from './report-files.js';
import { scheduleView } from './schedule-words.js';
import { signedInPage } from './signed-in-page.js';
import type { SourceProfiles } from './source-profile.js';
import { runView } from './status.js';
import { pageParam } from './views/pager.js';
import { type RecordDetail, recordPage } from './views/record-page.js';
import { type OutcomeFilter, runPage } from './views/run-page.js';
import { sourcePage } from './views/source-page.js';

export interface DetailRoutesProps {
  auth: DashboardAuth;
  sources: readonly SourceConfig[];
  /** What each source's type shows: its own settings, its drop files and their reports. */
  profileOf: SourceProfiles;
  db: StateDb;
  queues: SyncQueues | undefined;
  paused: PausedSources;
  clock: Clock;
  logger: Logger;
  /** The failures CSV of a source and kind; without it the page offers no download. */
  failuresCsv?: FailuresCsvExport | undefined;
}

const RUNS_PER_PAGE = 20;
const FAILURES_PER_PAGE = 50;
const RECORDS_PER_PAGE = 100;
const LOG_LINES = 1_000;

/**
 * The pages of one source (`/sources/:id`), one run (`/runs/:id`) and the record search
 * (`/records?source=..&q=..`), and the downloads of a source's page: its open failures as CSV
 * (`/sources/:id/failures.csv?kind=..`) and a drop file's report (`/sources/:id/files/:file/report`).
 * All GET, all behind the sign-in; they change nothing.
 */
/** Whether a run's stored counts hold no kind (its pass never finished to write them). */
const isEmptyCounts = (counts: Record<string, unknown>): boolean =>
  !['accounts', 'invoices', 'creditNotes'].some((key) => key in counts);

export function registerDetailRoutes(app: FastifyInstance, props: DetailRoutesProps): void {
  const { auth, clock } = props;
  const details = new DetailQueries(props.db);
  const failures = new FailureQueries(props.db);
  const status = new StatusQueries(props.db);
  const runRecords = new RunRecordsRepository(props.db);
  const runLogs = new RunLogsRepository(props.db);
  const reconciliations = new ReconciliationsRepository(props.db);
  const sourceIds = new Set(props.sources.map((s) => s.id));
  const hasQueues = props.queues !== undefined;

  const page = signedInPage({ auth, sourceIds, hasQueues });

  app.get<{ Params: { sourceId: string }; Querystring: Record<string, string> }>(
    '/sources/:sourceId',
    async (request, reply) => {
      const config = configOf(props.sources, request.params.sourceId);
      const id = config.id;
      const profile = props.profileOf(id);
      const now = clock.now();
      const runsAt = pageParam(request.query.page);
      const failuresAt = pageParam(request.query.fpage);
      const taking = profile.dropDir === null ? undefined : profile.dropFiles;
      const [
        pauses,
        running,
        records,
        runs,
        open,
        openByKind,
        history,
        cursors,
        files,
        lastReconciliation,
        waiting,
      ] = await Promise.all([
        props.paused.list(),
        status.runningRuns(),
        status.recordCounts(),
        details.runsOf(id, { offset: (runsAt - 1) * RUNS_PER_PAGE, limit: RUNS_PER_PAGE }),
        failures.openOfSource(id, {
          offset: (failuresAt - 1) * FAILURES_PER_PAGE,
          limit: FAILURES_PER_PAGE,
        }),
        failures.openCountsByKind(id),
        failures.closedOfSource(id, 20),
        status.cursors(),
        profile.dropDir === null ? Promise.resolve([]) : details.dropFiles(id, 20),
        reconciliations.latest(id),
        profile.dropDir !== null && taking ? waitingDropFiles(profile.dropDir, taking, now) : null,
      ]);
      const pause = pauses.get(id) ?? null;
      const paused = pause !== null;
      const active = running.get(id);
      const stale = await status.staleRuns([
        ...(active ? [active.id] : []),
        ...runs.rows.filter((r) => r.status === 'running').map((r) => r.id),
      ]);
      reply.type('text/html; charset=utf-8');
      return page(
        request,
        id,
        sourcePage({
          config,
          profile,
          now,
          csrfToken: auth.csrfToken(request),
          canQueue: hasQueues && !paused,
          whyNot: !hasQueues
            ? 'no queues: start the worker (REDIS_URL) to run actions'
            : 'paused: resume it first',
          pause,
          schedule: config.schedule ? scheduleView(config.schedule, now) : null,
          running: active && !stale.has(active.id) ? runView(active, clock, stale) : null,
          records: records.get(id) ?? { account: 0, invoice: 0, creditNote: 0 },
          runs: runs.rows.map((r) => runView(r, clock, stale)),
          runsPage: { page: runsAt, size: RUNS_PER_PAGE, total: runs.total },
          failures: open.rows,
          failuresPage: { page: failuresAt, size: FAILURES_PER_PAGE, total: open.total },
          openByKind,
          history,
          cursors: cursors.filter((c) => c.sourceId === id),
          files,
          canExport: props.failuresCsv !== undefined,
          hasQueues,
          waiting: waiting && taking ? { ...waiting, stableSeconds: taking.stableSeconds } : undefined,
          reconcile: {
            sourceId: id,
            last: lastReconciliation[0] ?? null,
            now,
            csrfToken: auth.csrfToken(request),
            canQueue: hasQueues && !paused,
            whyNot: !hasQueues
              ? 'no queues: start the worker (REDIS_URL) to run actions'
              : paused
                ? 'paused: resume it first'
                : 'these queues cannot run reconciliations',
            schedule: config.reconcile?.schedule ?? null,
            scheduleRepairs: config.reconcile?.repair ?? false,
          },
        }),
      );
    },
  );

  app.get<{ Params: { runId: string }; Querystring: Record<string, string> }>(
    '/runs/:runId',
    async (request, reply) => {
      const run = await details.run(request.params.runId);
      if (!run) throw new DashboardError('DASHBOARD_RUN_UNKNOWN', 404, `no run #${request.params.runId}`);
      const at = pageParam(request.query.page);
      const outcome = (['created', 'updated', 'failed'] as const).find((o) => o === request.query.outcome);
      const [stale, records, runFailures, logs, jobHref, touched] = await Promise.all([
        status.staleRuns(run.status === 'running' ? [run.id] : []),
        runRecords.ofRun(run.id, { offset: (at - 1) * RECORDS_PER_PAGE, limit: RECORDS_PER_PAGE, outcome }),
        failures.ofRun(run.id, 200),
        runLogs.ofRun(run.id, LOG_LINES + 1),
        jobHrefOfRun(props.queues, run.id, props.logger),
        runRecords.countsOfRun(run.id),
      ]);
      const view = runView(run, clock, stale);
      reply.type('text/html; charset=utf-8');
      return page(
        request,
        `Run #${run.id}`,
        runPage({
          run: view,
          // A run that never wrote its counts (killed, or still running): what its records say.
          ...(view.finishedAt === null || isEmptyCounts(run.counts) ? { touched } : {}),
          now: clock.now(),
          records: records.rows,
          recordsPage: { page: at, size: RECORDS_PER_PAGE, total: records.total },
          outcome: outcome as OutcomeFilter,
          failures: runFailures,
          logs,
          jobHref,
        }),
      );
    },
  );

  app.get<{ Querystring: Record<string, string> }>('/records', async (request, reply) => {
    const source = props.sources.find((s) => s.id === request.query.source)?.id ?? props.sources[0]?.id ?? '';
    const q = (request.query.q ?? '').trim().slice(0, 200);
    let found: RecordDetail[] = [];
    let near: Awaited<ReturnType<DetailQueries['searchRecords']>>['hits'] = [];
    if (q !== '' && source !== '') {
      const search = await details.searchRecords(source, q, 20);
      if (search.exact)
        found = await Promise.all(
          search.hits.map(async (hit): Promise<RecordDetail> => {
            const [mapped, ofRecord, runs] = await Promise.all([
              details.mappedRecord(source, hit.kind, hit.sourceKey),
              failures.ofRecord(source, hit.kind, hit.sourceKey),
              runRecords.runsOf(source, hit.kind, hit.sourceKey),
            ]);
            return { ...hit, mapped, failures: ofRecord, runs };
          }),
        );
      else near = search.hits;
    }
    reply.type('text/html; charset=utf-8');
    return page(
      request,
      q ? `Record ${q}` : 'Records',
      recordPage({
        sourceIds: props.sources.map((s) => s.id),
        source,
        q,
        now: clock.now(),
        csrfToken: auth.csrfToken(request),
        canQueue: hasQueues,
        details: found,
        near,
      }),
    );
  });

  app.get<{ Params: { sourceId: string }; Querystring: Record<string, string> }>(
    '/sources/:sourceId/failures.csv',
    async (request, reply) => {
      const config = configOf(props.sources, request.params.sourceId);
      const kind = RECORD_KINDS.find((k) => k === request.query.kind) as RecordKind | undefined;
      if (!kind)
        throw new DashboardError(
          'DASHBOARD_INPUT_INVALID',
          400,
          'kind must be account, invoice or creditNote',
        );
      if (!props.failuresCsv)
        throw new DashboardError('DASHBOARD_EXPORT_UNAVAILABLE', 404, 'no failures export in this process');
      const csv = props.failuresCsv(config, kind);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${csv.fileName}"`)
        .send(Readable.from(csv.lines));
    },
  );

  app.get<{ Params: { sourceId: string; fileId: string } }>(
    '/sources/:sourceId/files/:fileId/report',
    async (request, reply) => {
      const config = configOf(props.sources, request.params.sourceId);
      const file = await details.dropFile(config.id, request.params.fileId);
      const report = await reportFile(props.profileOf(config.id).dropDir, file);
      return reply
        .type(report.contentType)
        .header('content-disposition', `attachment; filename="${report.fileName}"`)
        .send(report.stream);
    },
  );
}
