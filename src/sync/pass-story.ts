import type { Logger } from 'pino';
import type { PassLog } from '../logging/pass-log.js';
import type { SourceSummary } from './run-sync.js';

/**
 * What a pass did with whole files and with its time, said in its log at its end (the run's page
 * shows these lines): the files it could not read, those it took for nothing (no kind's pattern),
 * those it left because they were still being written, the content it had synced before, its waits
 * for the rate limit, and one closing line with its counts. Units done are said as they end.
 */
export function tellPassEnd(logger: Logger, summary: SourceSummary, status: string, passLog: PassLog): void {
  for (const { unit, reason } of summary.abandoned)
    logger.warn({ event: 'file.rejected', file: unit, reason }, 'file rejected: it could not be read');
  for (const { unit, duplicateOf } of summary.skipped)
    logger.info(
      { event: 'file.duplicate', file: unit, duplicateOf: duplicateOf.name },
      'file already synced as it is: archived without syncing',
    );
  const ignored = summary.ignored ?? [];
  if (ignored.length > 0)
    logger.warn(
      { event: 'files.ignored', files: ignored },
      "files ignored: their names match no kind's pattern (files:)",
    );
  if (summary.waiting)
    logger.info(
      { event: 'files.waiting', files: summary.waiting.files, stableSeconds: summary.waiting.stableSeconds },
      'files still being written: left for a later pass',
    );
  const totals = { created: 0, updated: 0, unchanged: 0, failed: 0 };
  for (const c of Object.values(summary.counts)) {
    totals.created += c.created;
    totals.updated += c.updated;
    totals.unchanged += c.unchanged;
    totals.failed += c.failed;
  }
  const waits = passLog.rateLimitWaits;
  logger.info(
    {
      event: 'pass.end',
      status,
      ...totals,
      ...(waits.requests > 0 ? { rateLimitWaits: waits } : {}),
      ...(summary.cancelled ? { cancelledBy: summary.cancelled } : {}),
    },
    passEndMessage(status, summary),
  );
}

function passEndMessage(status: string, summary: SourceSummary): string {
  if (status === 'cancelled') return 'pass cancelled: stopped before its next batch';
  const read = Object.values(summary.counts).some((c) => c.created + c.updated + c.unchanged + c.failed > 0);
  if (!read && summary.waiting) return 'pass done: nothing read, files still being written';
  if (!read && summary.abandoned.length === 0) return 'pass done: nothing to read';
  return `pass done: ${status}`;
}
