import type { SourceConfig } from '../config/schema.js';
import type { Clock } from '../domain/clock.js';
import {
  type RunRejectedFile,
  type RunWaitingFiles,
  rejectedFilesOf,
  waitingFilesOf,
} from '../domain/sync-state.js';
import type { PausedSources, SourcePause } from '../state/paused-sources.js';
import type { RecordKind } from '../state/schema.js';
import type {
  CursorRecord,
  DropFileRecord,
  FailureRecord,
  RunRecord,
  StatusQueries,
} from '../state/status-queries.js';
import { type ConnectionGroupView, connectionGroups, type DashboardConnection } from './connection-groups.js';
import type { TokenBudgetReader } from './token-budgets.js';

export interface KindCounts {
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
}

export type RunCountsView = Record<'accounts' | 'invoices' | 'creditNotes', KindCounts>;

export interface RunView {
  id: string;
  sourceId: string;
  trigger: string;
  status: RunRecord['status'];
  /** `running`, but its process is gone (killed, crashed): shown as stale until a pass closes it. */
  stale: boolean;
  dryRun: boolean;
  counts: RunCountsView;
  /** Summed over the kinds. */
  totals: KindCounts;
  /** The files it could not read (set aside in the drop folder's `rejected/`), with why: the run is `partial`. */
  rejectedFiles: RunRejectedFile[];
  /** The drop files it left because they were still being written (null: none). */
  waitingFiles: RunWaitingFiles | null;
  error: string | null;
  startedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
}

export interface SourceView {
  id: string;
  type: string;
  schedule: string | null;
  paused: boolean;
  /** Why it is paused, by whom (`auto`: after failed runs; `user`) and since when; null when it is not. */
  pause: { by: 'auto' | 'user'; reason: string | null; at: string | null } | null;
  /** The run in progress, if any. */
  running: RunView | null;
  lastRun: RunView | null;
  records: Record<RecordKind, number>;
  openFailures: number;
  cursors: Array<{ stream: string; cursor: Record<string, unknown> | null; updatedAt: string }>;
  recentFiles: Array<Omit<DropFileRecord, 'sourceId' | 'finishedAt'> & { finishedAt: string | null }>;
  /** Its latest reconciliation (docs/reconcile.md); absent when it was never reconciled. */
  reconcile?: ReconcileView;
}

/** A source's latest reconciliation, as the overview shows it. */
export interface ReconcileView {
  id: string;
  status: 'running' | 'done' | 'failed';
  startedAt: string;
  /** Drift left at its end. */
  drift: number;
  /** Records it found drifted (held ones included). */
  found: number;
}

export interface FailureView extends Omit<FailureRecord, 'firstFailedAt' | 'lastFailedAt'> {
  firstFailedAt: string;
  lastFailedAt: string;
}

export interface QueueView {
  name: string;
  counts: Record<string, number>;
  /** The counts could not be read (Redis unreachable). */
  unreachable?: boolean;
}

/** Everything the sync page shows; also the body of `GET /api/status`. */
export interface DashboardStatus {
  generatedAt: string;
  sources: SourceView[];
  runs: RunView[];
  failures: FailureView[];
  /** Open failures in all (the list holds the latest `failureLimit`). */
  failuresTotal: number;
  /** Null when the dashboard has no queues (actions disabled). */
  queues: QueueView[] | null;
  /** The sources by connection, then organization, with each token's budget (connection-groups.ts). */
  connections: ConnectionGroupView[];
}

export interface StatusReaderProps {
  sources: readonly SourceConfig[];
  queries: StatusQueries;
  paused: PausedSources;
  clock: Clock;
  /** Job counts of the queues (bull-board has the details); absent without Redis. */
  queueCounts?: () => Promise<QueueView[]>;
  /** The latest reconciliation of each source (`ReconciliationsRepository.latest`). */
  reconciliations?: () => Promise<
    ReadonlyArray<{
      id: string;
      sourceId: string;
      status: ReconcileView['status'];
      startedAt: Date;
      drift: number;
      itemsTotal: number;
    }>
  >;
  runLimit?: number;
  failureLimit?: number;
  /** The configured API connections (default: the default connection alone, without URL). */
  connections?: readonly DashboardConnection[] | undefined;
  /** The workers' token budgets; absent without Redis (the quota line says it is unknown). */
  tokenBudgets?: TokenBudgetReader | undefined;
}

const KEYS = ['accounts', 'invoices', 'creditNotes'] as const;
const OUTCOMES = ['created', 'updated', 'unchanged', 'failed'] as const;

/** Reads stored counts defensively: a run row's `counts` is JSON written by whatever version ran it. */
export function countsOf(stored: Record<string, unknown>): RunCountsView {
  const view = {} as RunCountsView;
  for (const key of KEYS) {
    const of = (stored[key] ?? {}) as Record<string, unknown>;
    view[key] = { created: 0, updated: 0, unchanged: 0, failed: 0 };
    for (const outcome of OUTCOMES) {
      const n = Number(of[outcome]);
      view[key][outcome] = Number.isFinite(n) ? n : 0;
    }
  }
  return view;
}

export function runView(run: RunRecord, clock: Clock, stale: ReadonlySet<string> = new Set()): RunView {
  const counts = countsOf(run.counts);
  const totals = { created: 0, updated: 0, unchanged: 0, failed: 0 };
  for (const key of KEYS) for (const outcome of OUTCOMES) totals[outcome] += counts[key][outcome];
  const end = run.finishedAt ?? clock.now();
  return {
    id: run.id,
    sourceId: run.sourceId,
    trigger: run.trigger,
    status: run.status,
    stale: run.status === 'running' && stale.has(run.id),
    dryRun: run.dryRun,
    counts,
    totals,
    rejectedFiles: rejectedFilesOf(run.counts),
    waitingFiles: waitingFilesOf(run.counts),
    error: run.error,
    startedAt: run.startedAt.toISOString(),
    finishedAt: run.finishedAt?.toISOString() ?? null,
    durationMs: Math.max(0, end.getTime() - run.startedAt.getTime()),
  };
}

/** Builds the sync page's model from the state DB (and the queues when there are some). */
export class StatusReader {
  constructor(private readonly props: StatusReaderProps) {}

  async read(): Promise<DashboardStatus> {
    const { queries, clock } = this.props;
    const [
      lastRuns,
      running,
      records,
      failureCounts,
      failures,
      cursors,
      files,
      paused,
      runs,
      queues,
      reconciled,
      budgets,
    ] = await Promise.all([
      queries.lastRuns(),
      queries.runningRuns(),
      queries.recordCounts(),
      queries.openFailureCounts(),
      queries.openFailures(this.props.failureLimit ?? 100),
      queries.cursors(),
      queries.recentDropFiles(5),
      this.props.paused.list(),
      queries.recentRuns(this.props.runLimit ?? 20),
      this.props.queueCounts ? this.props.queueCounts() : Promise.resolve(null),
      this.props.reconciliations ? this.props.reconciliations() : Promise.resolve([]),
      this.props.tokenBudgets ? this.props.tokenBudgets() : Promise.resolve(null),
    ]);
    const lastReconciliation = new Map(reconciled.map((r) => [r.sourceId, r]));
    const stale = await queries.staleRuns(
      [...running.values(), ...lastRuns.values(), ...runs]
        .filter((r) => r.status === 'running')
        .map((r) => r.id),
    );
    const sources = this.props.sources.map((config): SourceView => {
      const last = lastRuns.get(config.id);
      const active = running.get(config.id);
      return {
        id: config.id,
        type: config.type,
        schedule: config.schedule ?? null,
        paused: paused.has(config.id),
        pause: pauseView(paused.get(config.id)),
        // A stale run (its process is gone) is no pass in progress: its source reads active or paused.
        running: active && !stale.has(active.id) ? runView(active, clock, stale) : null,
        lastRun: last ? runView(last, clock, stale) : null,
        records: records.get(config.id) ?? { account: 0, invoice: 0, creditNote: 0 },
        openFailures: failureCounts.get(config.id) ?? 0,
        cursors: cursors.filter((c) => c.sourceId === config.id).map(cursorView),
        recentFiles: files
          .filter((f) => f.sourceId === config.id)
          .map(({ sourceId: _, finishedAt, ...rest }) => ({
            ...rest,
            finishedAt: finishedAt?.toISOString() ?? null,
          })),
        ...reconcileViewOf(lastReconciliation.get(config.id)),
      };
    });
    return {
      generatedAt: clock.now().toISOString(),
      sources,
      runs: runs.map((r) => runView(r, clock, stale)),
      failures: failures.map((f) => ({
        ...f,
        firstFailedAt: f.firstFailedAt.toISOString(),
        lastFailedAt: f.lastFailedAt.toISOString(),
      })),
      failuresTotal: [...failureCounts.values()].reduce((a, b) => a + b, 0),
      queues,
      connections: connectionGroups({
        sources: this.props.sources,
        connections: this.props.connections ?? [],
        lastRuns,
        budgets,
      }),
    };
  }
}

const reconcileViewOf = (
  row:
    | NonNullable<Awaited<ReturnType<NonNullable<StatusReaderProps['reconciliations']>>>[number]>
    | undefined,
): { reconcile?: ReconcileView } =>
  row
    ? {
        reconcile: {
          id: row.id,
          status: row.status,
          startedAt: row.startedAt.toISOString(),
          drift: row.drift,
          found: row.itemsTotal,
        },
      }
    : {};

const pauseView = (pause: SourcePause | undefined): SourceView['pause'] =>
  pause ? { by: pause.by, reason: pause.reason, at: pause.at?.toISOString() ?? null } : null;

const cursorView = (c: CursorRecord) => ({
  stream: c.stream,
  cursor: c.cursor,
  updatedAt: c.updatedAt.toISOString(),
});
