import { rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { numberedName } from './drop-names.js';
import { createExclusive, entryKind, lstatOrNull, moveNoClobber, placeCopy } from './exclusive-entries.js';
import type { ClaimStamp } from './file-change.js';

/**
 * How a claimed file leaves `.processing/` for `archive/<day>/` or `rejected/`, with its companion
 * (its report, its reason): the companion is put in place whole first, then the file is moved, so
 * a file is never settled beside a report cut short (a full disk) and, when anything fails, the file
 * stays claimed and the companion is taken away again.
 */

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/** A claimed file moved to `archive/<day>/` or `rejected/`. */
export interface PlacedFile {
  path: string;
  /** `<path><suffix>`, whole, when a companion was asked for. */
  companion: string | null;
  /**
   * The entries in the way that the source never makes (a symbolic link, a folder), relative to
   * the drop folder with what they are: left as they were, the file took the next free name.
   */
  planted: string[];
}

/** What goes beside the file: a finished file of `.processing/` (a report), or a short text (a reason). */
export type Companion = { suffix: string } & ({ from: string } | { text: string });

export interface PlaceProps {
  /** The drop folder: planted entries are named relative to it. */
  root: string;
  /** The claimed file, `.processing/<name>`. */
  from: string;
  /** Where it goes: `archive/<day>` or `rejected`. */
  dir: string;
  /** Its name there before numbering (`storedName`). */
  base: string;
  /** A folder on `dir`'s file system for copies under way (the working folder: `archive`, `rejected`). */
  scratchDir: string;
  /** What the file must still be as it leaves (see `file-change.ts`). */
  claimed: ClaimStamp;
  companion?: Companion | undefined;
}

/**
 * Moves the file into `dir` under the first numbered name (`invoices~2.csv`) free for the file and
 * its companion alike. The companion's name is taken first, exclusively: a name taken by anything,
 * a planted link included, is passed over, never written through.
 *
 * @throws FileChangedError when the file changed since it was claimed (it stays claimed); the
 * file system's error when the companion or the file cannot be put there (ENOSPC...)
 */
export async function placeFile(props: PlaceProps): Promise<PlacedFile> {
  const { root, from, dir, companion } = props;
  const planted: string[] = [];
  for (let n = 1; n < 10_000; n++) {
    const target = join(dir, numberedName(props.base, n));
    let made: string | null = null;
    if (companion !== undefined) {
      const path = `${target}${companion.suffix}`;
      try {
        await putCompanion(companion, path, props.scratchDir);
      } catch (error) {
        if (errnoOf(error) !== 'EEXIST') throw error;
        await notePlanted(root, path, planted);
        continue;
      }
      made = path;
    }
    try {
      await moveNoClobber(from, target, { expected: props.claimed, scratchDir: props.scratchDir });
      return { path: target, companion: made, planted };
    } catch (error) {
      // Ours, made a moment ago: rm removes the entry at the name, a link planted since included.
      if (made !== null) await rm(made, { force: true });
      if (errnoOf(error) !== 'EEXIST') throw error;
      await notePlanted(root, target, planted);
    }
  }
  throw new Error(`no free name for ${props.base} in ${dir}`);
}

/** Puts the companion at `path`, whole and flushed, never over anything there (EEXIST). */
async function putCompanion(companion: Companion, path: string, scratchDir: string): Promise<void> {
  if ('from' in companion) return placeCopy(companion.from, path, scratchDir);
  const handle = await createExclusive(path);
  try {
    await handle.writeFile(companion.text);
    await handle.sync();
    await handle.close();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(path, { force: true });
    throw error;
  }
}

/** A taken name is the same name settled before (a regular file), or an entry someone planted. */
async function notePlanted(root: string, path: string, planted: string[]): Promise<void> {
  const found = await lstatOrNull(path);
  if (found !== null && !found.isFile()) planted.push(`${relative(root, path)} (${entryKind(found)})`);
}
