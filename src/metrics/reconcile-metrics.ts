import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../logging/logger.js';
import type { MetricsSources } from './sync-metrics.js';

/** The last finished reconciliation of a source, as `/metrics` exports it (docs/reconcile.md). */
export interface ReconciliationSample {
  sourceId: string;
  /** When it finished. */
  at: Date;
  /** What it found: category -> kind -> records. */
  counts: Record<string, Record<string, number>>;
  /** Drift left at its end (after a repair; held records already recorded as failures excluded). */
  drift: number;
}

const PREFIX = 'receivables_sync_';
/** The drift categories of a reconciliation (`reconcile/types.ts`), each sampled (0 when not found). */
const CATEGORIES = ['missing', 'unresolved', 'orphan', 'readOnly', 'changed'] as const;
const KINDS = ['account', 'invoice', 'creditNote'] as const;

export interface ReconcileGaugesProps {
  registers: Registry[];
  /** What `SyncMetrics.watch` was told (read at scrape time). */
  sources: () => MetricsSources;
  logger?: Logger | undefined;
}

/**
 * The gauges of the last finished reconciliation of each source: what it found per category and
 * kind (`reconcile_drift`), the drift left (`reconcile_drift_left`) and when
 * (`reconcile_last_timestamp_seconds`). As every series of a configured source, they are sampled
 * from the start at 0: a source never reconciled (or whose reconciliations cannot be read) shows
 * no drift and a timestamp of 0, which says "never".
 */
export function registerReconcileGauges(props: ReconcileGaugesProps): void {
  const { registers, sources, logger } = props;
  // Read by each gauge (three small queries per scrape): a cache would show a finished
  // reconciliation one scrape late.
  const read = async (): Promise<readonly ReconciliationSample[]> => {
    const fetch = sources().reconciliations;
    if (!fetch) return [];
    try {
      return await fetch();
    } catch (error) {
      logger?.warn({ err: (error as Error).message }, 'metrics: cannot read the last reconciliations');
      return [];
    }
  };
  new Gauge({
    name: `${PREFIX}reconcile_drift`,
    help: 'Records the last finished reconciliation of each source found drifted, by category (missing, unresolved, orphan, readOnly, changed) and kind',
    labelNames: ['source', 'category', 'kind'],
    registers,
    async collect() {
      this.reset();
      for (const source of sources().sourceIds ?? [])
        for (const category of CATEGORIES) for (const kind of KINDS) this.set({ source, category, kind }, 0);
      for (const sample of await read())
        for (const category of CATEGORIES)
          for (const kind of KINDS)
            this.set(
              { source: sample.sourceId, category, kind },
              Number(sample.counts[category]?.[kind] ?? 0),
            );
    },
  });
  new Gauge({
    name: `${PREFIX}reconcile_drift_left`,
    help: 'Drifted records left at the end of the last finished reconciliation of each source (after its repair; held records already recorded as failures excluded)',
    labelNames: ['source'],
    registers,
    async collect() {
      this.reset();
      for (const source of sources().sourceIds ?? []) this.set({ source }, 0);
      for (const sample of await read()) this.set({ source: sample.sourceId }, sample.drift);
    },
  });
  new Gauge({
    name: `${PREFIX}reconcile_last_timestamp_seconds`,
    help: 'Unix time of the last finished reconciliation of each source; 0: never',
    labelNames: ['source'],
    registers,
    async collect() {
      this.reset();
      for (const source of sources().sourceIds ?? []) this.set({ source }, 0);
      for (const sample of await read()) this.set({ source: sample.sourceId }, sample.at.getTime() / 1000);
    },
  });
}
