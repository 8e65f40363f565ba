import type { Stats } from 'node:fs';
import { lstat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { printable } from '../../logging/printable-text.js';
import { CsvSourceError } from './errors.js';
import { entryKind, lstatOrNull } from './exclusive-entries.js';

/**
 * The working folders of the drop folder (`.processing`, `archive`, `archive/<day>`, `rejected`).
 * Whoever can write the drop folder can replace one with a symbolic link to a folder elsewhere,
 * and every file moved or written there would land outside the drop folder. So each is checked
 * with `lstat` to be a real folder, level by level from the drop folder down, right before it is
 * used: its real path is then inside the drop folder's.
 */

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/**
 * The working folder `root/parts[0]/parts[1]...`, each level created when missing and checked to
 * be a real folder (not a symbolic link): its path. `mkdir` never follows a link in the last
 * component (it fails with EEXIST), so a planted link is found by the `lstat` that follows.
 *
 * @throws CsvSourceError `CSV_DROP_DIR_UNSAFE` naming the entry and the fix
 */
export async function workingFolder(root: string, ...parts: string[]): Promise<string> {
  let path = root;
  for (const part of parts) {
    path = join(path, part);
    try {
      await mkdir(path);
    } catch (error) {
      if (errnoOf(error) !== 'EEXIST') throw error;
    }
    const stats = await lstat(path);
    if (!stats.isDirectory()) throw unsafeFolder(root, path, stats);
  }
  return path;
}

/**
 * Checks the working folders that exist (none is created): each must be a real folder.
 *
 * @throws CsvSourceError `CSV_DROP_DIR_UNSAFE`
 */
export async function checkWorkingFolders(root: string, names: readonly string[]): Promise<void> {
  for (const name of names) {
    const path = join(root, name);
    const stats = await lstatOrNull(path);
    if (stats !== null && !stats.isDirectory()) throw unsafeFolder(root, path, stats);
  }
}

function unsafeFolder(root: string, path: string, stats: Stats): CsvSourceError {
  const where = printable(path);
  return new CsvSourceError(
    'CSV_DROP_DIR_UNSAFE',
    `the drop folder's working folder ${where} is ${entryKind(stats)}, not a folder: files moved or ` +
      `written there could land outside the drop folder, so nothing was moved. Remove it (rm ${where}; ` +
      `the next pass creates a real folder) and check who can write ${printable(root)}`,
  );
}
