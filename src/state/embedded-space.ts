import { statfs } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { AppError } from '../domain/errors.js';

/**
 * The embedded state DB on a full disk: PGlite does not fail cleanly there (it logs `No space left
 * on device` and spins in its WebAssembly, the process deaf to SIGTERM), so the daemon stops before
 * it gets there. `state.minFreeMb` (default 64: a WAL segment is 16 MB, a checkpoint writes the
 * touched pages again) must stay free in the data folder: checked when the DB opens and before each
 * batch of a pass. Below it, the pass stops like any outage (the file back in the drop folder, the
 * cursor where it was, exit 1) with the error below; the next pass with space resumes.
 */
export const DEFAULT_MIN_FREE_MB = 64;

/** Throws `STATE_DB_DISK_FULL` when less than `minFreeMb` is free on the disk of `dataDir`. */
export async function checkFreeSpace(dataDir: string, minFreeMb: number): Promise<void> {
  if (minFreeMb <= 0) return;
  let free: number | null = null;
  // A folder not made yet (a first run): the disk of the nearest folder above it that exists.
  for (let dir = resolve(dataDir); free === null; dir = dirname(dir)) {
    try {
      const stats = await statfs(dir);
      free = stats.bavail * stats.bsize;
    } catch {
      if (dirname(dir) === dir) return;
    }
  }
  const freeMb = free / 1024 / 1024;
  if (freeMb >= minFreeMb) return;
  throw new AppError(
    'STATE_DB_DISK_FULL',
    `disk full: ${freeMb.toFixed(1)} MB free in ${dataDir}, the embedded state DB needs ${minFreeMb} MB ` +
      '(state.minFreeMb): free space there; nothing was lost, the next pass resumes',
  );
}
