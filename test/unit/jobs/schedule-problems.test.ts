import { describe, expect, it } from 'vitest';
import { sourceSchema } from '../../../src/config/schema.js';
import { ReconcileSchedules } from '../../../src/jobs/reconcile-schedules.js';
import { SourceSchedules } from '../../../src/jobs/schedules.js';

const csv = (id: string, extra: Record<string, unknown>) =>
  sourceSchema.parse({ id, type: 'csv', dropDir: `./drop-${id}`, ...extra });

describe('the schedules checked before a worker starts', () => {
  const sources = [
    csv('ok', { schedule: '*/5 * * * *', reconcile: { schedule: '0 3 * * *' } }),
    csv('bad-sync', { schedule: 'every minute' }),
    csv('bad-reconcile', { reconcile: { schedule: '61 * * * *' } }),
    csv('none', {}),
  ];

  it('when a source schedule is not a cron expression, then the message names the source and the setting', () => {
    expect(SourceSchedules.problems(sources)).toEqual([
      'sources.bad-sync.schedule: "every minute" is not a valid cron expression',
    ]);
  });

  it('when a reconcile schedule is not a cron expression, then the message names reconcile.schedule', () => {
    expect(ReconcileSchedules.problems(sources)).toEqual([
      'sources.bad-reconcile.reconcile.schedule: "61 * * * *" is not a valid cron expression',
    ]);
  });
});
