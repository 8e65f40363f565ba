import type { SyncQueues } from '../jobs/types.js';
import type { Logger } from '../logging/logger.js';
import { BULL_BOARD_PATH } from './bull-board.js';

/** Finished jobs looked through for a run's job (the queue keeps a bounded number of them anyway). */
const JOBS_LOOKED_AT = 200;
const LOOK_LIMIT_MS = 1_500;

/**
 * The bull-board page of the job that ran a run, found among the queue's latest finished jobs by
 * the run ids their results hold; null when the queue no longer has it (or Redis is slow or down:
 * a run's page never waits long for a link).
 */
export async function jobHrefOfRun(
  queues: SyncQueues | undefined,
  runId: string,
  logger: Logger,
): Promise<string | null> {
  const queue = queues?.queues[0];
  if (!queue) return null;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), LOOK_LIMIT_MS);
  });
  const look = (async () => {
    const jobs = await queue.getJobs(['completed'], 0, JOBS_LOOKED_AT - 1);
    const job = jobs.find((j) => {
      const runs = (j?.returnvalue as { runs?: Array<{ runId?: unknown }> } | null)?.runs;
      return Array.isArray(runs) && runs.some((r) => String(r.runId) === runId);
    });
    return job?.id
      ? `${BULL_BOARD_PATH}/queue/${encodeURIComponent(queue.name)}/${encodeURIComponent(job.id)}`
      : null;
  })().catch((error: unknown) => {
    logger.debug({ err: (error as Error).message, runId }, "dashboard: cannot look up a run's job");
    return null;
  });
  try {
    return await Promise.race([look, late]);
  } finally {
    clearTimeout(timer);
  }
}
