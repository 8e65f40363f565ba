import { describe, expect, it } from 'vitest';
import { SyncMetrics } from '../../../src/metrics/sync-metrics.js';

const counts = (missingAccounts: number) => ({
  missing: { account: missingAccounts, invoice: 0, creditNote: 0 },
  changed: { account: 0, invoice: 2, creditNote: 0 },
});

describe('the reconciliation gauges of /metrics', () => {
  it('when a source was reconciled, then its drift is split by category and kind, with the drift left and the time', async () => {
    const metrics = new SyncMetrics({
      sourceIds: ['erp-csv', 'never'],
      reconciliations: async () => [
        { sourceId: 'erp-csv', at: new Date('2026-01-01T00:00:10Z'), counts: counts(1), drift: 3 },
      ],
    });
    const text = (await metrics.text()).body;
    expect(text).toContain(
      'receivables_sync_reconcile_drift{source="erp-csv",category="missing",kind="account"} 1',
    );
    expect(text).toContain(
      'receivables_sync_reconcile_drift{source="erp-csv",category="changed",kind="invoice"} 2',
    );
    // Categories it did not store are sampled at 0.
    expect(text).toContain(
      'receivables_sync_reconcile_drift{source="erp-csv",category="orphan",kind="creditNote"} 0',
    );
    expect(text).toContain('receivables_sync_reconcile_drift_left{source="erp-csv"} 3');
    expect(text).toContain('receivables_sync_reconcile_last_timestamp_seconds{source="erp-csv"} 1767225610');
    // A source never reconciled: sampled at 0 from the start (as every series), its timestamp 0 says never.
    expect(text).toContain(
      'receivables_sync_reconcile_drift{source="never",category="missing",kind="account"} 0',
    );
    expect(text).toContain('receivables_sync_reconcile_drift_left{source="never"} 0');
    expect(text).toContain('receivables_sync_reconcile_last_timestamp_seconds{source="never"} 0');
  });

  it('when the state DB cannot be read, then the series stay at 0 and the scrape still answers', async () => {
    const metrics = new SyncMetrics({
      sourceIds: ['erp-csv'],
      reconciliations: async () => {
        throw new Error('connection refused');
      },
    });
    const text = (await metrics.text()).body;
    expect(text).toContain('receivables_sync_reconcile_drift_left{source="erp-csv"} 0');
    expect(text).toContain('receivables_sync_reconcile_last_timestamp_seconds{source="erp-csv"} 0');
  });

  it('when a later reconciliation is read, then the next scrape shows it (no stale figures)', async () => {
    let drift = 1;
    const metrics = new SyncMetrics({
      reconciliations: async () => [{ sourceId: 's', at: new Date(0), counts: counts(drift), drift }],
    });
    expect((await metrics.text()).body).toContain('receivables_sync_reconcile_drift_left{source="s"} 1');
    drift = 0;
    expect((await metrics.text()).body).toContain('receivables_sync_reconcile_drift_left{source="s"} 0');
  });
});
