import { describe, expect, it } from 'vitest';
import { deduplicationIdOf, jobIdOf } from '../../../src/jobs/job-keys.js';

describe('the keys of a source-reconcile job', () => {
  const report = { type: 'source-reconcile', sourceId: 'erp-csv', trigger: 'dashboard' } as const;
  const repair = { ...report, repair: true } as const;

  it('when a report and a repair are asked for, then they are two pieces of work; two reports are one', () => {
    expect(deduplicationIdOf(report)).toBe('source-reconcile:erp-csv');
    expect(deduplicationIdOf({ ...report, trigger: 'schedule' })).toBe('source-reconcile:erp-csv');
    expect(deduplicationIdOf(repair)).toBe('source-reconcile:erp-csv:repair');
    expect(deduplicationIdOf(report)).not.toBe(
      deduplicationIdOf({ type: 'source-sync', sourceId: 'erp-csv', trigger: 'manual' }),
    );
  });

  it('when a schedule tick queues it, then its id is the source and the tick; on demand, a unique id', () => {
    const tick = new Date('2026-01-01T03:00:00Z');
    expect(jobIdOf({ ...report, trigger: 'schedule' }, tick)).toBe('source-reconcile.erp-csv.t1767236400');
    expect(jobIdOf({ type: 'source-sync', sourceId: 'erp-csv', trigger: 'schedule' }, tick)).toBe(
      'source-sync.erp-csv.t1767236400',
    );
    const a = jobIdOf(report, tick);
    expect(a).toMatch(/^source-reconcile\.erp-csv\.[0-9a-z]+$/);
    expect(jobIdOf(report, tick)).not.toBe(a);
  });
});
