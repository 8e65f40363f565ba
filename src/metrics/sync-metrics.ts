import type { Queue } from 'bullmq';
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { Flow } from '../api/rate-limit/flow.js';
import type { MeteredRateLimiter, RateInfo, RateLimiterStats } from '../api/rate-limit/types.js';
import type { RecordKind } from '../domain/records.js';
import type { Logger } from '../logging/logger.js';
import type { Outcome } from '../sync/outcome.js';
import type { SourceSummary } from '../sync/run-sync.js';
import type { SyncUseCases } from '../sync/sync-service.js';
import { type ReconciliationSample, registerReconcileGauges } from './reconcile-metrics.js';

export type { ReconciliationSample };

/** What the metrics read when Prometheus scrapes (each optional; see `SyncMetrics.watch`). */
export interface MetricsSources {
  /** The queues whose job counts are exported (`receivables_sync_queue_jobs`). */
  queues?: () => readonly Queue[];
  /** The last successful run of each source (the state DB is the truth). */
  lastSuccess?: () => Promise<ReadonlyArray<{ sourceId: string; at: Date }>>;
  /**
   * The counters of this process's API client and limiter (`client.stats.requests`,
   * `limiter.stats()`). When given, requests, 429s and limiter waits come from them, so the limiter
   * need not be wrapped; only the split by status needs `instrumentLimiter`.
   */
  runtimeStats?: () => {
    requests: number;
    limiter: RateLimiterStats;
    /** Answers by HTTP status (`client.responsesByStatus`). */
    responses?: ReadonlyMap<number, number>;
  };
  /**
   * The configured sources: their series (records, runs, last success) are sampled from the start,
   * at 0, so a rule on them works before the first pass.
   */
  sourceIds?: readonly string[];
  /** The last finished reconciliation of each source reconciled at least once. */
  reconciliations?: () => Promise<readonly ReconciliationSample[]>;
}

export interface SyncMetricsProps extends MetricsSources {
  /** Where the metrics are registered; default: a new registry (never prom-client's global one). */
  registry?: Registry;
  /** Also export Node's process metrics (CPU, memory, event loop lag). Default false. */
  processMetrics?: boolean;
  /** Scrape-time read failures (Redis or DB down) are logged here and the metric is left out. */
  logger?: Logger;
}

const PREFIX = 'receivables_sync_';
/** The statuses the spec's error table names, plus success: sampled at 0 before any answer. */
const KNOWN_STATUSES = [200, 201, 204, 400, 401, 403, 404, 409, 413, 422, 429, 500, 502, 503];
const OUTCOMES = ['created', 'updated', 'unchanged', 'failed'] as const;
const RUN_STATUSES = ['succeeded', 'partial', 'failed'] as const;
const KINDS: ReadonlyArray<[RecordKind, keyof SourceSummary['counts']]> = [
  ['account', 'accounts'],
  ['invoice', 'invoices'],
  ['creditNote', 'creditNotes'],
];

/**
 * The Prometheus metrics of the sync, in a registry of its own, served by the dashboard's
 * `/metrics`. Counters are fed by hooks around the sync (`instrumentService`, `instrumentLimiter`)
 * or read from the runtime's own counters; gauges (queue depths, last success per source) are read
 * when Prometheus scrapes.
 *
 * @example
 * const metrics = new SyncMetrics({ processMetrics: true, logger });
 * const service = metrics.instrumentService(syncServiceOf(runtime, sources));
 * metrics.watch({ queues: () => queues.queues, lastSuccess: lastSuccessfulRuns(db),
 *   runtimeStats: () => ({ requests: runtime.client.stats.requests, limiter: runtime.limiter.stats() }) });
 */
export class SyncMetrics {
  readonly registry: Registry;
  #sources: MetricsSources = {};
  readonly #responses: Counter<'status'>;
  readonly #records: Counter<'source' | 'kind' | 'outcome'>;
  readonly #runs: Counter<'source' | 'status'>;
  /** What the hooks saw, used when there are no `runtimeStats`. */
  readonly #hooked = { requests: 0, rateLimited: 0, waitedMs: 0 };
  readonly #hookedStatuses: Map<number, number>;

  constructor(props: SyncMetricsProps = {}) {
    const registry = props.registry ?? new Registry();
    this.registry = registry;
    const registers = [registry];
    const log = props.logger;
    const sources = () => this.#sources;
    const hooked = this.#hooked;
    const hookedStatuses = new Map<number, number>();
    this.#hookedStatuses = hookedStatuses;
    this.#responses = new Counter({
      name: `${PREFIX}api_responses_total`,
      help: 'Responses of the Receivables API, by HTTP status',
      labelNames: ['status'],
      registers,
      collect() {
        const counted = sources().runtimeStats?.().responses ?? hookedStatuses;
        this.reset();
        for (const status of KNOWN_STATUSES) this.inc({ status: String(status) }, 0);
        for (const [status, n] of counted) this.inc({ status: String(status) }, n);
      },
    });
    const fromRuntime = (
      name: string,
      help: string,
      read: (s: ReturnType<NonNullable<MetricsSources['runtimeStats']>>) => number,
      hook: () => number,
    ) =>
      new Counter({
        name: `${PREFIX}${name}`,
        help,
        registers,
        collect() {
          const stats = sources().runtimeStats?.();
          this.reset();
          this.inc(stats ? read(stats) : hook());
        },
      });
    fromRuntime(
      'api_requests_total',
      'Requests sent to the Receivables API',
      (s) => s.requests,
      () => hooked.requests,
    );
    fromRuntime(
      'api_rate_limited_total',
      '429 answers of the Receivables API (none in normal operation)',
      (s) => s.limiter.rateLimited,
      () => hooked.rateLimited,
    );
    fromRuntime(
      'limiter_wait_seconds_total',
      'Time requests spent waiting for the shared rate limiter before being sent',
      (s) => s.limiter.waitedMsTotal / 1000,
      () => hooked.waitedMs / 1000,
    );
    this.#records = new Counter({
      name: `${PREFIX}records_total`,
      help: 'Records handled by the sync, by source, kind and outcome (created, updated, unchanged, failed)',
      labelNames: ['source', 'kind', 'outcome'],
      registers,
    });
    this.#runs = new Counter({
      name: `${PREFIX}runs_total`,
      help: 'Finished passes, by source and status (succeeded, partial, failed)',
      labelNames: ['source', 'status'],
      registers,
    });
    new Gauge({
      name: `${PREFIX}queue_jobs`,
      help: 'Jobs in the BullMQ queues, by queue and state (waiting, active, delayed, failed, ...)',
      labelNames: ['queue', 'state'],
      registers,
      async collect() {
        this.reset();
        for (const queue of sources().queues?.() ?? []) {
          try {
            const counts = await queue.getJobCounts();
            for (const [state, n] of Object.entries(counts)) this.set({ queue: queue.name, state }, n);
          } catch (error) {
            log?.warn(
              { err: (error as Error).message, queue: queue.name },
              'metrics: cannot read queue depths',
            );
          }
        }
      },
    });
    new Gauge({
      name: `${PREFIX}last_success_timestamp_seconds`,
      help: 'Unix time of the last pass of each source that ran to its end (succeeded, or partial: some rows refused); 0: never',
      labelNames: ['source'],
      registers,
      async collect() {
        this.reset();
        const read = sources().lastSuccess;
        if (!read) return;
        // 0: never succeeded (yet), so an alert on staleness fires for a source that never syncs.
        for (const source of sources().sourceIds ?? []) this.set({ source }, 0);
        try {
          for (const { sourceId, at } of await read()) this.set({ source: sourceId }, at.getTime() / 1000);
        } catch (error) {
          log?.warn({ err: (error as Error).message }, 'metrics: cannot read the last successful runs');
        }
      },
    });
    registerReconcileGauges({ registers, sources: () => this.#sources, logger: log });
    if (props.processMetrics) collectDefaultMetrics({ register: registry, prefix: PREFIX });
    this.watch(props);
  }

  /** Sets what is read at scrape time (the composition root knows the queues and DB only later). */
  watch(sources: MetricsSources): void {
    this.#sources = {
      ...this.#sources,
      ...(sources.queues ? { queues: sources.queues } : {}),
      ...(sources.lastSuccess ? { lastSuccess: sources.lastSuccess } : {}),
      ...(sources.runtimeStats ? { runtimeStats: sources.runtimeStats } : {}),
      ...(sources.sourceIds ? { sourceIds: sources.sourceIds } : {}),
      ...(sources.reconciliations ? { reconciliations: sources.reconciliations } : {}),
    };
    // Every series of a configured source exists from the start, at 0.
    for (const source of sources.sourceIds ?? []) {
      for (const [kind] of KINDS)
        for (const outcome of OUTCOMES) this.#records.inc({ source, kind, outcome }, 0);
      for (const status of RUN_STATUSES) this.#runs.inc({ source, status }, 0);
    }
  }

  /** One response of the API. */
  observeApiResponse(status: number): void {
    this.#hookedStatuses.set(status, (this.#hookedStatuses.get(status) ?? 0) + 1);
    this.#hooked.requests++;
    if (status === 429) this.#hooked.rateLimited++;
  }

  /** Milliseconds a request waited for the rate limiter. */
  observeLimiterWait(ms: number): void {
    if (ms > 0) this.#hooked.waitedMs += ms;
  }

  recordOutcome(sourceId: string, kind: RecordKind, outcome: Outcome, n = 1): void {
    if (n > 0) this.#records.inc({ source: sourceId, kind, outcome }, n);
  }

  /** The counts of finished passes (what `SyncService` returns), and the passes themselves. */
  observeSummary(summary: SourceSummary | readonly SourceSummary[]): void {
    for (const one of Array.isArray(summary) ? summary : [summary]) {
      let failed = one.abandoned.length > 0;
      for (const [kind, key] of KINDS) {
        const counts = one.counts[key];
        for (const outcome of OUTCOMES) {
          this.recordOutcome(one.sourceId, kind, outcome, counts[outcome]);
        }
        failed ||= counts.failed > 0;
      }
      if (one.runId !== null)
        this.#runs.inc({ source: one.sourceId, status: failed ? 'partial' : 'succeeded' });
    }
  }

  /** A pass that threw (its run is recorded `failed`). */
  observeRunError(sourceId: string): void {
    this.#runs.inc({ source: sourceId, status: 'failed' });
  }

  /** Wraps the sync use cases so every pass they run is counted (records by outcome, runs by status). */
  instrumentService(service: SyncUseCases): SyncUseCases {
    const counted = async <T>(
      sourceId: string,
      run: () => Promise<T>,
      summaries: (result: T) => readonly SourceSummary[],
    ) => {
      try {
        const result = await run();
        this.observeSummary(summaries(result));
        return result;
      } catch (error) {
        this.observeRunError(sourceId);
        throw error;
      }
    };
    return {
      syncSource: (sourceId, options) =>
        counted(
          sourceId,
          () => service.syncSource(sourceId, options),
          (r) => r,
        ),
      retryFailures: (sourceId, only) =>
        counted(
          sourceId,
          () => service.retryFailures(sourceId, only),
          (r) => (r.summary ? [r.summary] : []),
        ),
      resyncRecord: (sourceId, kind, sourceKey) =>
        counted(
          sourceId,
          () => service.resyncRecord(sourceId, kind, sourceKey),
          (r) => [r],
        ),
      recoverInterrupted: (sourceId) => service.recoverInterrupted(sourceId),
      hasRecord: (sourceId, kind, sourceKey) => service.hasRecord(sourceId, kind, sourceKey),
    };
  }

  /**
   * Wraps the shared rate limiter so every API response (its status) and every wait is counted:
   * the API client calls `acquire` before and `observe` after each authenticated request.
   */
  instrumentLimiter(limiter: MeteredRateLimiter): MeteredRateLimiter {
    return {
      acquire: async (key: string, signal?: AbortSignal, flow?: Flow) => {
        const waited = await limiter.acquire(key, signal, flow);
        this.observeLimiterWait(waited);
        return waited;
      },
      observe: (key: string, info: RateInfo) => {
        this.observeApiResponse(info.status);
        return limiter.observe(key, info);
      },
      stats: (): RateLimiterStats => limiter.stats(),
      close: () => limiter.close(),
    };
  }

  /** The text format Prometheus scrapes. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
