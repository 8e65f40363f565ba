import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../domain/clock.js';
import { STALE_LEASE_MS } from './claim-lease.js';
import { DropFolder, type StaleClaim } from './drop-folder.js';

const RECOVERY_MESSAGES: Readonly<Record<StaleClaim['outcome'], string>> = {
  recovered: 'file left by a cut-short pass put back in the drop folder',
  blocked: 'file left by a cut-short pass blocked by a newer file of the same name',
  unsafe: 'an entry the source never makes sits in .processing (not a regular file): left untouched',
  leftover: 'file left by a cut-short pass (a spool, a report or a copy) removed',
};

/**
 * Puts back into the drop folder's root the files a cut-short pass left in `.processing/` (its
 * process was killed mid-file), so the pass that follows takes them again at once; the rows
 * already synced are recognised by the record map and cost nothing.
 *
 * The CSV source recovers such files by itself once their lease has not been touched for
 * `STALE_LEASE_MS` (5 min), since in general it cannot know whether their claimer is alive. The
 * worker knows: it calls this under the source lock, after a pass of the source that never
 * finished, so no live pass holds any of those files. It judges the leases as of a time past their
 * staleness, which makes every one of them stale. The worker reaches it through the source port
 * (`SourceFactory.recoverInterrupted`), without knowing that CSV files exist.
 *
 * @returns the names put back (a file whose name a newer drop took meanwhile stays where it is)
 */
export async function restoreClaimedFiles(
  config: { id: string; dropDir: string },
  logger: Logger,
  clock: Clock,
): Promise<string[]> {
  const pastStaleness = { now: () => new Date(clock.now().getTime() + STALE_LEASE_MS + 60_000) };
  const folder = new DropFolder(resolve(config.dropDir), pastStaleness);
  const restored: string[] = [];
  for (const { name, outcome } of await folder.recoverStaleClaims()) {
    if (outcome === 'recovered') restored.push(name);
    logger.warn({ sourceId: config.id, file: name, outcome }, RECOVERY_MESSAGES[outcome]);
  }
  return restored;
}
