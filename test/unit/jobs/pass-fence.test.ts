import { UnrecoverableError } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { toJobError } from '../../../src/jobs/job-errors.js';
import { passFenceOf } from '../../../src/jobs/pass-fence.js';

describe('the fence of a pass', () => {
  const fenceWith = (lostTo: string | null, later: string | null) => {
    const asked: string[] = [];
    const fence = passFenceOf({
      sourceId: 'erp-csv',
      lease: { lostTo },
      records: {
        startedAfter: async (sourceId, runId) => {
          asked.push(`${sourceId}:${runId}`);
          return later;
        },
      },
    });
    return { fence, asked };
  };

  it('when the lock is still the job’s and no later run exists, then the pass goes on', async () => {
    const { fence, asked } = fenceWith(null, null);
    await expect(fence('7')).resolves.toBeUndefined();
    expect(asked).toEqual(['erp-csv:7']);
  });

  it('when the lock is another job’s, then the pass stops, saying who holds it, without asking the state DB', async () => {
    const { fence, asked } = fenceWith('job-2:token', null);
    await expect(fence('7')).rejects.toMatchObject({
      code: 'SOURCE_LOCK_LOST',
      kind: 'infrastructure',
      retryable: true,
      message: expect.stringContaining('job-2:token'),
    });
    expect(asked).toEqual([]);
  });

  it('when a later run of the source exists, then the pass stops, naming both runs', async () => {
    const { fence } = fenceWith(null, '9');
    await expect(fence('7')).rejects.toMatchObject({
      code: 'SOURCE_PASS_SUPERSEDED',
      kind: 'infrastructure',
      message: expect.stringMatching(/started \(run 9\) while this one \(run 7\)/),
    });
  });

  it('when a pass is stopped by its fence, then its job is retried later, not failed for good', async () => {
    const { fence } = fenceWith('job-2:token', null);
    const error = await fence('7').catch((e: unknown) => e);
    expect(toJobError(error)).not.toBeInstanceOf(UnrecoverableError);
  });
});
